import {
  canonicalConfiguredHost,
  canonicalReceivedName,
  isLoopbackName,
  isWildcardAddress,
  LOOPBACK_NAMES_DESCRIPTION,
  parseReceivedOrigin,
  quoteHeader,
  serializeOrigin,
  splitHostAndPort,
} from './host-names.js';

/** What the guard reads of a request; node's `IncomingMessage` satisfies it. */
export interface GuardedRequest {
  readonly url?: string | undefined;
  readonly httpVersion: string;
  /** Header names and values as sent, so duplicates are seen (node folds or drops them in `headers`). */
  readonly rawHeaders: readonly string[];
  /** The local port the request arrived on: the port of the server's own origins. */
  readonly socket: { readonly localPort?: number | undefined };
}

/** Who may address the HTTP face, from the validated configuration. */
export interface HostGuardOptions {
  /** The listen address (TOOLGATE_HOST). A specific address or name is itself allowed; 0.0.0.0 and :: are not. */
  readonly bindHost: string;
  /** Canonical host names from TOOLGATE_ALLOWED_HOSTS. */
  readonly allowedHosts: readonly string[];
  /** TOOLGATE_PUBLIC_URL: its host is allowed and its origin is one of the server's own. */
  readonly publicUrl?: string | undefined;
  /** Canonical origins from TOOLGATE_ALLOWED_ORIGINS, answered with CORS headers. */
  readonly allowedOrigins: readonly string[];
}

/** A refused request: the status, a stable code and a message that names the rule. */
export interface GuardRefusal {
  readonly status: 400 | 403 | 421;
  readonly code: 'BAD_REQUEST_TARGET' | 'BAD_HOST_HEADER' | 'HOST_NOT_ALLOWED' | 'ORIGIN_NOT_ALLOWED' | 'CROSS_SITE_NOT_ALLOWED';
  readonly message: string;
}

/** The guard's answer. `url` is the request target resolved against nothing the client chose. */
export type GuardVerdict =
  | { readonly ok: true; readonly url: URL; readonly corsOrigin?: string }
  | { readonly ok: false; readonly url?: URL; readonly refusal: GuardRefusal };

/** Checks Host, request target and Origin of every request before any route sees it. */
export interface HostGuard {
  check(req: GuardedRequest): GuardVerdict;
  /** One line for the start-up log: which hosts and origins are served. */
  readonly summary: string;
}

// Routes are matched against this fixed base, never against a host the client sent.
const BASE = 'toolgate.invalid';
const HOST_HINT = 'set TOOLGATE_ALLOWED_HOSTS (or TOOLGATE_PUBLIC_URL) to serve another name';
const ORIGIN_HINT = 'set TOOLGATE_ALLOWED_ORIGINS to let a browser origin call the gateway';

/**
 * Builds the DNS-rebinding and cross-origin guard. After DNS rebinding a foreign page is
 * same-origin with the gateway in the browser's eyes, but its requests still carry the page's
 * own host name in `Host`; and a cross-origin page's requests carry its `Origin`. Refusing both
 * here, before routing, covers every route, present and future.
 */
