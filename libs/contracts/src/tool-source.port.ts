import type { ToolDefinition } from './tool-handler.js';

/**
 * A source of tools that can change at run time (an MCP server's tool list). The registry asks
 * it for its tools whenever it lists or looks one up, so a restarted source's new list is seen.
 */
export interface ToolSource {
  /** The source's name, as its tools' provenance says it (`mcp:<name>`). */
  readonly name: string;
  /** The tools the source offers now. */
  tools(): readonly ToolDefinition[];
}
