import type { HttpClient } from './http-client.port.js';
import type { JsonObject, JsonValue } from './json.js';
import type { Principal } from './principal.js';
import type { ProcessRunner } from './process-runner.port.js';
import type { ToolManifest } from './tool-manifest.js';

/** What a handler gets besides its arguments: nothing more than its manifest allows. */
export interface ToolContext {
  /** Fires at the deadline or when the caller goes away; handlers must stop promptly. */
  readonly signal: AbortSignal;
  /** Who made the call, as authenticated by the gateway. */
  readonly principal: Principal;
  /** Absolute path of the tenant's workspace (`<workspace root>/<tenant>`). */
  readonly workspaceRoot: string;
  /** Correlates the call with its audit records. */
  readonly callId: string;
  /** Guarded HTTP client limited to the hosts the egress gate passed; only with `network` permission. */
  readonly http?: HttpClient;
  /** Process runner of the tool's tier; absent at tier 0. */
  readonly process?: ProcessRunner;
  /**
   * Reports how far the call is, to a caller that asked for progress; absent otherwise. The
   * gateway rate-limits what it relays (the last update always goes), caps and flattens the
   * message, and drops updates once the call is over, so a handler may call it freely.
   */
  readonly progress?: (update: ProgressUpdate) => void;
  /**
   * Requests the tool may put to the calling client (an upstream MCP server's elicitation or
   * sampling); absent when the caller can answer none. Each member is present only when the
   * calling client declared that capability; a request after the call ended is refused.
   */
  readonly caller?: CallerRequests;
}

/** One progress report of a running call (MCP `notifications/progress`, without its token). */
export interface ProgressUpdate {
  /** Work done so far; grows with every update. */
  readonly progress: number;
  /** Work in total, when known. */
  readonly total?: number;
  /** A short human-readable note; the gateway caps and flattens it before relaying. */
  readonly message?: string;
}

/**
 * What a running tool may ask of the client that made the call, each relayed and answered
 * within the call. Params and results are MCP-shaped JSON (`elicitation/create`,
 * `sampling/createMessage`); they come from and go to untrusted parties and are checked by the
 * side that relays them.
 */
export interface CallerRequests {
  /** Asks the calling client's user for input (MCP `elicitation/create`); rejects when refused, aborted or over. */
  elicit?(params: JsonObject, signal: AbortSignal): Promise<JsonObject>;
  /** Asks the calling client's model for a message (MCP `sampling/createMessage`); rejects when refused, aborted or over. */
  sample?(params: JsonObject, signal: AbortSignal): Promise<JsonObject>;
  /**
   * Tells the gateway the tool refused a request of its upstream itself (the caller lacks the
   * capability, or the request was malformed or oversized), so the call's audit can say so.
   */
  refused?(kind: CallerRequestKind, reason: string): void;
}

/** The kinds of request a tool may relay to its caller. */
export type CallerRequestKind = 'elicitation' | 'sampling';

/**
 * What a face passes with a call besides the request: the caller's cancellation, and what the
 * caller can receive or answer while the call runs.
 */
export interface InvokeOptions {
  /** Fires when the caller goes away or cancels; the call is then aborted. */
  readonly signal?: AbortSignal;
  /** Present when the caller asked for progress (an MCP progress token); called with what the gateway relays. */
  readonly progress?: (update: ProgressUpdate) => void;
  /** The requests the calling client declared it can answer. */
  readonly caller?: CallerRequests;
}

/** The code of a tool. Throw `ToolError` for failures the caller should read. */
export interface ToolHandler {
  /**
   * Runs the tool on arguments the gateway already checked against the manifest's input schema;
   * the output is checked against the output schema before the caller sees it.
   */
  invoke(args: JsonObject, ctx: ToolContext): Promise<JsonValue>;
}

/** A tool as registered: its manifest and its handler. */
export interface ToolDefinition {
  /** What the tool is and may do: the gateway's only source of truth about it. */
  readonly manifest: ToolManifest;
  /** Its code, run by the executor of the manifest's tier. */
  readonly handler: ToolHandler;
  /**
   * The definition exactly as its source declared it, before the adapter made it safe (for an
   * MCP tool: the server's `name`, `title`, `description`, `inputSchema`, `outputSchema`,
   * `annotations` and `execution`). It is what the gateway pins a source's tool by: a change to
   * any of it holds the tool until an operator accepts it. Absent for first-party tools, whose
   * manifest (without `integrity`) is what is digested.
   */
  readonly declared?: JsonObject;
}
