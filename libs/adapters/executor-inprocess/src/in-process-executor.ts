import {
  ToolAbortedError,
  type ExecutionOutcome,
  type ExecutorIsolation,
  type JsonObject,
  type ToolContext,
  type ToolExecutor,
  type ToolHandler,
} from '@toolgate/contracts';

/** setTimeout clamps larger delays to 1 ms; a longer deadline is treated as this one. */
const MAX_TIMER_MS = 2_147_483_647;

/** Outcomes that carry nothing of the call, shared so the hot path allocates none. */
const ABORTED: ExecutionOutcome = Object.freeze({ status: 'aborted' });

/**
 * Tier 0: runs the handler in the gateway's own process. No isolation beyond what the handler
 * is written to do, so only first-party tools that touch nothing outside their arguments (or only
 * what the context hands them) belong here. This executor owns the call's deadline and enforces
 * it even on a handler that ignores its signal: the returned promise resolves `deadline` at the
 * deadline and the handler's late result is discarded.
 */
export class InProcessExecutor implements ToolExecutor {
  readonly tier = 'inprocess' as const;
  readonly isolation: ExecutorIsolation = {
    summary: "It runs inside the gateway's own process with no isolation: it shares the server's memory, files and network (tier 0).",
  };

  /** Tier 0 needs nothing from the machine. */
  async check(): Promise<void> {}

  execute(handler: ToolHandler, args: JsonObject, ctx: ToolContext, timeoutMs: number): Promise<ExecutionOutcome> {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      return Promise.reject(new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`));
    }
    if (ctx.signal.aborted) return Promise.resolve(ABORTED);
    return new Promise<ExecutionOutcome>((resolve) => new InProcessRun(handler, args, ctx, timeoutMs, resolve));
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
  readonly #started = performance.now();

  constructor(
    handler: ToolHandler,
    args: JsonObject,
    private readonly ctx: ToolContext,
    private readonly timeoutMs: number,
    private readonly resolve: (outcome: ExecutionOutcome) => void,
  ) {
    this.#timer = setTimeout(onDeadline, Math.min(timeoutMs, MAX_TIMER_MS), this);
    // `this` as the listener: its handleEvent runs when the caller's signal fires.
    ctx.signal.addEventListener('abort', this, { once: true });
    const handlerCtx = withLazySignal(ctx, this);
    // Through a promise so a handler that throws synchronously is a rejection, not a crash.
    Promise.resolve()
      .then(() => handler.invoke(args, handlerCtx))
      .then(
        (output) => this.settle({ status: 'returned', output }),
        // A handler that held the event loop past its deadline kept the timer from firing; an
        // error it throws then is the deadline's (its own clock, not the error's text, says so).
        (error: unknown) => (performance.now() - this.#started >= this.timeoutMs ? this.deadline() : this.settle({ status: 'threw', error })),
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
    this.abort(new ToolAbortedError('the call was aborted'), ABORTED);
  }

  deadline(): void {
    this.abort(new ToolAbortedError(`timed out after ${this.timeoutMs} ms`), { status: 'deadline', timeoutMs: this.timeoutMs });
  }

  /** Stops the handler (its signal) and reports `outcome`, unless the call already settled. */
  abort(reason: ToolAbortedError, outcome: ExecutionOutcome): void {
    if (this.#settled) return;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
    this.settle(outcome);
  }

  /** The first outcome wins; whatever the handler does after it is discarded. */
  settle(outcome: ExecutionOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.ctx.signal.removeEventListener('abort', this);
    this.resolve(outcome);
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
