import { AsyncLocalStorage } from 'node:async_hooks';
import { ToolError, type HttpStreamResponse, type StreamingHttpClient } from '@toolgate/contracts';

/** What the SDK transport calls to reach the server (the WHATWG `fetch` shape). */
export type RemoteFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * One tool call as the connection's fetch sees it: every request the SDK sends while the call
 * runs (found through async context), so an oversized answer fails that call, a request that
 * could not be sent is known to be unsent, and the streams it opened end with it.
 */
export class RemoteCallScope {
  /** Set when an answer to this call's requests went over the per-message cap. */
  tooLarge = false;
  /** Requests of this call handed to the guarded client (or refused by this fetch before it). */
  started = 0;
  /** Requests of this call that reached the server (their headers came back). */
  answered = 0;
  /** Requests of this call that failed before anything reached the server. */
  unsent = 0;
  private readonly open = new Set<HttpStreamResponse>();
  private readonly stop = new AbortController();
  private readonly failure: Promise<never>;
  private fail!: (error: ToolError) => void;
  private ended = false;

  /** `maxMessageBytes`: a tighter cap for this scope's answers than the connection's (a tool listing). */
  constructor(readonly maxMessageBytes?: number) {
    this.failure = new Promise<never>((_, reject) => {
      this.fail = reject;
    });
    // Nobody may be racing the failure yet; it is observed through `failed`.
    this.failure.catch(() => undefined);
  }

  /** Rejects once an answer of this call went over the cap (raced against the call). */
  get failed(): Promise<never> {
    return this.failure;
  }

  /** Aborted once the call ended: a request of the call still waiting for headers stops too. */
  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** Ends every stream the call opened (a never-ending answer, a timed-out call). */
  end(): void {
    this.ended = true;
    this.stop.abort();
    for (const response of this.open) response.cancel();
    this.open.clear();
  }

  /**
   * True when the call sent requests and every one of them provably never left this process:
   * refused by this fetch or the guard, or its connection never opened. Any other failure
   * (an HTTP answer of any status, a reset, a timeout) may have reached the server.
   */
  get nothingSent(): boolean {
    return this.started > 0 && this.unsent === this.started && this.answered === 0;
  }

  /** True once the call ended: a request made later (a timer it started) is not the call's. */
  get over(): boolean {
    return this.ended;
  }

  /** @internal */
  opened(response: HttpStreamResponse): void {
    if (this.ended) response.cancel();
    else this.open.add(response);
  }

  /** @internal */
  closed(response: HttpStreamResponse): void {
    this.open.delete(response);
  }

  /** @internal */
  oversized(error: ToolError): void {
    this.tooLarge = true;
    this.fail(error);
  }
}

/** The scope of the call running now, if any (set by the source around `callTool`). */
export const remoteCallScope = new AsyncLocalStorage<RemoteCallScope>();

export interface RemoteFetchOptions {
  readonly http: StreamingHttpClient;
  /** The configured endpoint's origin: the only one requests go to (the headers are its credentials). */
  readonly origin: string;
  /** The server's configured name, for messages. */
  readonly server: string;
  /** Headers from the operator's files, read at this connection's start. */
  readonly headers: Readonly<Record<string, string>>;
  /** Largest JSON body or single SSE event accepted, in bytes. */
  readonly maxMessageBytes: number;
  /** Bound of connect and response headers for each request. */
  readonly headersTimeoutMs: number;
  /** Every HTTP status the server answers with (the source logs 401/403 for the operator). */
  readonly onStatus?: (status: number, method: string) => void;
  /** An answer outside any call went over the cap (the operator log). */
  readonly onOversized?: (message: string) => void;
  /** Ends every request of the connection (its close). */
  readonly signal: AbortSignal;
  /** What paces and filters the connection's incoming messages (one per connection). */
  readonly inbound?: RemoteInbound;
}

/** Incoming notifications admitted per second on one connection, and the burst above it. */
export const REMOTE_NOTIFICATIONS_PER_SECOND = 200;
export const REMOTE_NOTIFICATION_BURST = 1_000;
/** Longest stretch of one event-loop turn spent delivering a connection's messages, as for stdio. */
export const REMOTE_DELIVERY_SLICE_MS = 8;
const DROP_LOG_INTERVAL_MS = 10_000;

/**
 * One connection's incoming side: the delivery slices its streams share (a flood of events
 * cannot hold the event loop past {@link REMOTE_DELIVERY_SLICE_MS} per turn, so other callers
 * keep their answers) and the notification rate (a notification beyond it is dropped and
 * counted; the count reaches the operator at most once per 10 s).
 */
