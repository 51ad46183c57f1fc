import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '@toolgate/contracts';
import type { McpFace } from '@toolgate/mcp-face';

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

/**
 * Whether the body, decoded as the SDK decodes it (UTF-8, a leading byte-order mark dropped),
 * opens an array after JSON whitespace. Judging the decoded text, not the bytes, leaves no
 * spelling of an array that the SDK would parse and this check would not see.
 */
function isJsonArray(body: Buffer): boolean {
  const text = new TextDecoder('utf-8').decode(body);
  return /^[\x20\t\n\r]*\[/.test(text);
}

/** The node request as a web `Request` for the SDK; `signal` fires when the client goes away. */
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

/** Copies the SDK's web `Response` onto the node response, streaming SSE as it comes. */
async function writeWebResponse(res: ServerResponse, response: Response, extraHeaders: Record<string, string>): Promise<void> {
  const headers: Record<string, string> = { ...extraHeaders };
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // Flush each SSE event at once; a slow reader applies back-pressure to the SDK.
      if (!res.write(value)) {
        // A socket that closes while full never drains: stop waiting for it then.
        await new Promise<void>((resolve) => {
          // Whichever fires first removes the other, so a long stream does not pile up listeners.
          const done = (): void => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.once('drain', done);
          res.once('close', done);
        });
      }
      if (res.destroyed) {
        await reader.cancel();
        return;
      }
    }
    res.end();
  } catch {
    // The client went away mid-stream: nothing left to answer.
    res.destroy();
  } finally {
    reader.releaseLock();
  }
}

export interface McpRouteDeps {
  readonly face: McpFace;
  readonly maxBodyBytes: number;
  /** Headers every response carries (security, CORS). */
  readonly headers: Record<string, string>;
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
  if (req.method === 'POST') {
    body = await readCappedBody(req, deps.maxBodyBytes);
    if (body === undefined) {
      // The rest of an oversized body is not read; close the connection after answering.
      res.setHeader('connection', 'close');
      return sendJsonRpcError(res, 413, -32600, `request body exceeds the limit of ${deps.maxBodyBytes} bytes`, deps.headers);
    }
    // 2025-06-18 removed JSON-RPC batching and 2026-07-28 never had it; the SDK's 2025 fallback
    // would still run every call of an array, so one request cannot fan out into many audited calls.
    if (isJsonArray(body)) {
      return sendJsonRpcError(res, 400, -32600, 'JSON-RPC batch arrays are not supported; send one request per POST', deps.headers);
    }
  }
  const disconnected = new AbortController();
  // A client that closes the connection before the answer is complete cancels the call it carried.
  res.once('close', () => {
    if (!res.writableFinished) disconnected.abort();
  });
  const response = await deps.face.handle(toWebRequest(req, url, body, disconnected.signal), principal, disconnected.signal);
  await writeWebResponse(res, response, deps.headers);
}
