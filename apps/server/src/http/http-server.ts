import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { createContextInner, createRestHandler, InsufficientScopeError, readinessOf, restMethodHasBody, type AppRouter, type HealthReport } from '@toolgate/api';
import type { PrincipalDirectory } from '@toolgate/contracts';
import type { McpFace } from '@toolgate/mcp-face';
import { createApprovalPage } from './approval-page.js';
import { parseBoundedJson, TooDeepJsonError } from './bounded-json.js';
import { authenticateRequest, bearerChallenge, credentialRefusal, PROTECTED_RESOURCE_METADATA, scopeChallenge, resourceMetadata, type ProtectedResource, type RequestAuthentication, type ResourcePath } from './bearer.js';
import { answerPreflight, corsResponseHeaders, isPreflight } from './cors.js';
import type { HostGuard } from './host-guard.js';
import { refuseMcpCredential, serveMcp } from './mcp-route.js';

export interface HttpServerDeps {
  readonly router: AppRouter;
  readonly directory: PrincipalDirectory;
  /** What `/.well-known/oauth-protected-resource` says and 401 challenges point at (RFC 9728). */
  readonly resource: ProtectedResource;
  readonly health: () => HealthReport;
  readonly maxBodyBytes: number;
  /** The Host/Origin guard every request passes before any route (DNS rebinding, foreign pages). */
  readonly guard: HostGuard;
  /** The MCP face served at `/mcp`; absent, `/mcp` is not a route. */
  readonly mcp?: McpFace;
  readonly log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/** The most calls one tRPC batch request may carry; a larger batch is refused with 400. */
export const MAX_TRPC_BATCH = 32;

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
} as const;

/** A request body over the cap, or malformed: answered with a specific 4xx. */
class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new BodyError(415, 'UNSUPPORTED_MEDIA_TYPE', `send the body as application/json (got '${type.slice(0, 60) || 'none'}')`);
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new BodyError(413, 'PAYLOAD_TOO_LARGE', `request body is ${declared} bytes; the limit is ${maxBytes}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    // Stop reading at the cap: a client streaming gigabytes costs us at most the cap in memory.
    if (size > maxBytes) throw new BodyError(413, 'PAYLOAD_TOO_LARGE', `request body exceeds the limit of ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new BodyError(400, 'BAD_REQUEST', 'request body is empty; send a JSON object');
  try {
    // Values nested past MAX_BODY_DEPTH are cut before the parse builds them (ADR 0076).
    return parseBoundedJson(text);
  } catch (error) {
    if (error instanceof TooDeepJsonError) throw new BodyError(400, 'BAD_REQUEST', `invalid request: ${error.message}`);
    throw new BodyError(400, 'PARSE_ERROR', `malformed JSON: ${(error as Error).message.slice(0, 200)}`);
  }
}

/**
 * The HTTP surface: tRPC at `/trpc`, REST at `/api/v1`, MCP at `/mcp`, liveness at `/healthz`,
 * readiness at `/readyz` (ADR 0067), and
 * the approval page at `/approvals/<id>` with its assets under `/approval-page/` (ADR 0052).
 * Every response is JSON (or MCP's event stream, or the approval page's files); an unexpected failure is a 500 with a generic message and the detail goes to the log.
 * Every request passes the Host/Origin guard first; only `/healthz` and `/readyz` answer a refused
 * one, with nothing but `{ok}` or `{ready}`, and the approval page a top-level navigation refused only as cross-site.
 */
