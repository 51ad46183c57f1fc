import type { IncomingHttpHeaders } from 'node:http';
import { quoteHeader } from './host-names.js';

/** Methods a configured origin may use: every method a route answers (REST and tRPC; MCP ends a session with DELETE). */
const ALLOWED_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
/** Headers clients send: the bearer token, JSON bodies, tRPC's stream negotiation and MCP's session headers. */
const ALLOWED_HEADERS = ['authorization', 'content-type', 'trpc-accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'] as const;
/** Response headers a browser client needs to read: the 401 challenge and the MCP session id. */
const EXPOSED_HEADERS = 'www-authenticate, mcp-session-id';

/** The CORS headers of an actual (non-preflight) response to a configured origin. No credentials: tokens travel in headers, not cookies. */
export function corsResponseHeaders(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS, vary: 'Origin' };
}

/** Whether an OPTIONS request is a CORS preflight rather than a plain OPTIONS. */
export function isPreflight(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  return method === 'OPTIONS' && headers['access-control-request-method'] !== undefined;
}

/** The answer to a preflight from a configured origin: 204 with exactly what was asked and is allowed, else 403 naming what is not. */
export function answerPreflight(
  origin: string,
  headers: IncomingHttpHeaders,
): { status: 204; headers: Record<string, string> } | { status: 403; code: 'CORS_PREFLIGHT_REFUSED'; message: string } {
  const method = String(headers['access-control-request-method'] ?? '').trim();
  if (!(ALLOWED_METHODS as readonly string[]).includes(method)) {
    return { status: 403, code: 'CORS_PREFLIGHT_REFUSED', message: `method '${quoteHeader(method)}' is not allowed cross-origin (allowed: ${ALLOWED_METHODS.join(', ')})` };
  }
  const requested = String(headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name.length > 0);
  const refused = requested.find((name) => !(ALLOWED_HEADERS as readonly string[]).includes(name));
  if (refused !== undefined) {
    return { status: 403, code: 'CORS_PREFLIGHT_REFUSED', message: `request header '${quoteHeader(refused)}' is not allowed cross-origin (allowed: ${ALLOWED_HEADERS.join(', ')})` };
  }
  const answer: Record<string, string> = {
    ...corsResponseHeaders(origin),
    'access-control-allow-methods': ALLOWED_METHODS.join(', '),
    'access-control-allow-headers': ALLOWED_HEADERS.join(', '),
    'access-control-max-age': '600',
    vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
  };
  // Chrome asks a public page's permission to reach a loopback or private address; the operator gave it by listing the origin.
  if (String(headers['access-control-request-private-network'] ?? '').toLowerCase() === 'true') answer['access-control-allow-private-network'] = 'true';
  return { status: 204, headers: answer };
}
