import {
  ToolAbortedError,
  type JsonObject,
  type JsonValue,
  type ToolContext,
  type ToolExecutor,
  type ToolHandler,
} from '@toolgate/contracts';

/** setTimeout clamps larger delays to 1 ms; a longer deadline is treated as this one. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Tier 0: runs the handler in the gateway's own process. No isolation beyond what the handler
 * is written to do, so only first-party tools that touch nothing outside their arguments (or only
 * what the context hands them) belong here. The deadline is enforced even on a handler that
 * ignores its signal: the returned promise rejects at the deadline and the handler's late result
 * is discarded.
 */
export class InProcessExecutor implements ToolExecutor {
  readonly tier = 'inprocess' as const;

  /** Tier 0 needs nothing from the machine. */
  async check(): Promise<void> {}

  execute(handler: ToolHandler, args: JsonObject, ctx: ToolContext, timeoutMs: number): Promise<JsonValue> {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      return Promise.reject(new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`));
    }
    if (ctx.signal.aborted) return Promise.reject(new ToolAbortedError('the call was aborted before it started'));

    return new Promise<JsonValue>((resolve, reject) => {
      // The handler sees one signal that fires at the deadline or when the caller's signal does.
      const controller = new AbortController();
      let settled = false;
      const settle = (finish: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ctx.signal.removeEventListener('abort', onCallerAbort);
        finish();
      };
      const onCallerAbort = (): void => {
        const error = new ToolAbortedError('the call was aborted');
        controller.abort(error);
        settle(() => reject(error));
      };
      const timer = setTimeout(() => {
        const error = new ToolAbortedError(`timed out after ${timeoutMs} ms`);
        controller.abort(error);
        settle(() => reject(error));
      }, Math.min(timeoutMs, MAX_TIMER_MS));
      ctx.signal.addEventListener('abort', onCallerAbort, { once: true });

      // Through a promise so a handler that throws synchronously is a rejection, not a crash.
      Promise.resolve()
        .then(() => handler.invoke(args, { ...ctx, signal: controller.signal }))
        .then(
          (output) => settle(() => resolve(output)),
          (error: unknown) => settle(() => reject(error)),
        );
    });
  }
}
