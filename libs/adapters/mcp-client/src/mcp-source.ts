import type { McpToolSource } from './mcp-tool-source.js';
import type { McpRemoteToolSource } from './remote-tool-source.js';

/** An MCP server as a tool source: one Toolgate started over stdio, or a remote one over Streamable HTTP. */
export type McpSource = McpToolSource | McpRemoteToolSource;