export class RemoteInbound {
  /** Notifications dropped over the rate, all told. */
  dropped = 0;
  /** Answers dropped because their id was not the request's of the stream that carried them. */
  crossed = 0;
  private tokens = REMOTE_NOTIFICATION_BURST;
  private refilledAt = performance.now();
  private sliceStart = 0;
  private inSlice = false;
  private droppedUnlogged = 0;
  private crossedUnlogged = 0;
  private droppedLoggedAt = -Infinity;
  private crossedLoggedAt = -Infinity;

  constructor(
    private readonly server: string,
    private readonly log: (message: string) => void,
  ) {}

  /** Resolves at once inside a slice with time left, else after the event loop has turned. */
  async turn(): Promise<void> {
    const now = performance.now();
    if (this.inSlice && now - this.sliceStart < REMOTE_DELIVERY_SLICE_MS) return;
    if (this.inSlice) await new Promise<void>((resolve) => setImmediate(resolve));
    this.inSlice = true;
    this.sliceStart = performance.now();
    setImmediate(() => {
      this.inSlice = false;
    });
  }

  /** True while the slice of this turn has time left. */
  get sliceLeft(): boolean {
    return performance.now() - this.sliceStart < REMOTE_DELIVERY_SLICE_MS;
  }

  /** @internal One notification arrived: true when the rate admits it. */
  admitNotification(): boolean {
    const now = performance.now();
    this.tokens = Math.min(REMOTE_NOTIFICATION_BURST, this.tokens + ((now - this.refilledAt) * REMOTE_NOTIFICATIONS_PER_SECOND) / 1000);
    this.refilledAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.dropped += 1;
    this.droppedUnlogged += 1;
    if (this.due('dropped')) {
      this.log(`MCP server '${this.server}' (remote): dropped ${this.droppedUnlogged} notification(s) over ${REMOTE_NOTIFICATIONS_PER_SECOND}/s (counted, logged at most every ${DROP_LOG_INTERVAL_MS / 1000} s)`);
      this.droppedUnlogged = 0;
    }
    return false;
  }

  /** @internal An answer for another request than its stream's was dropped. */
  crossedAnswer(): void {
    this.crossed += 1;
    this.crossedUnlogged += 1;
    if (this.due('crossed')) {
      this.log(`MCP server '${this.server}' (remote): dropped ${this.crossedUnlogged} answer(s) carrying another request's id than the request of their stream (counted, logged at most every ${DROP_LOG_INTERVAL_MS / 1000} s)`);
      this.crossedUnlogged = 0;
    }
  }

  /** True when a line of this kind may be logged now (each kind at most once per interval). */
  private due(kind: 'dropped' | 'crossed'): boolean {
    const now = performance.now();
    const last = kind === 'dropped' ? this.droppedLoggedAt : this.crossedLoggedAt;
    if (now - last < DROP_LOG_INTERVAL_MS) return false;
    if (kind === 'dropped') this.droppedLoggedAt = now;
    else this.crossedLoggedAt = now;
    return true;
  }
}

/**
 * The guard's reasons for a request that provably never left: refused before a connection was
 * dialed (address, name, URL, request) or a TCP connect the peer refused (ECONNREFUSED comes
 * only from a SYN answered with RST). `HOST_UNREACHABLE` is not one: an established connection
 * can report it too, after its request was written. `TIMEOUT` covers the connect and the
 * answer alike, so it is not one either.
 */
const UNSENT = new Set(['EGRESS_DENIED', 'DNS_FAILED', 'CONNECTION_REFUSED', 'INVALID_URL', 'INVALID_REQUEST']);

/**
 * The `fetch` the SDK transport gets: every request goes through the guarded client (addresses
 * checked, the checked address dialed), with the configured headers; a redirect is refused, not
 * followed; each JSON body and each SSE event is bounded by `maxMessageBytes`.
 */
