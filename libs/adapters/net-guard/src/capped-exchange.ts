import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import { ToolError } from '@toolgate/contracts';
import type { Dispatcher } from 'undici';

/** The body reached its cap; used to abort the exchange, never reported. */
class CapReached extends Error {}

/** A response read up to the cap: status, flattened headers, the (decoded) body bytes. */
export interface Collected {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
  readonly truncated: boolean;
}

/**
 * One request/response on undici's dispatch API, holding at most `cap` bytes of the (decoded)
 * body. At the cap it aborts the exchange, which closes the socket: the server stops sending and
 * memory stays bounded whatever it sends; a decompression bomb is cut at the same cap. Working at
 * this level, rather than through a body stream, keeps the guard's per-request cost small.
 */
export class CappedExchange implements Dispatcher.DispatchHandler {
  readonly result: Promise<Collected>;
  private resolve!: (value: Collected) => void;
  private reject!: (reason: unknown) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private status = 0;
  private headers: Record<string, string> = {};
  private decoder: Transform | undefined;
  private encoding: string | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly cap: number,
    private readonly host: string,
  ) {
    this.result = new Promise<Collected>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Ends the exchange now (deadline or caller abort); the socket is dropped if it is open. */
  cancel(reason: Error): void {
    this.fail(reason);
    this.controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Cancelled while still connecting: stop before anything is sent.
    if (this.settled) controller.abort(new CapReached());
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
    this.controller = controller;
    if (status < 200) return; // 1xx informational responses precede the real one
    this.status = status;
    this.headers = flattenHeaders(headers);
    this.encoding = this.headers['content-encoding'];
    this.decoder = createDecoder(this.encoding);
    if (this.decoder) {
      // The body is delivered decoded: the wire encoding and length no longer describe it.
      delete this.headers['content-encoding'];
      delete this.headers['content-length'];
      this.decoder.on('data', (chunk: Buffer) => this.collect(chunk));
      this.decoder.once('end', () => this.finish(false));
      this.decoder.on('error', (err) => this.fail(isZlibError(err) ? this.undecodable() : err));
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (!this.decoder) return this.collect(chunk);
    // Back-pressure: stop reading the socket while the decoder catches up.
    if (!this.decoder.write(chunk)) {
      controller.pause();
      this.decoder.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    if (this.decoder) this.decoder.end();
    else this.finish(false);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.fail(err);
  }

  private collect(chunk: Buffer): void {
    if (this.settled) return;
    if (this.size + chunk.length > this.cap) {
      if (this.cap > this.size) this.chunks.push(chunk.subarray(0, this.cap - this.size));
      this.size = this.cap;
      this.finish(true);
      this.decoder?.destroy();
      this.controller?.abort(new CapReached());
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  private finish(truncated: boolean): void {
    if (this.settled) return;
    this.settled = true;
    const body = this.chunks.length === 1 && !truncated ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.resolve({ status: this.status, headers: this.headers, body, truncated });
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.decoder?.destroy();
    this.reject(err);
  }

  private undecodable(): ToolError {
    return new ToolError(`the response body from '${this.host}' could not be decoded (${this.encoding})`, 'BAD_RESPONSE');
  }
}

/** Lower-case header names, repeated headers joined with `, ` (the port's promise). */
export function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function createDecoder(encoding: string | undefined): Transform | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

function isZlibError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}
