import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { canonicalConfiguredHost } from './host-names.js';

/**
 * The approval page's Content-Security-Policy (ADR 0052): its own script, style and API only, no
 * inline code, no frames, no forms that submit, no base to rewrite relative URLs with.
 */
export const APPROVAL_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The page's path below the server's base; the id is its one segment after this. */
export const APPROVAL_PAGE_PREFIX = '/approvals/';
/** Where the page's script and style sheet are served (relative from the page as `../approval-page/…`). */
export const APPROVAL_ASSETS_PREFIX = '/approval-page/';

/** The longest id the page is served for: the API's bound on approval ids. */
const MAX_ID_LENGTH = 128;

const PAGE_HEADERS = {
  'content-security-policy': APPROVAL_PAGE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  // The page opens no other window and may not be opened into another's browsing context group.
  'cross-origin-opener-policy': 'same-origin',
  // Another site may not embed the page or its assets (they hold no data, but there is no reason to).
  'cross-origin-resource-policy': 'same-origin',
} as const;

/**
 * The URL of the page where an approver decides approval `id`: `<base>/approvals/<id>`, the id
 * percent-encoded as one path segment. `base` is an absolute URL, possibly with a path (a reverse
 * proxy's prefix); a trailing slash is dropped.
 */
export function approvalPageUrl(base: string, id: string): string {
  // `.` and `..` (in any spelling, %2E too) are dot segments a browser resolves away: no page has them as its id.
  if (id === '' || id === '.' || id === '..') throw new Error(`'${id}' cannot be an approval id in a URL path`);
  return `${base.replace(/\/+$/, '')}${APPROVAL_PAGE_PREFIX}${encodeURIComponent(id)}`;
}

/**
 * The base that approval URLs are built on: the operator's `TOOLGATE_PUBLIC_URL` when set (what
 * clients behind a proxy reach), else the address the server listens on. An any-address
 * (0.0.0.0, ::) is no one's host, so it becomes the loopback of its family: reachable from this
 * host only, which is why a server that others reach should set `TOOLGATE_PUBLIC_URL`.
 */
export function approvalPageBase(options: { readonly publicUrl?: string | undefined; readonly bindHost: string; readonly port: number }): string {
  if (options.publicUrl !== undefined) return options.publicUrl;
  const bound = canonicalConfiguredHost(options.bindHost);
  // Config validation has accepted the host already; a name it cannot read is served as loopback.
  let host = 'name' in bound ? bound.name : '127.0.0.1';
  if (host === '0.0.0.0') host = '127.0.0.1';
  else if (host === '[::]') host = '[::1]';
  return `http://${host}:${options.port}`;
}

/**
 * `approvalUrl` for the MCP face: approval ids to page URLs on `approvalPageBase`, reading the
 * port the server listens on when asked (it is known only once it listens; port 0 picks one).
 * `server` is a getter because the face is made before the server that carries it.
 */
export function approvalUrlOf(
  config: { readonly publicUrl?: string | undefined; readonly host: string; readonly port: number },
  server: () => Pick<Server, 'address'> | undefined,
): (id: string) => string {
  return (id) => {
    const address = server()?.address() ?? null;
    const port = address !== null && typeof address === 'object' ? address.port : config.port;
    return approvalPageUrl(approvalPageBase({ publicUrl: config.publicUrl, bindHost: config.host, port }), id);
  };
}

/** What the page is asked for: the page of one id, one of its assets, or a path it does not serve. */
type PageRoute = { readonly kind: 'page' } | { readonly kind: 'asset'; readonly type: string; readonly body: Buffer } | { readonly kind: 'bad-id'; readonly message: string };

/** The approval page: one static HTML document, one script and one style sheet, read at start. */
export interface ApprovalPage {
  /** Whether `path` is the page or one of its assets (the route belongs to the page, good or bad). */
  handles(path: string): boolean;
  /** Answers a request for a path that `handles` accepted. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): void;
  /**
   * Whether a request the Host/Origin guard refused only as cross-site is a browser's top-level
   * navigation to the page itself: an approver following a link from a web-based chat client.
   */
  isCrossSiteNavigation(req: IncomingMessage, path: string): boolean;
}

/** Reads the page's files once; a missing file stops the server at start rather than at the first approval. */
export function createApprovalPage(): ApprovalPage {
  const file = (name: string) => readFileSync(new URL(`./approval-page/${name}`, import.meta.url));
  const html = file('page.html');
  const assets = new Map<string, { type: string; body: Buffer }>([
    ['page.js', { type: 'text/javascript; charset=utf-8', body: file('page.js') }],
    ['page.css', { type: 'text/css; charset=utf-8', body: file('page.css') }],
  ]);

  const route = (path: string): PageRoute | undefined => {
    if (path.startsWith(APPROVAL_ASSETS_PREFIX)) {
      const asset = assets.get(path.slice(APPROVAL_ASSETS_PREFIX.length));
      return asset ? { kind: 'asset', ...asset } : undefined;
    }
    if (!path.startsWith(APPROVAL_PAGE_PREFIX)) return undefined;
    const segment = path.slice(APPROVAL_PAGE_PREFIX.length);
    // One segment: `/approvals/a/b` is no page (an encoded slash, `%2F`, stays inside the segment).
    if (segment === '' || segment.includes('/')) return undefined;
    let id: string;
    try {
      id = decodeURIComponent(segment);
    } catch {
      return { kind: 'bad-id', message: 'the approval id in the path has a malformed percent-encoding' };
    }
    if (id.length > MAX_ID_LENGTH) return { kind: 'bad-id', message: `an approval id is at most ${MAX_ID_LENGTH} characters` };
    return { kind: 'page' };
  };

  const send = (req: IncomingMessage, res: ServerResponse, status: number, type: string, body: Buffer) => {
    res.writeHead(status, { ...PAGE_HEADERS, 'content-type': type, 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  const sendError = (req: IncomingMessage, res: ServerResponse, status: number, code: string, message: string, extra: Record<string, string> = {}) => {
    const body = Buffer.from(JSON.stringify({ error: { code, message } }));
    res.writeHead(status, { ...PAGE_HEADERS, ...extra, 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  return {
    handles: (path) => route(path) !== undefined,
    serve(req, res, path) {
      const found = route(path);
      if (!found) return sendError(req, res, 404, 'NOT_FOUND', 'no such page');
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(req, res, 405, 'METHOD_NOT_SUPPORTED', 'use GET', { allow: 'GET, HEAD' });
      if (found.kind === 'bad-id') return sendError(req, res, 400, 'BAD_REQUEST', found.message);
      if (found.kind === 'asset') return send(req, res, 200, found.type, found.body);
      // The same document for every id: the page holds no data, it reads the id from its own address.
      return send(req, res, 200, 'text/html; charset=utf-8', html);
    },
    isCrossSiteNavigation(req, path) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      if (route(path)?.kind !== 'page') return false;
      const raw = req.rawHeaders;
      const values = (name: string) => raw.filter((_, i) => i % 2 === 1 && raw[i - 1]!.toLowerCase() === name).map((v) => v.toLowerCase());
      const mode = values('sec-fetch-mode');
      const dest = values('sec-fetch-dest');
      const user = values('sec-fetch-user');
      // Only a top-level document navigation: never a fetch, a frame, an <img> or a <script>.
      return mode.length === 1 && mode[0] === 'navigate' && dest.length === 1 && dest[0] === 'document' && user.length <= 1 && values('origin').length === 0;
    },
  };
}