export function createHostGuard(options: HostGuardOptions): HostGuard {
  const extraHosts = new Set(options.allowedHosts);
  const bound = canonicalConfiguredHost(options.bindHost);
  // A client can only send an address literal as Host if its page was loaded from that address,
  // so allowing the specific bound address admits no rebinding; an any-address is no one's host.
  if ('name' in bound && !isWildcardAddress(bound.name) && !isLoopbackName(bound.name)) extraHosts.add(bound.name);
  let publicOrigin: string | undefined;
  if (options.publicUrl !== undefined) {
    const url = new URL(options.publicUrl);
    extraHosts.add(url.hostname);
    publicOrigin = url.origin;
  }
  const corsOrigins = new Set(options.allowedOrigins);
  const hostAllowed = (name: string) => isLoopbackName(name) || extraHosts.has(name);

  const checkAuthority = (value: string, what: 'Host' | 'request target'): GuardRefusal | undefined => {
    const split = splitHostAndPort(value);
    if (!split) {
      return what === 'Host'
        ? { status: 400, code: 'BAD_HOST_HEADER', message: `Host '${quoteHeader(value)}' is not host[:port]` }
        : { status: 400, code: 'BAD_REQUEST_TARGET', message: `the request target's authority '${quoteHeader(value)}' is not host[:port]` };
    }
    const name = canonicalReceivedName(split.host);
    if ('problem' in name) {
      return { status: 421, code: 'HOST_NOT_ALLOWED', message: `${what} '${quoteHeader(split.host)}' ${name.problem}; only canonical spellings are served` };
    }
    if (!hostAllowed(name.name)) {
      return { status: 421, code: 'HOST_NOT_ALLOWED', message: `${what} '${quoteHeader(name.name)}' is not a name this server answers to (DNS rebinding guard); ${HOST_HINT}` };
    }
    return undefined;
  };

  const check = (req: GuardedRequest): GuardVerdict => {
    const target = parseTarget(req.url ?? '');
    if ('refusal' in target) return { ok: false, refusal: target.refusal };
    const { url } = target;
    const refuse = (refusal: GuardRefusal): GuardVerdict => ({ ok: false, url, refusal });

    const hosts = headerValues(req.rawHeaders, 'host');
    if (hosts.length > 1) return refuse({ status: 400, code: 'BAD_HOST_HEADER', message: `the request carries ${hosts.length} Host headers; send exactly one` });
    if (hosts.length === 0) {
      return req.httpVersion === '1.0'
        ? refuse({ status: 421, code: 'HOST_NOT_ALLOWED', message: `the request has no Host header, so it cannot be told from a DNS-rebound one; send Host` })
        : refuse({ status: 400, code: 'BAD_HOST_HEADER', message: 'an HTTP/1.1 request must carry a Host header' });
    }
    const hostRefusal = checkAuthority(hosts[0]!, 'Host');
    if (hostRefusal) return refuse(hostRefusal);
    // RFC 9112 lets an absolute-form target override Host; both must pass, so neither can smuggle a name.
    if (target.authority !== undefined) {
      const targetRefusal = checkAuthority(target.authority, 'request target');
      if (targetRefusal) return refuse(targetRefusal);
    }

    const origins = headerValues(req.rawHeaders, 'origin');
    if (origins.length > 1) return refuse({ status: 403, code: 'ORIGIN_NOT_ALLOWED', message: `the request carries ${origins.length} Origin headers; send at most one` });
    if (origins.length === 1) {
      const value = origins[0]!;
      if (value.toLowerCase() === 'null') {
        return refuse({ status: 403, code: 'ORIGIN_NOT_ALLOWED', message: "Origin 'null' (a sandboxed frame, a file: page or a cross-site redirect) is never allowed" });
      }
      const origin = parseReceivedOrigin(value);
      if ('problem' in origin) return refuse({ status: 403, code: 'ORIGIN_NOT_ALLOWED', message: `Origin '${quoteHeader(value)}' ${origin.problem}` });
      const serialized = serializeOrigin(origin);
      if (corsOrigins.has(serialized)) return { ok: true, url, corsOrigin: serialized };
      const localPort = req.socket.localPort;
      const own = origin.scheme === 'http' && localPort !== undefined && origin.port === localPort && hostAllowed(origin.name);
      if (own || serialized === publicOrigin) return { ok: true, url };
      return refuse({ status: 403, code: 'ORIGIN_NOT_ALLOWED', message: `Origin '${quoteHeader(serialized)}' may not call this server; ${ORIGIN_HINT}` });
    }

    // A browser that sends no Origin (a no-cors GET from an <img> or <script>) still says where it came from.
    const sites = headerValues(req.rawHeaders, 'sec-fetch-site').map((site) => site.toLowerCase());
    if (sites.length > 0 && !(sites.length === 1 && (sites[0] === 'same-origin' || sites[0] === 'none'))) {
      return refuse({
        status: 403,
        code: 'CROSS_SITE_NOT_ALLOWED',
        message: `a browser request from another site (Sec-Fetch-Site: ${quoteHeader(sites.join(', '))}) without an allowed Origin is refused; ${ORIGIN_HINT}`,
      });
    }
    return { ok: true, url };
  };

  const hosts = [LOOPBACK_NAMES_DESCRIPTION, ...extraHosts].join(', ');
  const cors = corsOrigins.size > 0 ? `CORS for ${[...corsOrigins].join(', ')}` : 'no CORS (TOOLGATE_ALLOWED_ORIGINS unset)';
  const summary = `HTTP answers Host ${hosts}; browser origins: the server's own${publicOrigin ? ` and ${publicOrigin}` : ''}; ${cors}`;
  return { check, summary };
}

/** The request target as a URL on the fixed base, plus the authority of an absolute-form target. */
function parseTarget(target: string): { url: URL; authority?: string } | { refusal: GuardRefusal } {
  const bad = (message: string) => ({ refusal: { status: 400, code: 'BAD_REQUEST_TARGET', message } as const });
  let authority: string | undefined;
  let pathAndQuery = target;
  if (!target.startsWith('/')) {
    const absolute = /^http:\/\/([^/?#]*)([/?][^#]*)?$/i.exec(target);
    if (!absolute) return bad(`the request target '${quoteHeader(target)}' must be a path, or an http:// URL`);
    authority = absolute[1]!;
    const rest = absolute[2] ?? '/';
    pathAndQuery = rest.startsWith('/') ? rest : `/${rest}`;
  }
  let url: URL;
  try {
    // Concatenated, not resolved: `//evil.example/x` must stay a path, never become a host.
    url = new URL(`http://${BASE}${pathAndQuery}`);
  } catch {
    return bad(`the request target '${quoteHeader(target)}' is not a valid path`);
  }
  if (url.host !== BASE) return bad(`the request target '${quoteHeader(target)}' is not a valid path`);
  return authority === undefined ? { url } : { url, authority };
}

function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === name) values.push(rawHeaders[i + 1]!);
  }
  return values;
}
