import { ToolAbortedError, ToolError, type CallerRequestKind, type CallerRequests, type InvokeOptions, type JsonObject, type ProgressUpdate } from '@toolgate/contracts';

/** Progress updates relayed per second at most; the rest wait for the next slot, and only the newest is kept. */
export const PROGRESS_PER_SECOND = 10;
/** Longest progress message relayed, in characters. */
export const PROGRESS_MESSAGE_CHARS = 200;

const PROGRESS_GAP_MS = 1000 / PROGRESS_PER_SECOND;

/** `ToolError` reasons with which a face refuses a request before its client sees it. */
const REFUSAL_REASONS: ReadonlySet<string> = new Set(['RELAY_REFUSED', 'RELAY_LIMIT', 'RELAY_BAD_REQUEST']);

/** Counts of one kind of caller request, for the call's audit record. */
interface RequestCounts {
  asked: number;
  answered: number;
  failed: number;
  refused: number;
  refusedWhy?: string;
}

/**
 * What a call relays between its tool and its caller while it runs: progress, rate-limited and
 * flattened, and the requests the caller declared it can answer. Everything stops when the call
 * ends ({@link end}): a late progress update is dropped, a late request refused, and a request
 * still waiting for its answer aborted, so nothing of one call reaches its caller after its
 * result. The counts go into the call's audit record ({@link summary}).
 */