export function remoteFetch(options: RemoteFetchOptions): RemoteFetch {
  return async (input, init) => {
    const current = remoteCallScope.getStore();
    // A request made in an ended call's context (a resumption its timer scheduled) is not sent:
    // with only the connection's signal it would outlive the call's deadline.
    if (current?.over) throw new ToolError(`MCP server '${options.server}': a request of a call that has ended was not sent`, 'ABORTED');
    const scope = current;
    // Counted before any check, so a call is "not sent" only when each of its requests was seen failing unsent.
    if (scope) scope.started += 1;
    const unsent = (error: ToolError): ToolError => {
      if (scope) scope.unsent += 1;
      return error;
    };
    const url = typeof input === 'string' ? input : input.href;
    // The SDK may build other URLs (OAuth metadata a 401 names); the credentials go to the configured origin only.
    if (originOf(url) !== options.origin) {
      throw unsent(new ToolError(`MCP server '${options.server}': a request to another origin than its URL's was refused`, 'EGRESS_DENIED'));
    }
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'POST' && method !== 'DELETE') {
      throw unsent(new ToolError(`the MCP transport asked for ${method.slice(0, 16)}, which a remote source does not send`, 'INVALID_REQUEST'));
    }
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string') throw unsent(new ToolError('the MCP transport sent a body that is not text', 'INVALID_REQUEST'));
    const headers = { ...headerRecord(init?.headers), ...options.headers };
    const signal = AbortSignal.any([options.signal, ...(init?.signal ? [init.signal] : []), ...(scope ? [scope.signal] : [])]);
    let response: HttpStreamResponse;
    try {
      response = await options.http.stream({
        url,
        method,
        headers,
        ...(typeof body === 'string' ? { body } : {}),
        headersTimeoutMs: options.headersTimeoutMs,
        signal,
      });
    } catch (error) {
      if (scope && error instanceof ToolError && UNSENT.has(error.reason)) scope.unsent += 1;
      throw error;
    }
    options.onStatus?.(response.status, method);
    if (scope) scope.answered += 1;
    if (response.status >= 300 && response.status < 400) {
      response.cancel();
      // Never followed: the target was not checked against this server's egress, and a credential would go with it.
      throw new ToolError(`MCP server '${options.server}' answered with a redirect (HTTP ${response.status}); redirects are not followed`, 'REDIRECT_REFUSED');
    }
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(response.headers)) responseHeaders.set(name, value);
    if (method === 'DELETE' || response.status === 202 || response.status === 204 || response.status === 205) {
      response.cancel();
      return new Response(null, { status: response.status, headers: responseHeaders });
    }
    const contentType = response.headers['content-type'] ?? '';
    scope?.opened(response);
    const events = /^\s*text\/event-stream/i.test(contentType);
    const bounded = boundedBody(response, events, options, scope);
    const expected = method === 'POST' ? requestIdOf(body) : method === 'GET' && !lastEventIdIn(headers) ? NO_ANSWERS : undefined;
    const stream = options.inbound ? inboundFilter(bounded, events, expected, options.inbound) : bounded;
    return new Response(stream, { status: response.status, headers: responseHeaders });
  };
}

/**
 * The body as the SDK reads it, ended with an error once one message (the JSON body, or one SSE
 * event) goes over the cap; the connection is dropped there, so memory stays bounded.
 */
function boundedBody(response: HttpStreamResponse, events: boolean, options: RemoteFetchOptions, scope: RemoteCallScope | undefined): ReadableStream<Uint8Array> {
  const iterator = response.body[Symbol.asyncIterator]();
  const counter = events ? new EventSizes() : undefined;
  let total = 0;
  const done = () => {
    scope?.closed(response);
    response.cancel();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await iterator.next();
      } catch (error) {
        done();
        controller.error(error);
        return;
      }
      if (next.done) {
        done();
        controller.close();
        return;
      }
      const size = counter ? counter.largestAfter(next.value) : (total += next.value.length);
      const cap = scope?.maxMessageBytes ?? options.maxMessageBytes;
      if (size > cap) {
        done();
        const error = new ToolError(
          `MCP server '${options.server}' sent a message over ${cap} bytes; it was not read`,
          'OUTPUT_TOO_LARGE',
        );
        if (scope) scope.oversized(error);
        else options.onOversized?.(error.message);
        controller.error(error);
        return;
      }
      controller.enqueue(next.value);
    },
    cancel() {
      done();
    },
  });
}

/**
 * The size of the SSE event being read, across chunks: an event ends at an empty line (two line
 * ends in a row, where CRLF is one line end). Comments and keep-alives count like any line.
 */
class EventSizes {
  private event = 0;
  private line = 0;
  private lastCR = false;

  /** Feeds one chunk; returns the largest event size seen in it (including the one still open). */
  largestAfter(chunk: Uint8Array): number {
    let largest = this.event;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number;
      if (byte === 0x0a && this.lastCR) {
        this.lastCR = false;
        continue;
      }
      this.lastCR = byte === 0x0d;
      if (byte === 0x0a || byte === 0x0d) {
        if (this.line === 0) this.event = 0;
        this.line = 0;
        continue;
      }
      this.line += 1;
      this.event += 1;
      if (this.event > largest) largest = this.event;
    }
    return largest;
  }
}

/** A GET that is not a resumption opens the standalone stream, which carries no answers. */
const NO_ANSWERS = Symbol('no answers');
type Expected = string | number | typeof NO_ANSWERS | undefined;

