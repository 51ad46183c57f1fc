export {
  parseMcpServersFile,
  McpConfigError,
  MCP_SERVER_TIERS,
  MCP_SERVER_NAME_PATTERN,
  MCP_CONFIG_LIMITS,
  type McpServerConfig,
  type McpRemoteServerConfig,
  type McpHeaderSource,
  type McpServersConfig,
  type McpServerTier,
} from './mcp-servers-config.js';
export {
  McpToolSource,
  DEFAULT_MCP_TIMEOUT_MS,
  DEFAULT_MCP_START_TIMEOUT_MS,
  DEFAULT_MCP_STDERR_LOG_BYTES,
  MCP_LISTING_MESSAGE_BYTES,
  DEFAULT_MCP_SERVER_LOG_CHARS,
  DEFAULT_MCP_RELIST_DELAY_MS,
  DEFAULT_MCP_RELIST_GAP_MS,
  type McpToolSourceOptions,
  type McpServerStatus,
} from './mcp-tool-source.js';
export { MCP_CALL_RESULT_SCHEMA, MCP_TOOL_LIMITS, BASE64_SUMMARY_CHARS, sanitiseToolName, closeInputSchema } from './mcp-tool-schema.js';
export { pinVersion, MAX_PINNED_VERSION_CHARS } from './pin-version.js';
export { MCP_LOG_LEVELS, SERVER_LOG_LIMITS, type OperatorLog, type OperatorLogLevel } from './server-log.js';
export { MCP_DISCOVERY_BUDGET, type DiscoveryBounds } from './discovery-budget.js';
export { DEFAULT_BACKOFF, type BackoffPolicy } from './restart-backoff.js';
export { MCP_RESULT_TOO_LARGE } from './oversized-message.js';
export { DEFAULT_MAX_MESSAGE_BYTES } from './process-group-stdio-transport.js';
export { UPSTREAM_CLIENT_CAPABILITIES, MAX_RELAYED_PARAMS_BYTES, MAX_RELAYED_MESSAGE_CHARS, QUARANTINE_REASON, relayedMessagePrefix } from './caller-bridge.js';
export {
  McpRemoteToolSource,
  DEFAULT_REMOTE_TIMEOUT_MS,
  DEFAULT_REMOTE_START_TIMEOUT_MS,
  DEFAULT_REMOTE_PING_INTERVAL_MS,
  type McpRemoteToolSourceOptions,
  type RemoteSourceLog,
} from './remote-tool-source.js';
export { RemoteHeaderError, readRemoteHeaders } from './remote-headers.js';
export type { McpSource } from './mcp-source.js';