export class CallRelay {
  /** The tool's view: what it hands its upstream's progress and requests to. */
  readonly progress: ((update: ProgressUpdate) => void) | undefined;
  readonly caller: CallerRequests;
  #ended = false;
  #lastSentAt = Number.NEGATIVE_INFINITY;
  #lastProgress = Number.NEGATIVE_INFINITY;
  #waiting: ProgressUpdate | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #relayed = 0;
  #dropped = 0;
  readonly #counts: Record<CallerRequestKind, RequestCounts> = {
    elicitation: { asked: 0, answered: 0, failed: 0, refused: 0 },
    sampling: { asked: 0, answered: 0, failed: 0, refused: 0 },
  };
  readonly #open = new Set<AbortController>();

  constructor(
    private readonly options: Pick<InvokeOptions, 'progress' | 'caller'>,
    private readonly now: () => number = () => performance.now(),
  ) {
    const sink = options.progress;
    this.progress = sink ? (update) => this.#onProgress(sink, update) : undefined;
    const upstream = options.caller;
    const caller: CallerRequests = { refused: (kind, reason) => this.#refused(kind, reason) };
    if (upstream?.elicit) {
      const elicit = upstream.elicit.bind(upstream);
      (caller as { elicit?: CallerRequests['elicit'] }).elicit = (params, signal) => this.#ask('elicitation', elicit, params, signal);
    }
    if (upstream?.sample) {
      const sample = upstream.sample.bind(upstream);
      (caller as { sample?: CallerRequests['sample'] }).sample = (params, signal) => this.#ask('sampling', sample, params, signal);
    }
    this.caller = caller;
  }

  /**
   * The call is over: the newest progress update still waiting for its slot goes out now (the
   * last one always reaches the caller), then nothing more does, and open requests are aborted.
   */
  end(): void {
    if (this.#ended) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting && this.options.progress) this.#send(this.options.progress, waiting);
    this.#ended = true;
    for (const controller of this.#open) controller.abort(new ToolAbortedError('the call is over'));
    this.#open.clear();
  }

  /** What was relayed, for the audit record's `detail`; undefined when nothing was. */
  summary(): string | undefined {
    const parts: string[] = [];
    if (this.#relayed > 0 || this.#dropped > 0) parts.push(`progress ${this.#relayed}${this.#dropped > 0 ? ` (${this.#dropped} dropped)` : ''}`);
    for (const kind of ['elicitation', 'sampling'] as const) {
      const c = this.#counts[kind];
      if (c.asked === 0 && c.refused === 0) continue;
      const bits = [`${c.answered} answered`];
      if (c.failed > 0) bits.push(`${c.failed} failed`);
      if (c.refused > 0) bits.push(`${c.refused} refused${c.refusedWhy ? ` (${c.refusedWhy})` : ''}`);
      parts.push(`${kind} ${c.asked + c.refused}: ${bits.join(', ')}`);
    }
    return parts.length === 0 ? undefined : `relayed to the caller: ${parts.join('; ')}`;
  }

  #onProgress(sink: (update: ProgressUpdate) => void, update: ProgressUpdate): void {
    const clean = cleanProgress(update);
    // A late, malformed or non-increasing update is dropped: MCP requires progress to grow.
    if (this.#ended || clean === undefined || clean.progress <= this.#lastProgress) {
      this.#dropped += 1;
      return;
    }
    this.#lastProgress = clean.progress;
    const wait = this.#lastSentAt + PROGRESS_GAP_MS - this.now();
    if (wait <= 0 && this.#waiting === undefined) {
      this.#send(sink, clean);
      return;
    }
    // Only the newest update waits for the next slot; the one it replaces is dropped.
    if (this.#waiting !== undefined) this.#dropped += 1;
    this.#waiting = clean;
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        const next = this.#waiting;
        this.#waiting = undefined;
        if (next && !this.#ended) this.#send(sink, next);
      }, Math.max(0, wait));
      this.#timer.unref?.();
    }
  }

  #send(sink: (update: ProgressUpdate) => void, update: ProgressUpdate): void {
    this.#lastSentAt = this.now();
    this.#relayed += 1;
    try {
      sink(update);
    } catch {
      // A face that cannot deliver progress never fails the call.
    }
  }

  async #ask(kind: CallerRequestKind, forward: (params: JsonObject, signal: AbortSignal) => Promise<JsonObject>, params: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    if (this.#ended) {
      this.#refused(kind, 'the call was over');
      throw new ToolError(`the ${kind} request came after the call was over`, 'RELAY_AFTER_CALL');
    }
    const counts = this.#counts[kind];
    counts.asked += 1;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal.reason);
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener('abort', onAbort, { once: true });
    this.#open.add(controller);
    try {
      const answer = await forward(params, controller.signal);
      // An answer that arrives after the call ended is not handed to anyone.
      if (this.#ended || controller.signal.aborted) throw new ToolAbortedError('the call is over');
      counts.answered += 1;
      return answer;
    } catch (error) {
      // A face that refused the request before its client saw it (a mode the client did not
      // declare, a cap reached) says so by reason: a refusal, not a failed answer.
      if (error instanceof ToolError && REFUSAL_REASONS.has(error.reason)) {
        counts.asked -= 1;
        this.#refused(kind, error.message);
      } else counts.failed += 1;
      throw error;
    } finally {
      this.#open.delete(controller);
      signal.removeEventListener('abort', onAbort);
    }
  }

  #refused(kind: CallerRequestKind, reason: string): void {
    const counts = this.#counts[kind];
    counts.refused += 1;
    counts.refusedWhy ??= flatten(reason, 120);
  }
}

/** Flattens control characters and whitespace runs and caps the length (text from an upstream). */
function flatten(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The update as relayed: finite non-negative numbers, a total no smaller than the progress, a capped message. */
function cleanProgress(update: ProgressUpdate): ProgressUpdate | undefined {
  if (typeof update !== 'object' || update === null) return undefined;
  const { progress, total, message } = update;
  if (typeof progress !== 'number' || !Number.isFinite(progress) || progress < 0) return undefined;
  const cleanTotal = typeof total === 'number' && Number.isFinite(total) && total >= progress ? total : undefined;
  const cleanMessage = typeof message === 'string' ? flatten(message, PROGRESS_MESSAGE_CHARS) : undefined;
  return {
    progress,
    ...(cleanTotal === undefined ? {} : { total: cleanTotal }),
    ...(cleanMessage ? { message: cleanMessage } : {}),
  };
}
