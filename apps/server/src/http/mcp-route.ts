import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '@toolgate/contracts';
import type { McpFace } from '@toolgate/mcp-face';
import { DEFAULT_WRITE_STALL_MS, writeWebResponse } from './web-response.js';

/** A JSON-RPC error answered over HTTP before the SDK sees the request (no request id is known yet). */
function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string>): void {
  const text = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Reads at most `maxBytes` of the body; past the cap it stops reading and answers undefined. */
async function readCappedBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    // A client streaming gigabytes costs us at most the cap in memory.
    if (size > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Decodes as the SDK decodes a body: UTF-8, a leading byte-order mark dropped, bad bytes replaced. */
const UTF8 = new TextDecoder('utf-8');

/**
 * Whether the decoded body opens an array after JSON whitespace. Judging the decoded text, the
 * same text that is parsed, leaves no spelling of an array that the SDK would see and this check
 * would not.
 */
function isJsonArray(text: string): boolean {
  return /^[\x20\t\n\r]*\[/.test(text);
}

/**
 * The body parsed once, here, for the SDK (`parsedBody`), so it neither clones the request nor
 * reads and parses it again. Undefined for an empty or malformed body: the SDK then reads the
 * bytes itself and answers with the parse error the spec names.
 */
function parseBody(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The node request as a web `Request` for the SDK; `signal` fires when the client goes away.
 * `body` is the raw body the SDK must read itself; a body parsed here travels as `parsedBody`
 * instead, so no stream is built for bytes nobody reads.
 */
function toWebRequest(req: IncomingMessage, url: URL, body: Buffer | undefined, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  return new Request(url, { method, headers, signal, ...(body !== undefined && method !== 'GET' && method !== 'HEAD' ? { body } : {}) });
}

export interface McpRouteDeps {
  readonly face: McpFace;
  readonly maxBodyBytes: number;
  /** Headers every response carries (security, CORS). */
  readonly headers: Record<string, string>;
  /** How long a write may wait for a client that takes no bytes before the response is destroyed and its call aborted (default 30 s). */
  readonly writeStallMs?: number;
}

/**
 * Serves `/mcp` for an authenticated principal, or answers 401 with the bearer challenge. Runs
 * after the Host/Origin guard, like every route. The body is read under the server's cap before
 * the SDK sees it; the SDK answers everything else (media types, JSON-RPC errors, revisions).
 */
export async function serveMcp(req: IncomingMessage, res: ServerResponse, url: URL, principal: Principal | undefined, deps: McpRouteDeps): Promise<void> {
  if (!principal) {
    // Refuse before reading a body from an unauthenticated client.
    res.setHeader('connection', 'close');
    return sendJsonRpcError(res, 401, -32001, 'missing or invalid bearer token', { ...deps.headers, 'www-authenticate': 'Bearer realm="toolgate"' });
  }
  let body: Buffer | undefined;
  let parsedBody: unknown;
  if (req.method === 'POST') {
    body = await readCappedBody(req, deps.maxBodyBytes);
    if (body === undefined) {
      // The rest of an oversized body is not read; close the connection after answering.
      res.setHeader('connection', 'close');
      return sendJsonRpcError(res, 413, -32600, `request body exceeds the limit of ${deps.maxBodyBytes} bytes`, deps.headers);
    }
    // 2025-06-18 removed JSON-RPC batching and 2026-07-28 never had it; the SDK's 2025 fallback
    // would still run every call of an array, so one request cannot fan out into many audited calls.
    const text = UTF8.decode(body);
    if (isJsonArray(text)) {
      return sendJsonRpcError(res, 400, -32600, 'JSON-RPC batch arrays are not supported; send one request per POST', deps.headers);
    }
    parsedBody = parseBody(text);
  }
  const disconnected = new AbortController();
  // A client that closes the connection before the answer is complete cancels the call it carried.
  res.once('close', () => {
    if (!res.writableFinished) disconnected.abort();
  });
  const request = toWebRequest(req, url, parsedBody === undefined ? body : undefined, disconnected.signal);
  const response = await deps.face.handle(request, principal, disconnected.signal, parsedBody);
  await writeWebResponse(res, response, deps.headers, deps.writeStallMs ?? DEFAULT_WRITE_STALL_MS);
}
