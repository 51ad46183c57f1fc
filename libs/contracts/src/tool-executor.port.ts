import type { ExecutorTier } from './executor-tiers.js';
import type { JsonObject, JsonValue } from './json.js';
import type { ProcessRunner } from './process-runner.port.js';
import type { ToolContext, ToolHandler } from './tool-handler.js';
import { token, type Token } from './token.js';

/** What a tier isolates and what it does not, in the words of the executor that provides it. */
export interface ExecutorIsolation {
  /**
   * One sentence for the tool descriptions agents and approvers read: where the tool's work runs
   * and what it can reach (e.g. "It runs in a sandbox that sees only the workspace …"). Tools
   * that run processes quote it instead of describing sandboxes themselves.
   */
  readonly summary: string;
}

/**
 * How one call ended, as its executor saw it. The executor owns the call's deadline, so this is
 * the only place a timeout is reported: a handler cannot produce `deadline` (whatever it throws
 * before the deadline, `ToolAbortedError` included, is `threw`), and the gateway needs no clock of
 * its own to tell a timeout from a failure. An error thrown once the deadline has passed (a
 * handler that held the event loop, so no timer could fire) is the deadline, by the executor's
 * own clock.
 */
export type ExecutionOutcome =
  /** The handler returned before the deadline and before the context's signal fired. */
  | { readonly status: 'returned'; readonly output: JsonValue }
  /** The handler threw (or rejected) before the deadline; `error` is what it threw, untouched. */
  | { readonly status: 'threw'; readonly error: unknown }
  /**
   * The deadline passed first. The handler's signal was aborted, every process it started through
   * `ctx.process` was told to stop, and whatever the handler returns or throws later is discarded.
   */
  | { readonly status: 'deadline'; readonly timeoutMs: number }
  /** The context's signal (the caller going away) fired first; the handler's signal was aborted too. */
  | { readonly status: 'aborted' };

/**
 * Runs a tool handler at a sandbox tier and owns the call's deadline. Tier 0 runs the handler
 * in-process; process tiers also hand the handler a `ProcessRunner` (in `ctx.process`) so every
 * process the tool starts is isolated at that tier and stopped with the call. Adding a tier is
 * adding an adapter (and its line in `EXECUTOR_TIERS`); every adapter passes `testExecutor`.
 */
export interface ToolExecutor {
  /** The tier this executor provides; a manifest's `tier` picks the executor by it. */
  readonly tier: ExecutorTier;
  /** What this tier isolates and what it does not, for the descriptions of the tools it runs. */
  readonly isolation: ExecutorIsolation;
  /** Resolves if the tier can run on this machine; rejects with an operator-readable reason. */
  check(): Promise<void>;
  /** The process runner of this tier, or undefined at tier 0. */
  readonly processes?: ProcessRunner;
  /**
   * Calls the handler and settles at the latest when `timeoutMs` passes, whatever the handler
   * does: at the deadline it aborts the handler's signal (which also stops its processes) and
   * resolves `deadline` without waiting for the handler. A context whose signal has already
   * fired resolves `aborted` without calling the handler. Never rejects for anything the handler
   * does; rejects (`RangeError`) only for a `timeoutMs` that is not a positive number.
   */
  execute(handler: ToolHandler, args: JsonObject, ctx: ToolContext, timeoutMs: number): Promise<ExecutionOutcome>;
}
/** The executors of the tiers this server runs (tier 0 always; a process tier only if its `check()` passed), one per tier. */
export const ToolExecutorsToken: Token<readonly ToolExecutor[]> = token('ToolExecutors');
