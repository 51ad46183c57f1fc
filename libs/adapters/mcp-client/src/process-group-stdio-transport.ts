import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { PreparedCommand } from '@toolgate/contracts';
import { structuralCount } from './json-structure.js';
import { MCP_RESULT_TOO_LARGE, OversizedMessageScanner, type SkippedMessage } from './oversized-message.js';

/** Largest JSON-RPC message read from a server unless the options say otherwise. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/**
 * Largest notification, and largest answer to a request nobody awaits, read from a server. Such a
 * message answers no call, so it gets a bound far below an awaited result's: a log line or a
 * progress note is a few hundred bytes, and nothing a server may send unasked needs 4 MiB (ADR 0071).
 */
export const UNASKED_MESSAGE_BYTES = 64 * 1024;
/**
 * Most structure one message may hold: `{`, `[`, `,` and `:` outside its strings, an upper bound
 * on its values and keys counted with a byte scan before anything parses it. Parsing a message,
 * the SDK's checks of it and Toolgate's copy of a result cost time per value, all in one turn of
 * the event loop; at this bound the whole costs tens of milliseconds (measured in ADR 0071), where
 * 360,000 keys under the byte bound cost two seconds. Real results sit far below it: a tool's
 * structured answer is a few hundred values, a 4 MiB file read one string. Answers held to a
 * lower byte bound by {@link ProcessGroupStdioTransport.limitMessages} (the tool listing) are not counted.
 */
export const MAX_MESSAGE_NODES = 50_000;

export interface ProcessGroupStdioOptions {
  /** Receives the server's stderr as it arrives. */
  readonly onStderr?: (chunk: Buffer) => void;
  /** Between closing stdin, SIGTERM and SIGKILL when the transport is closed. Default 1000 ms. */
  readonly killGraceMs?: number;
  /**
   * Largest single JSON-RPC message read from the server, without its newline. Default 4 MiB.
   * A longer one is skipped up to its newline, never held; a response among them answers its
   * request with a JSON-RPC error {@link MCP_RESULT_TOO_LARGE} instead (ADR 0059).
   */
  readonly maxMessageBytes?: number;
  /** Sees every message sent to the server, as it is sent. */
  readonly onSent?: (message: JSONRPCMessage) => void;
  /** Sees every message read from the server, before the client handles it. */
  readonly onReceived?: (message: JSONRPCMessage) => void;
}

/** Time one turn of the event loop spends delivering a server's messages; a longer backlog waits for the next turn. */
const DELIVERY_SLICE_MS = 8;
/** Requests remembered as awaiting an answer; past this the oldest is forgotten (its answer, if oversized, is then only logged). */
const MAX_AWAITED = 4096;

/** A line read past rather than held, or held but over the limit of the request it answers, with the bound it broke. */
interface Skipped extends SkippedMessage {
  /** Bytes allowed, or, with `nodes`, structure allowed ({@link MAX_MESSAGE_NODES}). */
  readonly bound: number;
  /** Set when the line was dropped for its structure rather than its size: the count found (at least `bound + 1`). */
  readonly nodes?: number;
}

