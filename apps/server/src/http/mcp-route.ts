import type { IncomingMessage, ServerResponse } from 'node:http';
import { allowsScope, type Principal, type ToolgateScope } from '@toolgate/contracts';
import type { McpFace } from '@toolgate/mcp-face';
import { credentialRefusal, type RequestAuthentication } from './bearer.js';
import { boundJsonDepth, TooDeepJsonError } from './bounded-json.js';
import { DEFAULT_WRITE_STALL_MS, writeWebResponse } from './web-response.js';

/**
 * A JSON-RPC error answered over HTTP before the SDK sees the request: with the request's id when
 * its body has been read and carries a valid one, else `null` (none is known yet).
 */
function sendJsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string>, id: string | number | null = null): void {
  const text = JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
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

/** The scope an MCP request needs: listing tools reads, calling one calls; other methods none. */
function scopeOfMcpMethod(body: unknown): ToolgateScope | undefined {
  const method = typeof body === 'object' && body !== null ? (body as { method?: unknown }).method : undefined;
  if (method === 'tools/list') return 'tools:read';
  if (method === 'tools/call') return 'tools:call';
  return undefined;
}

/** A JSON-RPC request's id, when it is one the spec allows (a string or an integer), so the client can match the error. */
function requestIdOf(body: unknown): string | number | null {
  const id = typeof body === 'object' && body !== null ? (body as { id?: unknown }).id : undefined;
  if (typeof id === 'string' && id.length <= 256) return id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : null;
}

/**
 * The body parsed once, here, for the SDK (`parsedBody`), so it neither clones the request nor
 * reads and parses it again, with what nests past `MAX_BODY_DEPTH` cut first (ADR 0076).
 * `value` is undefined for an empty or malformed body: the SDK then reads the bytes itself and
 * answers with the parse error the spec names. `deepAndMalformed` is a malformed body too deep
 * for that (its parse would build every level before it failed), and `tooDeep` one deep in too
 * many places to cut: the route answers both.
 */
function parseBody(text: string): { readonly value: unknown; readonly deepAndMalformed?: true; readonly tooDeep?: string } {
  if (text.length === 0) return { value: undefined };
  let bounded: string;
  try {
    bounded = boundJsonDepth(text).text;
  } catch (error) {
    if (error instanceof TooDeepJsonError) return { value: undefined, tooDeep: error.message };
    return { value: undefined, deepAndMalformed: true };
  }
  try {
    return { value: JSON.parse(bounded) as unknown };
  } catch {
    return { value: undefined };
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
  /** The `WWW-Authenticate` value of a 403 for a token without `scope` (absent: scopes are not answered with a challenge). */
  readonly scopeChallenge?: (scope: string) => string;
  /** How long a write may wait for a client that takes no bytes before the response is destroyed and its call aborted (default 30 s). */
  readonly writeStallMs?: number;
}

/**
 * Answers an `/mcp` request whose credential is not a principal's, before reading its body: 401
 * (the caller's headers carry the bearer challenge), or 503 when the identity provider cannot say.
 */
export function refuseMcpCredential(res: ServerResponse, auth: Exclude<RequestAuthentication, { outcome: 'principal' }>, headers: Record<string, string>): void {
  res.setHeader('connection', 'close');
  const { status, message } = credentialRefusal(auth);
  sendJsonRpcError(res, status, -32001, message, status === 503 ? { ...headers, 'retry-after': '5' } : headers);
}

/**
 * Serves `/mcp` for an authenticated principal. Runs after the Host/Origin guard and
 * authentication, like every route. The body is read under the server's cap before the SDK sees
 * it; the SDK answers everything else (media types, JSON-RPC errors, revisions).
 */
export async function serveMcp(req: IncomingMessage, res: ServerResponse, url: URL, principal: Principal, deps: McpRouteDeps): Promise<void> {
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
    const parsed = parseBody(text);
    // The SDK's own answer to a body that is not JSON, without the SDK parsing it.
    if (parsed.deepAndMalformed) return sendJsonRpcError(res, 400, -32700, 'Parse error: Invalid JSON', deps.headers);
    if (parsed.tooDeep !== undefined) return sendJsonRpcError(res, 400, -32600, `Invalid Request: ${parsed.tooDeep}`, deps.headers);
    parsedBody = parsed.value;
    // The token's scope, when checked (ADR 0075), decides the HTTP answer: 403 with the challenge,
    // as the MCP authorization spec asks, before the SDK or the gateway sees the request.
    const scope = scopeOfMcpMethod(parsedBody);
    if (scope && !allowsScope(principal, scope)) {
      return sendJsonRpcError(
        res,
        403,
        -32001,
        `insufficient scope: ${String((parsedBody as { method: string }).method)} needs a token with the scope '${scope}'`,
        {
          ...deps.headers,
          ...(deps.scopeChallenge ? { 'www-authenticate': deps.scopeChallenge(scope) } : {}),
        },
        requestIdOf(parsedBody),
      );
    }
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
