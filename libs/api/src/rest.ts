import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import type { Principal } from '@toolgate/contracts';
import type { AppRouter } from './app-router.js';
import { createContextInner } from './context.js';
import { createCallerFactory, InsufficientScopeError } from './trpc.js';

/** A REST request after the HTTP layer has authenticated it and parsed its JSON body. */
export interface RestRequest {
  readonly method: string;
  /** Path below `/api/v1`, e.g. `/tools/invoke`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly principal?: Principal;
  readonly body?: unknown;
}

export interface RestResponse {
  readonly status: number;
  readonly body: unknown;
  /** On a 403 for a token without the call's scope: the scope it needs (the face's challenge names it). */
  readonly insufficientScope?: string;
}

type Caller = ReturnType<AppRouter['createCaller']>;
type Route = { method: string; pattern: RegExp; run: (caller: Caller, req: RestRequest, params: string[]) => Promise<unknown> };

const intParam = (query: URLSearchParams, name: string): number | undefined => {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!/^\d{1,9}$/.test(raw)) throw new TRPCError({ code: 'BAD_REQUEST', message: `query parameter '${name}' must be a whole number` });
  return Number(raw);
};

/**
 * The REST surface for curl users: each route is one tRPC procedure called through a server-side
 * caller, so validation, authorization and errors are exactly those of `/trpc`.
 */
const routes: Route[] = [
  { method: 'GET', pattern: /^\/tools$/, run: async (c, r) => {
      // `?format=openai|anthropic|mcp|toolgate` answers with the export, whose `tools` is the array to paste (ADR 0053).
      const formats = r.query.getAll('format');
      if (formats.length > 1) throw new TRPCError({ code: 'BAD_REQUEST', message: "query parameter 'format' is given more than once" });
      // `sources` rides beside `tools` (ADR 0067): where each tool source is, so a missing tool is explained.
      if (formats.length === 0) return { tools: await c.tools.list(), sources: await c.tools.sources() };
      return c.tools.list({ format: formats[0] as never });
    } },
  { method: 'GET', pattern: /^\/me$/, run: (c) => c.whoami() },
  { method: 'GET', pattern: /^\/tools\/sources$/, run: async (c) => ({ sources: await c.tools.sources() }) },
  { method: 'GET', pattern: /^\/tools\/held$/, run: async (c) => ({ held: await c.tools.held() }) },
  { method: 'POST', pattern: /^\/tools\/([^/]+)\/accept$/, run: (c, r, [tool]) =>
      c.tools.accept({ ...(typeof r.body === 'object' && r.body !== null ? r.body : {}), tool } as never) },
  { method: 'POST', pattern: /^\/tools\/invoke$/, run: (c, r) => c.tools.invoke(r.body as never) },
  { method: 'POST', pattern: /^\/tools\/explain$/, run: (c, r) => c.tools.explain(r.body as never) },
  { method: 'GET', pattern: /^\/approvals$/, run: (c, r) => {
      const limit = intParam(r.query, 'limit');
      const status = r.query.get('status');
      return c.approvals.list({ ...(limit !== undefined ? { limit } : {}), ...(status ? { status: status as never } : {}) });
    } },
  { method: 'POST', pattern: /^\/approvals$/, run: (c, r) => c.approvals.request(r.body as never) },
  { method: 'GET', pattern: /^\/approvals\/([^/]+)$/, run: (c, _r, [id]) => c.approvals.get({ id } as never) },
  { method: 'POST', pattern: /^\/approvals\/([^/]+)\/decide$/, run: (c, r, [id]) =>
      c.approvals.decide({ ...(typeof r.body === 'object' && r.body !== null ? r.body : {}), id } as never) },
  { method: 'GET', pattern: /^\/settings\/egress$/, run: (c) => c.settings.egress.get() },
  { method: 'PUT', pattern: /^\/settings\/egress$/, run: (c, r) => c.settings.egress.set(r.body as never) },
  { method: 'POST', pattern: /^\/settings\/egress\/allow$/, run: (c, r) => c.settings.egress.allow(r.body as never) },
  { method: 'GET', pattern: /^\/audit$/, run: (c, r) => {
      const limit = intParam(r.query, 'limit');
      const afterSeq = intParam(r.query, 'afterSeq');
      return c.audit.tail({ ...(limit !== undefined ? { limit } : {}), ...(afterSeq !== undefined ? { afterSeq } : {}) });
    } },
  { method: 'GET', pattern: /^\/audit\/verify$/, run: (c) => c.audit.verify() },
];

/** Whether a method is expected to carry a JSON body. */
export const restMethodHasBody = (method: string): boolean => method === 'POST' || method === 'PUT';

export function createRestHandler(appRouter: AppRouter) {
  const createCaller = createCallerFactory(appRouter);
  return async function handleRest(req: RestRequest): Promise<RestResponse> {
    const matching = routes.filter((route) => route.pattern.test(req.path));
    if (matching.length === 0) return error(404, 'NOT_FOUND', `no route ${req.path}`);
    const route = matching.find((r) => r.method === req.method);
    if (!route) return error(405, 'METHOD_NOT_SUPPORTED', `${req.method} is not supported on ${req.path}; use ${matching.map((r) => r.method).join(' or ')}`);
    if (!req.principal) return error(401, 'UNAUTHORIZED', 'missing or invalid bearer token');
    let params: string[];
    try {
      params = route.pattern.exec(req.path)!.slice(1).map((p) => decodeURIComponent(p));
    } catch {
      // A malformed percent-encoding (`%E0%A4%A`) is the client's fault, not an internal error.
      return error(400, 'BAD_REQUEST', `the path ${req.path.slice(0, 200)} has a malformed percent-encoding`);
    }
    try {
      const body = await route.run(createCaller(createContextInner({ principal: req.principal })), req, params);
      return { status: 200, body };
    } catch (cause) {
      const err = cause instanceof TRPCError ? cause : new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'internal error' });
      if (err.cause instanceof InsufficientScopeError) {
        return { status: 403, body: { error: { code: 'INSUFFICIENT_SCOPE', message: err.message } }, insufficientScope: err.cause.scope };
      }
      const issues = issueLines(err.cause);
      const message = err.code === 'INTERNAL_SERVER_ERROR' ? 'internal error' : issues ? `invalid request: ${issues.join('; ')}` : err.message;
      return { status: getHTTPStatusCodeFromError(err), body: { error: { code: err.code, message, ...(issues ? { issues } : {}) } } };
    }
  };
}

function error(status: number, code: string, message: string): RestResponse {
  return { status, body: { error: { code, message } } };
}

function issueLines(cause: unknown): string[] | undefined {
  const issues = (cause as { issues?: { path: PropertyKey[]; message: string }[] } | undefined)?.issues;
  if (!Array.isArray(issues)) return undefined;
  return issues.map((i) => (i.path.length ? `${i.path.map(String).join('.')}: ${i.message}` : i.message));
}
