import type { JsonObject } from './json.js';
import type { Principal } from './principal.js';

/** A tool call that ran and failed, as seen by listeners. */
export interface ToolFailure {
  readonly principal: Principal;
  readonly tool: string;
  readonly args: JsonObject;
  /** The sanitized message returned to the caller, with secrets redacted (`redactSecrets`). */
  readonly message: string;
  readonly at: number;
}

/**
 * Observes gateway outcomes after they are audited, e.g. to record known failures in the
 * knowledge graph. A listener that throws is ignored: it can never change a result.
 */
export interface GatewayListener {
  onToolFailure?(failure: ToolFailure): Promise<void>;
}