/**
 * MCP over stdio to a process started exactly as a tier's `prepare` describes it: its own
 * process group (`detached`), exactly the prepared environment (nothing of the gateway's is
 * merged in) and the prepared working directory. The SDK's `StdioClientTransport` does neither:
 * it adds six variables of the gateway's environment and signals only the direct child, which
 * leaves a server's own children running at the unisolated tier. Here, when the server exits or
 * the transport is closed, the whole group is killed. At the bwrap tier the group's leader is
 * bwrap itself: killing it ends the sandbox's pid namespace, so every process the server started
 * dies too, also one that left the group; and bwrap dies with the gateway (`--die-with-parent`).
 *
 * No message longer than `maxMessageBytes` is held (ADR 0059). Past that bound the line is read
 * past up to its newline by a scanner that keeps only its top-level `id`, kind and method, and
 * reading resynchronises at the next line. A dropped answer to a request awaiting it is handed
 * to the client as a JSON-RPC error {@link MCP_RESULT_TOO_LARGE} for that id, so exactly that
 * request fails and the server keeps serving; what was dropped is said on `onerror`.
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcess | undefined;
  private readonly maxMessageBytes: number;
  private readonly killGraceMs: number;
  private exited: Promise<void> | undefined;
  private closedOnce = false;
  /** Set once the group has been killed after its leader exited; its id may be reused after that. */
  private swept = false;
  private exitStatus: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The bound of the answers to requests sent from now on, if lower than `maxMessageBytes` (see `limitMessages`). */
  private messageLimit: number | undefined;
  /** Why the transport refused an answer over a limit asked for with `limitMessages`, for the caller's error. */
  private refusalText: string | undefined;
  /** Set while delivery of a backlog is spread over several turns (stdout is paused meanwhile). */
  private draining = false;
  /**
   * The line being read while it is within `maxMessageBytes` (emptied past it): its first piece as
   * it arrived, or, once a second piece comes, a buffer of our own the pieces are copied into
   * (grown by doubling, never past `maxMessageBytes`), so a line written a byte at a time costs
   * one buffer, not a million.
   */
  private held: Buffer | undefined;
  private heldOwned = false;
  private partialBytes = 0;
  /** Bytes of the line being read so far, held or not. */
  private lineBytes = 0;
  /** Reads the line being read once it has passed a bound (its id decides what it gets). */
  private scanner: OversizedMessageScanner | undefined;
  /** Lines read whole, and lines dropped, in the order they arrived; not yet delivered. */
  private readonly inbox: (Buffer | Skipped)[] = [];
  private inboxBytes = 0;
  /** Ids of the requests sent to the server and not yet answered or cancelled. */
  private readonly awaited = new Set<string | number>();
  /** Requests sent under `limitMessages`, with the bound their answer must keep; a subset of `awaited`. */
  private readonly limited = new Map<string | number, number>();
  /**
   * Carried in the data of the errors this transport makes up for dropped results, so that a
   * server's own error with the same code is not taken for one. The server never sees it.
   */
  private readonly marker = randomUUID();

  constructor(
    private readonly command: PreparedCommand,
    private readonly options: ProcessGroupStdioOptions = {},
  ) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.killGraceMs = options.killGraceMs ?? 1000;
  }

  /** The server's pid once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Holds the answer to every request sent from now on but `tools/call` to `bytes` (undefined:
   * only `maxMessageBytes`). Reading a message costs the event loop time in proportion to its size,
   * all in one turn (the SDK parses and checks it whole), so a phase that needs less can ask for
   * less. An answer over it is not parsed: its request gets a JSON-RPC error
   * {@link MCP_RESULT_TOO_LARGE} and {@link refusal} says why. Other messages, such as the result
   * of a tool call sent meanwhile, keep the transport's own bound.
   */
  limitMessages(bytes: number | undefined): void {
    this.messageLimit = bytes;
  }

  /** Bytes of the server's output held and not yet delivered: the line being read and complete lines waiting. */
  get heldBytes(): number {
    return this.partialBytes + this.inboxBytes;
  }

  /**
   * The size bound, when `error` is this transport's own answer to a request whose result was
   * dropped for its size (an `McpError` the SDK made from it); undefined for anything else,
   * including a server's error that merely uses the same code.
   */
  oversizedLimitOf(error: unknown): number | undefined {
    const data = this.ownAnswerData(error);
    return data !== undefined && data.nodes !== true && typeof data.limit === 'number' ? data.limit : undefined;
  }

  /**
   * The structure bound ({@link MAX_MESSAGE_NODES}), when `error` is this transport's own answer to
   * a request whose result was dropped unparsed for holding more structure than that; undefined otherwise.
   */
  overStructuredLimitOf(error: unknown): number | undefined {
    const data = this.ownAnswerData(error);
    return data !== undefined && data.nodes === true && typeof data.limit === 'number' ? data.limit : undefined;
  }

  private ownAnswerData(error: unknown): { limit?: unknown; nodes?: unknown } | undefined {
    if (typeof error !== 'object' || error === null) return undefined;
    const { code, data } = error as { code?: unknown; data?: unknown };
    if (code !== MCP_RESULT_TOO_LARGE || typeof data !== 'object' || data === null) return undefined;
    const own = data as { limit?: unknown; nodes?: unknown; marker?: unknown };
    return own.marker === this.marker ? own : undefined;
  }

  /** Why the transport last refused an answer over a `limitMessages` bound, if it did. */
  get refusal(): string | undefined {
    return this.refusalText;
  }

  /** How the server ended, once it has: exit code or signal. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitStatus;
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error('the transport is already started'));
    return new Promise((resolve, reject) => {
      const child = spawn(this.command.command, [...this.command.args], {
        cwd: this.command.cwd,
        env: { ...this.command.env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('exit', () => done()));
      child.once('spawn', () => resolve());
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
        // A process that never spawned emits no 'exit'; the connection is over all the same.
        if (child.pid === undefined) this.finish();
      });
      child.once('exit', (code, signal) => {
        this.exitStatus = { code, signal };
        // Whatever the server started in its group goes with it.
        this.killGroup('SIGKILL');
        this.swept = true;
        // Only a descendant that left the group can still hold stdout open; do not wait for it.
        setTimeout(() => this.finish(), 500).unref();
      });
      // 'close' comes after stdout is drained, so every message the server sent is delivered first.
      child.once('close', () => this.finish());
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        this.frame(chunk);
        if (!this.draining) this.drain();
      });
      child.stderr?.on('data', (chunk: Buffer) => this.options.onStderr?.(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exitStatus || stdin.destroyed) return Promise.reject(new Error('the MCP server is not running'));
    this.noteSent(message);
    this.options.onSent?.(message);
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Ends the server: stdin closed (a polite server exits), then SIGTERM, then SIGKILL, to the group. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.exited) {
      this.finish();
      return;
    }
    if (!this.exitStatus) {
      child.stdin?.end();
      if (!(await this.waitForExit(this.killGraceMs))) {
        this.killGroup('SIGTERM');
        if (!(await this.waitForExit(this.killGraceMs))) {
          this.killGroup('SIGKILL');
          await this.waitForExit(this.killGraceMs);
        }
      }
    }
    this.finish();
  }

  /** Splits the server's output at its newlines: each line, whole or dropped, goes to the inbox. */
  private frame(chunk: Buffer): void {
    let from = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, from);
      this.read(chunk.subarray(from, newline === -1 ? chunk.length : newline));
      if (newline === -1) return;
      this.endLine();
      from = newline + 1;
    }
  }

  /**
   * One piece of the line being read. It is held while the line is within `maxMessageBytes`;
   * past the lowest bound that applies, the scanner reads the line (from its start) to learn what
   * it answers; past `maxMessageBytes` what was held is let go and the rest is only scanned.
   */
  private read(piece: Buffer): void {
    const bytes = this.lineBytes + piece.length;
    if (this.scanner === undefined && bytes > this.scanFrom()) {
      this.scanner = new OversizedMessageScanner();
      // Below `maxMessageBytes` nothing was let go, so this is the line from its start.
      if (this.held) this.scanner.feed(this.held.subarray(0, this.partialBytes));
    }
    this.scanner?.feed(piece);
    this.lineBytes = bytes;
    // One byte past the bound is still held: it may be the `\r` of a CRLF, which does not count.
    if (bytes > this.maxMessageBytes + 1) this.letGo();
    else if (piece.length > 0) this.hold(piece);
  }

  private hold(piece: Buffer): void {
    const held = this.held;
    if (held === undefined) {
      this.held = piece;
      this.partialBytes = piece.length;
      return;
    }
    const needed = this.partialBytes + piece.length;
    if (!this.heldOwned || held.length < needed) {
      const grown = Buffer.allocUnsafe(Math.min(this.maxMessageBytes + 1, Math.max(needed, 2 * (this.heldOwned ? held.length : 0), 4096)));
      held.copy(grown, 0, 0, this.partialBytes);
      this.held = grown;
      this.heldOwned = true;
    }
    piece.copy(this.held as Buffer, this.partialBytes);
    this.partialBytes = needed;
  }

  private letGo(): void {
    this.held = undefined;
    this.heldOwned = false;
    this.partialBytes = 0;
  }

  /**
   * Where scanning starts: the lowest bound a message may have to keep, an awaited answer's or
   * that of a message nobody asked for ({@link UNASKED_MESSAGE_BYTES}).
   */
  private scanFrom(): number {
    let from = Math.min(this.maxMessageBytes, UNASKED_MESSAGE_BYTES);
    for (const bound of this.limited.values()) from = Math.min(from, bound);
    return from;
  }

  /** The line being read has ended: it is delivered whole, or dropped for the bound it broke. */
  private endLine(): void {
    const found = this.scanner?.finish();
    const held = this.held !== undefined && this.lineBytes <= this.maxMessageBytes + 1;
    // A CRLF's `\r` is not part of the message: the bound is the same with either line ending.
    const crlf = held && this.partialBytes > 0 && this.held?.[this.partialBytes - 1] === 0x0d;
    const bytes = this.lineBytes - (crlf ? 1 : 0);
    const scanned = found === undefined ? undefined : { ...found, bytes };
    const dropped = bytes > this.maxMessageBytes;
    // The line keeps the held buffer, which the next line does not write to: it starts a new one.
    const line = dropped ? undefined : (this.held?.subarray(0, this.partialBytes) ?? Buffer.alloc(0));
    this.scanner = undefined;
    this.letGo();
    this.lineBytes = 0;
    const request = scanned?.kind === 'response' ? this.awaitedAs(scanned.id) : undefined;
    const limit = request === undefined ? undefined : this.limited.get(request);
    if (scanned && (dropped || (limit !== undefined && scanned.bytes > limit))) {
      this.inbox.push({ ...scanned, bound: limit ?? this.maxMessageBytes });
      return;
    }
    if (line === undefined) return;
    // Nobody asked for it (a notification, an answer to a request not awaited, a line that is not
    // a request): a much lower bound, since reading it costs the same and answers no call.
    const unasked = scanned !== undefined && scanned.kind !== 'request' && request === undefined;
    if (scanned && unasked && scanned.bytes > UNASKED_MESSAGE_BYTES) {
      this.inbox.push({ ...scanned, bound: UNASKED_MESSAGE_BYTES });
      return;
    }
    // Counted on the raw bytes before any parse: a line cannot hold more structure than bytes. An
    // answer held to a `limitMessages` bound (a listing page, 1 MiB) is not counted: the discovery
    // budget (ADR 0032) already charges its schemas, and a page of 16 patterned tools is 80,000.
    if (line.length > MAX_MESSAGE_NODES && limit === undefined) {
      const nodes = structuralCount(line, MAX_MESSAGE_NODES);
      if (nodes > MAX_MESSAGE_NODES) {
        this.inbox.push({ ...(scanned ?? scanWhole(line)), bytes, bound: MAX_MESSAGE_NODES, nodes });
        return;
      }
    }
    this.inbox.push(line);
    this.inboxBytes += line.length;
  }

  private drain(): void {
    const started = performance.now();
    for (;;) {
      if (this.closedOnce) return;
      const next = this.inbox.shift();
      if (next === undefined) {
        if (this.draining) {
          this.draining = false;
          this.child?.stdout?.resume();
        }
        return;
      }
      if (Buffer.isBuffer(next)) {
        this.inboxBytes -= next.length;
        let message: JSONRPCMessage;
        try {
          message = deserializeMessage(next.toString('utf8').replace(/\r$/, ''));
        } catch (error) {
          // One unreadable line (not JSON-RPC) is reported and skipped; the next may be fine.
          this.onerror?.(error as Error);
          continue;
        }
        this.deliver(message);
      } else this.answerSkipped(next);
      if (performance.now() - started >= DELIVERY_SLICE_MS) {
        // A server flooding messages (progress, say) would hold the event loop for as long as its
        // backlog lasts: the rest waits for the next turn, and the server's output with it.
        this.draining = true;
        this.child?.stdout?.pause();
        setImmediate(() => this.drain());
        return;
      }
    }
  }

  private deliver(message: JSONRPCMessage): void {
    // Matched as the SDK matches it: an answer `"7"` answers request 7, which then awaits nothing more.
    if (!('method' in message) && 'id' in message && message.id !== undefined) this.answered(this.awaitedAs(message.id) ?? message.id);
    this.options.onReceived?.(message);
    this.onmessage?.(message);
  }

  /** Keeps track of which requests await an answer, to tell a dropped answer's call apart. */
  private noteSent(message: JSONRPCMessage): void {
    if (!('method' in message)) return;
    if ('id' in message && message.id !== undefined) {
      this.awaited.add(message.id);
      // A tool call's result keeps the transport's own bound, also while a listing runs beside it.
      if (this.messageLimit !== undefined && message.method !== 'tools/call') this.limited.set(message.id, this.messageLimit);
      // Requests the SDK stopped waiting for without a cancellation must not pile up for good.
      if (this.awaited.size > MAX_AWAITED) this.answered(this.awaited.values().next().value as string | number);
    } else if (message.method === 'notifications/cancelled') {
      const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') this.answered(requestId);
    }
  }

  /**
   * The awaited request an answer with `id` is for, as the SDK matches answers to requests: it
   * reads the id as a number, so an id of `"7"` answers request 7.
   */
  private awaitedAs(id: string | number | undefined): string | number | undefined {
    if (id === undefined) return undefined;
    if (this.awaited.has(id)) return id;
    return typeof id === 'string' && this.awaited.has(Number(id)) ? Number(id) : undefined;
  }

  /** The request `id` awaits nothing more (answered, cancelled or forgotten). */
  private answered(id: string | number): void {
    this.awaited.delete(id);
    this.limited.delete(id);
  }

  /**
   * What a skipped line gets (ADR 0059): an answer to a request awaiting it becomes a JSON-RPC
   * error for that request, so exactly that call fails; a request of the server's is refused, so
   * it is not left waiting; anything else is dropped. Each is said on `onerror` (the operator log),
   * with sizes and ids, never content.
   */
  private answerSkipped(skipped: Skipped): void {
    const limit = skipped.bound;
    const structured = skipped.nodes !== undefined;
    // Said as the bound it broke: its size, or its structure (values and keys counted before parsing).
    const over = structured ? `more than ${limit} JSON values` : `more than ${limit} bytes`;
    const size = structured ? `${skipped.bytes} bytes, over ${limit} values` : `${skipped.bytes} bytes`;
    const { id } = skipped;
    if (skipped.kind === 'response' && id !== undefined) {
      const request = this.awaitedAs(id);
      const refused = request !== undefined && this.limited.has(request);
      const answer = {
        jsonrpc: '2.0' as const,
        // As the request was sent, so the client, the bridge and the awaited set all match it.
        id: request ?? id,
        error: {
          code: MCP_RESULT_TOO_LARGE,
          message: structured
            ? `the result held ${over}, the most one message from the server may hold; it was dropped unread`
            : `the result was larger than ${limit} bytes, the most one message from the server may carry; it was dropped`,
          data: { limit, marker: this.marker, ...(structured ? { nodes: true } : {}) },
        },
      };
      if (refused) {
        // A phase that asked for less (the listing): its caller says what the refusal means.
        this.refusalText = structured ? `the server sent a message with ${over}` : `the server sent a message larger than ${limit} bytes`;
        this.onerror?.(new Error(this.refusalText));
        this.deliver(answer);
      } else if (request !== undefined) {
        this.onerror?.(new Error(`a result of ${over} for request ${shown(id)} was dropped (${size}); that call fails, the server keeps serving`));
        this.deliver(answer);
      } else {
        this.onerror?.(new Error(`a result of ${over} for request ${shown(id)}, which is no longer awaited, was dropped (${size})`));
        // The bridge still learns that the server answered (a late answer lifts a quarantine, ADR 0057).
        this.options.onReceived?.(answer);
      }
      return;
    }
    if (skipped.kind === 'request' && id !== undefined) {
      this.onerror?.(new Error(`a request ${shown(skipped.method)} of ${over} (id ${shown(id)}) was dropped and refused (${size})`));
      const refusal = {
        jsonrpc: '2.0' as const,
        id,
        error: {
          code: MCP_RESULT_TOO_LARGE,
          message: structured
            ? `the request held ${over}, the most one message to this client may hold; it was not read`
            : `the request was larger than ${limit} bytes, the most one message to this client may carry; it was not read`,
        },
      };
      this.send(refusal).catch((error: unknown) => this.onerror?.(error as Error));
      return;
    }
    if (skipped.kind === 'notification') {
      this.onerror?.(new Error(`a notification ${shown(skipped.method)} of ${over} was dropped (${size})`));
      return;
    }
    const what = skipped.kind === 'response' ? 'a result' : 'a message';
    this.onerror?.(new Error(`${what} of ${over} with no id that could be read was dropped (${size})`));
  }

  private waitForExit(ms: number): Promise<boolean> {
    if (this.exitStatus) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.exited?.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private killGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined || this.swept) return;
    try {
      // The negative pid addresses the group the detached child leads.
      process.kill(-pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  }

  private finish(): void {
    if (this.closedOnce) return;
    this.closedOnce = true;
    this.letGo();
    this.lineBytes = 0;
    this.scanner = undefined;
    this.inbox.length = 0;
    this.inboxBytes = 0;
    this.awaited.clear();
    this.limited.clear();
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.child?.stdin?.destroy();
    this.onclose?.();
  }
}

/** What the scanner finds in a whole line (one below {@link UNASKED_MESSAGE_BYTES}, never scanned as it came). */
function scanWhole(line: Buffer): SkippedMessage {
  const scanner = new OversizedMessageScanner();
  scanner.feed(line);
  return scanner.finish();
}

/** An id or method name of the server's, for the operator log: as JSON, cut short. */
function shown(value: string | number | undefined): string {
  if (value === undefined) return '(no method name)';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
