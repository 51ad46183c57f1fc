/**
 * The MCP definition of a tool lives with the gateway's tool exports (ADR 0053), so `/mcp`
 * `tools/list` and `tools.list({ format: 'mcp' })` are one code path; the face uses it from here.
 */
export { findVisibleTool, toMcpTool, toolHints, toolTitle, type McpToolDefinition, type ToolHints } from '@toolgate/gateway';
