import type { JsonObject, JsonValue } from './json.js';
import type { ExecutorTier } from './executor-tiers.js';
import type { ProcessRunner } from './process-runner.port.js';
import type { ToolContext, ToolHandler } from './tool-handler.js';
import { token, type Token } from './token.js';

/**
 * Runs a tool handler at a sandbox tier with a deadline. Tier 0 runs the handler in-process;
 * process tiers also hand the handler a `ProcessRunner` (in `ctx.process`) so every process the
 * tool starts is isolated at that tier. Adding a tier is adding an adapter.
 */
export interface ToolExecutor {
  readonly tier: ExecutorTier;
  /** Resolves if the tier can run on this machine; rejects with an operator-readable reason. */
  check(): Promise<void>;
  /** The process runner of this tier, or undefined at tier 0. */
  readonly processes?: ProcessRunner;
  /**
   * Calls the handler; rejects with `ToolAbortedError` when `timeoutMs` passes (and aborts the
   * context's signal so the handler can stop).
   */
  execute(handler: ToolHandler, args: JsonObject, ctx: ToolContext, timeoutMs: number): Promise<JsonValue>;
}
export const ToolExecutorsToken: Token<readonly ToolExecutor[]> = token('ToolExecutors');
