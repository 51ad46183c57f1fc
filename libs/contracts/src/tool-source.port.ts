import type { ToolDefinition } from './tool-handler.js';

/**
 * Where a source is: `starting` before its first listing, `up` while it answers, `restarting`
 * after it went away (a new attempt is scheduled), `failed` when it cannot be started and no
 * attempt is scheduled, `stopped` once closed for good. Only an `up` source's tools are offered.
 */
export type ToolSourceState = 'starting' | 'up' | 'restarting' | 'failed' | 'stopped';

/** What a source says about itself, for health, readiness and `tools.list` metadata. */
export interface ToolSourceStatus {
  /** Where the source is now; see {@link ToolSourceState}. */
  readonly state: ToolSourceState;
  /** How the gateway reaches the source (an MCP server over `stdio` or Streamable `http`). */
  readonly transport: 'stdio' | 'http';
  /** Number of the latest restart or reconnection attempt (0 if it never had to restart). */
  readonly attempt: number;
  /** Tools the source offers now, after its own checks (the registry may still hold some back). */
  readonly accepted: number;
  /** Tools the server listed that the source left out (each reason is in the operator log). */
  readonly rejected: number;
  /** Epoch ms when the source entered `state`. */
  readonly since: number;
}

/**
 * A source of tools that can change at run time (an MCP server's tool list). The registry asks
 * it for its tools whenever it lists or looks one up, so a restarted source's new list is seen.
 */
export interface ToolSource {
  /** The source's name, as its tools' provenance says it (`mcp:<name>`). */
  readonly name: string;
  /** The tools the source offers now. */
  tools(): readonly ToolDefinition[];
  /**
   * Where the source is. Absent means always `up`. The registry offers the tools of a source
   * that is not `up` to nobody, and a call to one is refused naming the source's state.
   */
  status?(): ToolSourceStatus;
}
