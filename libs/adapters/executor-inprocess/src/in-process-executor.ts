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
    return new Promise<JsonValue>((resolve, reject) => new InProcessRun(handler, args, ctx, timeoutMs, resolve, reject));
  }
}

/**
 * One call: its deadline timer, its link to the caller's signal and the handler's own signal.
 * A class rather than closures because this is the hot path of every tier-0 call.
 */
class InProcessRun {
  #controller: AbortController | undefined;
  #abortReason: ToolAbortedError | undefined;
  #settled = false;
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(
    handler: ToolHandler,
    args: JsonObject,
    private readonly ctx: ToolContext,
    private readonly timeoutMs: number,
    private readonly resolve: (output: JsonValue) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.#timer = setTimeout(onDeadline, Math.min(timeoutMs, MAX_TIMER_MS), this);
    // `this` as the listener: its handleEvent runs when the caller's signal fires.
    ctx.signal.addEventListener('abort', this, { once: true });
    const handlerCtx = withLazySignal(ctx, this);
    // Through a promise so a handler that throws synchronously is a rejection, not a crash.
    Promise.resolve()
      .then(() => handler.invoke(args, handlerCtx))
      .then(
        (output) => this.settle(true, output),
        (error: unknown) => this.settle(false, error),
      );
  }

  handlerSignal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortReason) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  /** The caller's signal fired. */
  handleEvent(): void {
    this.abort(new ToolAbortedError('the call was aborted'));
  }

  deadline(): void {
    this.abort(new ToolAbortedError(`timed out after ${this.timeoutMs} ms`));
  }

  abort(reason: ToolAbortedError): void {
    if (this.#settled) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
    this.settle(false, reason);
  }

  settle(ok: boolean, value: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.ctx.signal.removeEventListener('abort', this);
    if (ok) this.resolve(value as JsonValue);
    else this.reject(value);
  }
}

function onDeadline(run: InProcessRun): void {
  run.deadline();
}

/**
 * The handler's context. Its signal fires at the deadline or with the caller's, and is built only
 * when the handler first reads it: an AbortSignal costs more than a whole fast tool call, and a
 * handler that never looks at its signal cannot react to it anyway. An own, enumerable getter,
 * so a handler that spreads its context still gets the signal.
 */
function withLazySignal(ctx: ToolContext, run: InProcessRun): ToolContext {
  return {
    ...ctx,
    get signal() {
      return run.handlerSignal();
    },
  };
}
