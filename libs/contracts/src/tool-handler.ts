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
}
