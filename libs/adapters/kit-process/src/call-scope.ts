import { resolve } from 'node:path';
import {
  ToolAbortedError,
  ToolError,
  type ExecutionOutcome,
  type JsonObject,
  type ProcessRunner,
  type ToolContext,
  type ToolHandler,
} from '@toolgate/contracts';

/** setTimeout clamps larger delays to 1 ms; a longer deadline is treated as this one. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The runner a handler sees in `ctx.process`: bound to its call. Every process gets the call's
 * signal, so the deadline kills it even when the handler forgets to pass the signal on, and it
 * may only run in the call's own workspace.
 */
export function scopeRunner(runner: ProcessRunner, workspaceRoot: string, signal: AbortSignal): ProcessRunner {
  const sameWorkspace = (root: string): void => {
    if (typeof root !== 'string' || resolve(root) !== resolve(workspaceRoot)) {
      throw new ToolError("a process may only run in the call's own workspace", 'WORKSPACE_MISMATCH');
    }
  };
  return {
    run(spec, limits) {
      try {
        sameWorkspace(limits.workspaceRoot);
      } catch (error) {
        return Promise.reject(error);
      }
      return runner.run(spec, { ...limits, signal: limits.signal ? AbortSignal.any([limits.signal, signal]) : signal });
    },
    prepare(spec, root) {
      sameWorkspace(root);
      return runner.prepare(spec, root);
    },
  };
}

/**
 * Calls a handler with the tier's runner in `ctx.process` and owns the call's deadline, with
 * the same semantics as the in-process tier: resolves `deadline` when `timeoutMs` passes and
 * `aborted` when the caller's signal fires, aborting the handler's signal either way (which also
 * stops every process the handler started through `ctx.process`) and discarding whatever the
 * handler does afterwards. A process's own `timeoutMs` (what a tool asks of one process) is the
 * supervisor's; the call's deadline reaches processes only through this signal.
 */
export function executeWithProcesses(
  runner: ProcessRunner,
  handler: ToolHandler,
  args: JsonObject,
  ctx: ToolContext,
  timeoutMs: number,
): Promise<ExecutionOutcome> {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    return Promise.reject(new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`));
  }
  if (ctx.signal.aborted) return Promise.resolve({ status: 'aborted' });

  return new Promise<ExecutionOutcome>((resolvePromise) => {
    const started = performance.now();
    const controller = new AbortController();
    let settled = false;
    // The first outcome wins; the handler's late result or error is discarded.
    const settle = (outcome: ExecutionOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onCallerAbort);
      resolvePromise(outcome);
    };
    const stop = (reason: ToolAbortedError, outcome: ExecutionOutcome): void => {
      if (settled) return;
      controller.abort(reason);
      settle(outcome);
    };
    const onCallerAbort = (): void => stop(new ToolAbortedError('the call was aborted'), { status: 'aborted' });
    const onDeadline = (): void => stop(new ToolAbortedError(`timed out after ${timeoutMs} ms`), { status: 'deadline', timeoutMs });
    const timer = setTimeout(onDeadline, Math.min(timeoutMs, MAX_TIMER_MS));
    ctx.signal.addEventListener('abort', onCallerAbort, { once: true });

    const scoped: ToolContext = {
      ...ctx,
      signal: controller.signal,
      process: scopeRunner(runner, ctx.workspaceRoot, controller.signal),
    };
    // Through a promise so a handler that throws synchronously is a rejection, not a crash.
    Promise.resolve()
      .then(() => handler.invoke(args, scoped))
      .then(
        (output) => settle({ status: 'returned', output }),
        // A handler that held the event loop past its deadline kept the timer from firing; an
        // error it throws then is the deadline's, and its processes are stopped with it.
        (error: unknown) => (performance.now() - started >= timeoutMs ? onDeadline() : settle({ status: 'threw', error })),
      );
  });
}
