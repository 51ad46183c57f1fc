import type { Readable, Writable } from 'node:stream';
import { parseJSONRPCMessage, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';

/** JSON-RPC 2.0's codes for input that never became a request. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/** The longest line (one message) the bridge reads; longer lines are refused, not buffered. */
export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;

export interface StdioLineTransportOptions {
  readonly stdin: Readable;
  readonly stdout: Writable;
  /** Bytes one newline-delimited message may take (default 4 MiB). */
  readonly maxLineBytes?: number;
}

/** The `id` of a parsed but invalid message, when it has a usable one, so its error can name it. */
function idOf(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/**
 * MCP's stdio binding (newline-delimited JSON-RPC) over two streams, answering what the SDK's own
 * stdio transport drops in silence: a line that is not JSON gets a JSON-RPC parse error, JSON
 * that is not one JSON-RPC message (a batch array included) gets invalid-request, and an oversized
 * line is refused and skipped. Either way the connection keeps serving the lines after it.
 */
export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #maxLineBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Set while the rest of an oversized line is being skipped up to its newline. */
  #skipping = false;
  #started = false;
  #closed = false;
  #resolveEnded!: () => void;
  /** Resolves once the connection has closed (stdin ended or `close()`), whoever listens to `onclose`. */
  readonly ended: Promise<void> = new Promise((resolve) => (this.#resolveEnded = resolve));

  constructor(options: StdioLineTransportOptions) {
    this.#stdin = options.stdin;
    this.#stdout = options.stdout;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('StdioLineTransport already started');
    this.#started = true;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('end', this.#onEnd);
    this.#stdin.on('close', this.#onEnd);
    this.#stdin.on('error', this.#onStreamError);
    this.#stdout.on('error', this.#onStdoutError);
    if (this.#stdin.readableEnded || this.#stdin.destroyed) setImmediate(this.#onEnd);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error('the stdio connection is closed');
    const text = serializeMessage(message);
    if (!this.#stdout.write(text)) await new Promise<void>((resolve) => this.#stdout.once('drain', resolve));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('end', this.#onEnd);
    this.#stdin.off('close', this.#onEnd);
    this.#stdin.off('error', this.#onStreamError);
    this.#stdin.pause();
    this.#pending = [];
    this.onclose?.();
    this.#resolveEnded();
  }

  readonly #onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (let newline = data.indexOf(0x0a); newline !== -1; newline = data.indexOf(0x0a)) {
      this.#append(data.subarray(0, newline));
      data = data.subarray(newline + 1);
      const line = Buffer.concat(this.#pending);
      const skipped = this.#skipping;
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#skipping = false;
      // The oversized line was answered when it crossed the cap; its tail is dropped here.
      if (!skipped) this.#handleLine(line);
    }
    this.#append(data);
  };

  #append(part: Buffer): void {
    if (this.#skipping || part.length === 0) return;
    if (this.#pendingBytes + part.length > this.#maxLineBytes) {
      // Memory stays bounded by the cap however long a line a client sends.
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#skipping = true;
      this.#reply(null, INVALID_REQUEST, `message exceeds the bridge's limit of ${this.#maxLineBytes} bytes`);
      return;
    }
    this.#pending.push(part);
    this.#pendingBytes += part.length;
  }

  #handleLine(raw: Buffer): void {
    const line = raw.toString('utf8').replace(/\r$/, '');
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.#reply(null, PARSE_ERROR, 'Parse error: the line is not valid JSON');
      return;
    }
    if (Array.isArray(value)) {
      // MCP removed JSON-RPC batching (2025-06-18) and the 2026 revision never had it.
      this.#reply(null, INVALID_REQUEST, 'Invalid Request: JSON-RPC batch arrays are not supported; send one message per line');
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(value);
    } catch {
      this.#reply(idOf(value), INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response');
      return;
    }
    this.onmessage?.(message);
  }

  #reply(id: string | number | null, code: number, message: string): void {
    if (this.#closed) return;
    // id null is JSON-RPC's answer to a message whose id could not be read; the SDK's types omit it.
    this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage).catch((error: unknown) => this.onerror?.(error as Error));
  }

  readonly #onEnd = (): void => {
    void this.close();
  };

  readonly #onStreamError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onStdoutError = (error: Error): void => {
    // The client closed our stdout: nobody is left to answer.
    if (this.#closed) return;
    this.onerror?.(error);
    void this.close();
  };
}