export function createHttpServer(deps: HttpServerDeps): Server {
  const handleRest = createRestHandler(deps.router);
  const approvalPage = createApprovalPage();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const verdict = deps.guard.check(req);
    if (!verdict.ok) {
      if (verdict.url?.pathname === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
        // Probes (load balancers, often HTTP/1.0 without Host) still learn liveness, and nothing else.
        const { ok } = deps.health();
        return sendJson(res, ok ? 200 : 503, { ok });
      }
      if (verdict.url?.pathname === '/readyz' && (req.method === 'GET' || req.method === 'HEAD')) {
        // Likewise readiness: the verdict only, not which sources there are.
        const { ready } = readinessOf(deps.health());
        return sendJson(res, ready ? 200 : 503, { ready });
      }
      // An approver following a link from a web-based client arrives cross-site; the page holds no
      // data and cannot be framed, so its document (never the API) is served to such a navigation.
      if (verdict.refusal.code === 'CROSS_SITE_NOT_ALLOWED' && verdict.url && approvalPage.isCrossSiteNavigation(req, verdict.url.pathname)) {
        return approvalPage.serve(req, res, verdict.url.pathname);
      }
      // The body of a refused request is never read; close rather than drain it.
      res.setHeader('connection', 'close');
      const { status, code, message } = verdict.refusal;
      return sendJson(res, status, { error: { code, message } });
    }
    const url = verdict.url;
    const path = url.pathname;

    if (verdict.corsOrigin !== undefined) {
      if (isPreflight(req.method, req.headers)) {
        const answer = answerPreflight(verdict.corsOrigin, req.headers);
        if (answer.status === 403) return sendJson(res, 403, { error: { code: answer.code, message: answer.message } });
        res.writeHead(204, { ...SECURITY_HEADERS, ...answer.headers });
        res.end();
        return;
      }
      for (const [name, value] of Object.entries(corsResponseHeaders(verdict.corsOrigin))) res.setHeader(name, value);
    }

    if (path === '/healthz') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: { code: 'METHOD_NOT_SUPPORTED', message: 'use GET' } });
      const health = deps.health();
      return sendJson(res, health.ok ? 200 : 503, health);
    }

    if (path === '/readyz') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: { code: 'METHOD_NOT_SUPPORTED', message: 'use GET' } });
      const readiness = readinessOf(deps.health());
      return sendJson(res, readiness.ready ? 200 : 503, readiness);
    }

    if (path === PROTECTED_RESOURCE_METADATA || path === `${PROTECTED_RESOURCE_METADATA}/mcp`) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: { code: 'METHOD_NOT_SUPPORTED', message: 'use GET' } });
      const resourcePath: ResourcePath = path === PROTECTED_RESOURCE_METADATA ? '' : '/mcp';
      // Public by design (RFC 9728): a client reads it to learn where to get a token.
      return sendJson(res, 200, resourceMetadata(req, deps.resource, resourcePath), { 'cache-control': 'max-age=300' });
    }

    if (path === '/trpc' || path.startsWith('/trpc/')) {
      const auth = await authenticateRequest(req, deps.directory);
      // A token that is sent is decided before any procedure runs; tRPC answers a refused one
      // (401 UNAUTHORIZED) or an undecidable one (503 SERVICE_UNAVAILABLE) in its own error shape.
      const principal = auth.outcome === 'principal' ? auth.principal : undefined;
      const credentialProblem = auth.outcome === 'refused' || auth.outcome === 'unavailable' ? { outcome: auth.outcome, reason: auth.reason } : undefined;
      await nodeHTTPRequestHandler({
        req,
        res,
        path: path.slice('/trpc/'.length),
        router: deps.router,
        maxBodySize: deps.maxBodyBytes,
        // One request may not fan out into an unbounded number of tool calls (each audited twice).
        maxBatchSize: MAX_TRPC_BATCH,
        createContext: () => createContextInner(principal ? { principal } : credentialProblem ? { credentialProblem } : {}),
        // A Headers instance is appended to tRPC's own, so its `vary` keeps Origin beside trpc-accept.
        responseMeta: ({ errors }) => {
          const headers = new Headers({ ...SECURITY_HEADERS, ...(verdict.corsOrigin !== undefined ? corsResponseHeaders(verdict.corsOrigin) : {}) });
          // An authed procedure called without a token: the challenge says where to get one.
          if (errors.some((e) => e.code === 'UNAUTHORIZED')) headers.set('www-authenticate', bearerChallenge(req, deps.resource, '', auth));
          if (errors.some((e) => e.code === 'SERVICE_UNAVAILABLE')) headers.set('retry-after', '5');
          const scope = errors.find((e) => e.cause instanceof InsufficientScopeError)?.cause as InsufficientScopeError | undefined;
          if (scope) headers.set('www-authenticate', scopeChallenge(req, deps.resource, '', scope.scope));
          return { headers };
        },
        onError: ({ error, path: procedure }) => {
          if (error.code === 'INTERNAL_SERVER_ERROR') {
            deps.log('error', `tRPC ${procedure ?? '?'} failed: ${error.cause instanceof Error ? error.cause.message : error.message}`);
          }
        },
      });
      return;
    }

    if (path === '/mcp' && deps.mcp) {
      const headers = { ...SECURITY_HEADERS, ...(verdict.corsOrigin !== undefined ? corsResponseHeaders(verdict.corsOrigin) : {}) };
      const auth = await authenticateRequest(req, deps.directory);
      if (auth.outcome !== 'principal') {
        const challenge: Record<string, string> = auth.outcome === 'unavailable' ? {} : { 'www-authenticate': bearerChallenge(req, deps.resource, '/mcp', auth) };
        return refuseMcpCredential(res, auth, { ...headers, ...challenge });
      }
      return serveMcp(req, res, url, auth.principal, {
        face: deps.mcp,
        maxBodyBytes: deps.maxBodyBytes,
        headers,
        scopeChallenge: (scope) => scopeChallenge(req, deps.resource, '/mcp', scope),
      });
    }

    if (approvalPage.handles(path)) return approvalPage.serve(req, res, path);

    if (path.startsWith('/api/v1/')) {
      const method = req.method ?? 'GET';
      let body: unknown;
      const auth = await authenticateRequest(req, deps.directory);
      // Drain nothing: refuse before reading a body from an unauthenticated client.
      if (auth.outcome !== 'principal') return refuseCredential(req, res, auth);
      const principal = auth.principal;
      if (restMethodHasBody(method)) body = await readJsonBody(req, deps.maxBodyBytes);
      const answer = await handleRest({ method, path: path.slice('/api/v1'.length), query: url.searchParams, principal, body });
      const challenge: Record<string, string> = answer.insufficientScope ? { 'www-authenticate': scopeChallenge(req, deps.resource, '', answer.insufficientScope) } : {};
      return sendJson(res, answer.status, answer.body, challenge);
    }

    sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `no route ${path.slice(0, 200)}; see /api/v1, /trpc, /mcp, /approvals/<id>, /healthz and /readyz` } });
  };

  /** 401 with the bearer challenge, or 503 when the identity provider cannot say (fail closed). */
  const refuseCredential = (req: IncomingMessage, res: ServerResponse, auth: Exclude<RequestAuthentication, { outcome: 'principal' }>): void => {
    res.setHeader('connection', 'close');
    const { status, message } = credentialRefusal(auth);
    if (status === 503) return sendJson(res, 503, { error: { code: 'IDENTITY_UNAVAILABLE', message } }, { 'retry-after': '5' });
    sendJson(res, 401, { error: { code: 'UNAUTHORIZED', message } }, { 'www-authenticate': bearerChallenge(req, deps.resource, '', auth) });
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof BodyError) {
        // The rest of an oversized body is not read; close the connection after answering.
        res.setHeader('connection', 'close');
        sendJson(res, error.status, { error: { code: error.code, message: error.message } });
        return;
      }
      deps.log('error', `request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'INTERNAL_SERVER_ERROR', message: 'internal error' } });
      else res.destroy();
    });
  };
  // Host is checked by the guard, which answers a missing one with JSON instead of node's bare 400.
  const server = createServer({ requireHostHeader: false }, onRequest);
  // Node answers `Expect: 100-continue` before any handler runs; invite the body only from a
  // request the guard lets through (a refused one is answered and its connection closed).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (deps.guard.check(req).ok) res.writeContinue();
    onRequest(req, res);
  });
  // The guard reads every header line: past node's default cap of 2,000 the rest would be
  // dropped unseen, so an Origin after 2,000 filler lines passed. Header bytes stay capped by
  // node's maxHeaderSize (16 KiB).
  server.maxHeadersCount = 0;
  server.requestTimeout = 120_000;
  server.headersTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  // The MCP face's open exchanges end with the server.
  if (deps.mcp) server.once('close', () => void deps.mcp?.close());
  return server;
}