/** The id of the JSON-RPC request a POST sends; `NO_ANSWERS` for a notification or a response. */
function requestIdOf(body: unknown): Expected {
  if (typeof body !== 'string') return NO_ANSWERS;
  try {
    const message = JSON.parse(body) as unknown;
    if (message && typeof message === 'object' && !Array.isArray(message)) {
      const { id, method } = message as { id?: unknown; method?: unknown };
      if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) return id;
    }
  } catch {
    // Not JSON: the SDK only sends JSON, so nothing on its stream is an answer of it.
  }
  return NO_ANSWERS;
}

function lastEventIdIn(headers: Record<string, string>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === 'last-event-id');
}

/**
 * What one incoming message is: kept, or dropped as an answer for another request than its
 * stream's (a result must reach only the call that asked) or as a notification over the rate.
 */
function keep(message: unknown, expected: Expected, inbound: RemoteInbound): boolean {
  if (!message || typeof message !== 'object' || Array.isArray(message)) return true;
  const { id, method } = message as { id?: unknown; method?: unknown };
  if (typeof method === 'string') {
    if (id !== undefined) return true;
    return inbound.admitNotification();
  }
  // An error with a null id answers no request (a request the server could not parse): no call can take it.
  if (expected === undefined || id === expected || id === null) return true;
  inbound.crossedAnswer();
  return false;
}

/**
 * The body as the SDK reads it, paced and filtered: SSE events are delivered in slices of one
 * event-loop turn (the reader pauses between them), and a JSON body or an SSE event holding an
 * answer for another request, or a notification over the rate, is dropped.
 */
function inboundFilter(body: ReadableStream<Uint8Array>, events: boolean, expected: Expected, inbound: RemoteInbound): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const encoder = new TextEncoder();
  if (!events) {
    // A JSON body is one message (or a batch): bounded already, read whole, filtered, passed on.
    return new ReadableStream<Uint8Array>({
      async start(controller) {
        const chunks: Uint8Array[] = [];
        try {
          for (;;) {
            const next = await reader.read();
            if (next.done) break;
            chunks.push(next.value);
          }
        } catch (error) {
          controller.error(error);
          return;
        }
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          controller.enqueue(encoder.encode(text));
          controller.close();
          return;
        }
        const kept = Array.isArray(parsed) ? parsed.filter((m) => keep(m, expected, inbound)) : keep(parsed, expected, inbound) ? parsed : [];
        controller.enqueue(encoder.encode(JSON.stringify(kept)));
        controller.close();
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
  }
  const decoder = new TextDecoder();
  let pending = '';
  const ready: string[] = [];
  const split = (text: string) => {
    pending += text;
    // A CR at the end may be the first half of a CRLF that the next chunk completes.
    const cut = pending.endsWith('\r') ? pending.length - 1 : pending.length;
    const normal = pending.slice(0, cut).replace(/\r\n?/g, '\n');
    pending = pending.slice(cut);
    const parts = normal.split('\n\n');
    const open = parts.pop() ?? '';
    pending = open + pending;
    for (const part of parts) if (keepEvent(part, expected, inbound)) ready.push(`${part}\n\n`);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        await inbound.turn();
        if (ready.length > 0) {
          // As many events as the slice has time for, then the reader waits for the next turn.
          const batch: string[] = [];
          while (ready.length > 0 && (batch.length === 0 || inbound.sliceLeft)) batch.push(ready.shift() as string);
          controller.enqueue(encoder.encode(batch.join('')));
          return;
        }
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (error) {
          controller.error(error);
          return;
        }
        if (next.done) {
          split(decoder.decode() + '\n\n');
          if (ready.length > 0) {
            controller.enqueue(encoder.encode(ready.splice(0).join('')));
          }
          controller.close();
          return;
        }
        split(decoder.decode(next.value, { stream: true }));
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** One SSE event (its lines, without the blank line ending it): kept unless its message is dropped. */
function keepEvent(event: string, expected: Expected, inbound: RemoteInbound): boolean {
  let type = 'message';
  const data: string[] = [];
  for (const line of event.split('\n')) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    else if (line.startsWith('event:')) type = line.slice(line.startsWith('event: ') ? 7 : 6);
  }
  if (data.length === 0 || type !== 'message') return true;
  let message: unknown;
  try {
    message = JSON.parse(data.join('\n'));
  } catch {
    return true;
  }
  return keep(message, expected, inbound);
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function headerRecord(headers: RequestInit['headers'] | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  if (headers === undefined) return record;
  new Headers(headers).forEach((value, name) => {
    record[name] = value;
  });
  return record;
}
