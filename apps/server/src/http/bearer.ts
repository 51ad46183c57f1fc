import type { IncomingMessage } from 'node:http';
import type { Authentication, PrincipalDirectory } from '@toolgate/contracts';

/** What a request's credential came to: the directory's answer, or `missing` when it sent none. */
export type RequestAuthentication = Authentication | { readonly outcome: 'missing' };

/** The longest `Authorization` value read; a longer one is refused without being parsed. */
const MAX_AUTHORIZATION_CHARS = 8192;
const BEARER = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i;

/**
 * Reads `Authorization: Bearer <token>` (RFC 6750 §2.1) and asks the directory. A header that is
 * not a bearer credential is refused here, with a reason that does not quote it.
 */
export async function authenticateRequest(req: IncomingMessage, directory: PrincipalDirectory): Promise<RequestAuthentication> {
  // Node keeps only the first of two Authorization headers; a proxy may read the other, so the
  // request is refused rather than judged by one of them (RFC 6750 §3.1: one credential per request).
  if ((req.headersDistinct['authorization']?.length ?? 0) > 1) return { outcome: 'refused', reason: 'the request has more than one Authorization header' };
  const header = req.headers.authorization;
  if (header === undefined || header === '') return { outcome: 'missing' };
  if (header.length > MAX_AUTHORIZATION_CHARS) return { outcome: 'refused', reason: `the Authorization header is longer than ${MAX_AUTHORIZATION_CHARS} characters` };
  const match = BEARER.exec(header);
  if (!match) return { outcome: 'refused', reason: 'the Authorization header is not "Bearer <token>"' };
  return directory.authenticate(match[1]!);
}

/**
 * How a credential that is no principal's is answered, on every face alike: 401 (missing or
 * refused, with the reason) or 503 (the issuer cannot say now). tRPC words it the same way in
 * its own error shape (libs/api `authedProcedure`).
 */
export function credentialRefusal(auth: Exclude<RequestAuthentication, { outcome: 'principal' }>): { readonly status: 401 | 503; readonly message: string } {
  if (auth.outcome === 'unavailable') return { status: 503, message: `cannot check the bearer token now: ${auth.reason}; try again shortly` };
  return { status: 401, message: auth.outcome === 'missing' ? 'missing bearer token' : `invalid bearer token: ${auth.reason}` };
}

/** Where clients learn how to get a token for this server (RFC 9728), and who issues them. */
export interface ProtectedResource {
  /** TOOLGATE_PUBLIC_URL's origin when set: what clients reach; else the request's own Host. */
  readonly publicOrigin?: string;
  /** The OpenID issuers whose tokens are accepted; none for the principals file. */
  readonly authorizationServers: readonly string[];
  /** The scopes a token may carry, as the metadata names them. */
  readonly scopes: readonly string[];
}

/** The two resources with metadata of their own: the whole server and its MCP endpoint. */
export type ResourcePath = '' | '/mcp';

export const PROTECTED_RESOURCE_METADATA = '/.well-known/oauth-protected-resource';

/**
 * The server's origin as this request reached it. The Host/Origin guard has already checked the
 * Host against the names the server answers, so echoing it names no host the operator did not allow.
 */
export function originOf(req: IncomingMessage, resource: ProtectedResource): string {
  return resource.publicOrigin ?? `http://${req.headers.host ?? '127.0.0.1'}`;
}

/** The RFC 9728 metadata document of `path`. */
export function resourceMetadata(req: IncomingMessage, resource: ProtectedResource, path: ResourcePath): Record<string, unknown> {
  return {
    resource: `${originOf(req, resource)}${path}`,
    ...(resource.authorizationServers.length > 0 ? { authorization_servers: resource.authorizationServers } : {}),
    ...(resource.scopes.length > 0 ? { scopes_supported: resource.scopes } : {}),
    bearer_methods_supported: ['header'],
    resource_name: 'Toolgate',
  };
}

/**
 * The `WWW-Authenticate` value of a 401 (RFC 6750 §3, RFC 9728 §5.1): where the metadata is,
 * and `error="invalid_token"` with the reason when a token was sent and refused.
 */
export function bearerChallenge(req: IncomingMessage, resource: ProtectedResource, path: ResourcePath, auth: RequestAuthentication): string {
  const parts = [`Bearer realm="toolgate"`, `resource_metadata="${quoted(`${originOf(req, resource)}${PROTECTED_RESOURCE_METADATA}${path}`)}"`];
  if (auth.outcome === 'refused') parts.push('error="invalid_token"', `error_description="${quoted(auth.reason)}"`);
  return parts.join(', ');
}

/** A quoted-string's content: printable ASCII without `"` or `\` (RFC 6750 §3's error_description rule). */
function quoted(text: string): string {
  return text.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/**
 * The `WWW-Authenticate` value of a 403 for a token without the call's scope (RFC 6750 §3.1):
 * `error="insufficient_scope"` and the scope a new token must carry.
 */
export function scopeChallenge(req: IncomingMessage, resource: ProtectedResource, path: ResourcePath, scope: string): string {
  return [
    `Bearer realm="toolgate"`,
    `resource_metadata="${quoted(`${originOf(req, resource)}${PROTECTED_RESOURCE_METADATA}${path}`)}"`,
    'error="insufficient_scope"',
    `scope="${quoted(scope)}"`,
    `error_description="this call needs a token with the scope '${quoted(scope)}'"`,
  ].join(', ');
}
