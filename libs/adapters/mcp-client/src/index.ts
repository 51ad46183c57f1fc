export {
  parseMcpServersFile,
  McpConfigError,
  MCP_SERVER_TIERS,
  MCP_SERVER_NAME_PATTERN,
  MCP_CONFIG_LIMITS,
  type McpServerConfig,
  type McpServersConfig,
  type McpServerTier,
} from './mcp-servers-config.js';
export {
  McpToolSource,
  DEFAULT_MCP_TIMEOUT_MS,
  DEFAULT_MCP_START_TIMEOUT_MS,
  DEFAULT_MCP_STDERR_LOG_BYTES,
  MCP_LISTING_MESSAGE_BYTES,
  type McpToolSourceOptions,
  type McpServerStatus,
} from './mcp-tool-source.js';
export { MCP_CALL_RESULT_SCHEMA, MCP_TOOL_LIMITS, sanitiseToolName, closeInputSchema } from './mcp-tool-schema.js';
export { MCP_DISCOVERY_BUDGET, type DiscoveryBounds } from './discovery-budget.js';
export { DEFAULT_BACKOFF, type BackoffPolicy } from './restart-backoff.js';
export { UPSTREAM_CLIENT_CAPABILITIES, MAX_RELAYED_PARAMS_BYTES, MAX_RELAYED_MESSAGE_CHARS, QUARANTINE_REASON, relayedMessagePrefix } from './caller-bridge.js';
