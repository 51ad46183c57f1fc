import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import {
  EgressDeniedError,
  ToolAbortedError,
  ToolError,
  type HttpClient,
  type HttpRequest,
  type HttpResponse,
} from '@toolgate/contracts';
import { Agent, type Dispatcher } from 'undici';
import {
  classifyAddress,
  classifyParsedAddress,
  describeAddressClass,
  parseCidr,
  parseIpLiteral,
  type AddressClass,
  type AllowedCidr,
  type IpAddress,
} from './address-policy.js';
import { bareHostname, parseTargetUrl } from './target-url.js';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Resolves a host name to all of its addresses (the seam tests use to script DNS answers). */
export type Resolver = (host: string) => Promise<readonly ResolvedAddress[]>;

export interface GuardedHttpClientOptions {
  /**
   * Ranges the operator opened (`TOOLGATE_EGRESS_ALLOWED_CIDRS`), e.g. `['10.0.0.0/8']`.
   * Addresses in them are reachable even though they are not public. Default: none.
   */
  readonly allowedCidrs?: readonly string[];
  /** Replaces the system resolver (`getaddrinfo`, so `/etc/hosts` applies). */
  readonly resolver?: Resolver;
  /** Time limit of a request that sets none: connect, headers and body together. Default 30 s. */
  readonly defaultTimeoutMs?: number;
  /** Body cap of a request that sets none. Default 1 MiB. */
  readonly defaultMaxBytes?: number;
  /** Sent as `user-agent` unless the request sets its own. */
  readonly userAgent?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BYTES = 1024 * 1024;
const DEFAULT_USER_AGENT = 'Toolgate/0.1 (+https://github.com/toolgate)';
/** The TCP/TLS connect phase alone; the request's total deadline usually fires first. */
const CONNECT_TIMEOUT_MS = 10_000;

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Visible ASCII, Latin-1 and horizontal whitespace: no CR, LF or NUL, so no header injection.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers the client owns: framing and routing must match the connection it opened. */
const FORBIDDEN_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'content-length',
]);
const METHODS = new Set(['GET', 'POST', 'HEAD']);
const TLS_CERTIFICATE_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const systemResolver: Resolver = async (host) => dnsLookup(host, { all: true, verbatim: true });

/**
 * The guarded HTTP client: every outbound request of every tool and search provider goes
 * through it. It refuses non-HTTP schemes and credentials in URLs, classifies IP literals before
 * connecting, and resolves host names itself inside the connection's `lookup` hook, so the
 * socket dials exactly the addresses that were checked (a second, rebinding DNS answer is never
 * consulted). An answer containing any non-public address is refused whole. Bodies are read up
 * to a byte cap (then the connection is dropped), one deadline covers connect, headers and body,
 * and redirects are returned, never followed.
 */
export class GuardedHttpClient implements HttpClient {
  private readonly allowed: readonly AllowedCidr[];
  private readonly resolver: Resolver;
  private readonly defaultTimeoutMs: number;
  private readonly defaultMaxBytes: number;
  private readonly userAgent: string;
  private readonly agent: Agent;

  constructor(options: GuardedHttpClientOptions = {}) {
    this.allowed = (options.allowedCidrs ?? []).map((entry) => parseCidr(entry.trim()));
    this.resolver = options.resolver ?? systemResolver;
    this.defaultTimeoutMs = positiveInteger(options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS, 'defaultTimeoutMs');
    this.defaultMaxBytes = nonNegativeInteger(options.defaultMaxBytes ?? DEFAULT_MAX_BYTES, 'defaultMaxBytes');
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    // Pooled connections are safe to reuse: each was dialed to an address checked when it opened.
    this.agent = new Agent({
      connect: { lookup: this.guardedLookup, timeout: CONNECT_TIMEOUT_MS },
      keepAliveTimeout: 4_000,
    });
  }

  /** The verdict this client's policy gives one address (for diagnostics and the console). */
  classify(ip: string): AddressClass {
    return classifyAddress(ip, this.allowed);
  }

  async request(req: HttpRequest): Promise<HttpResponse> {
    const url = parseTargetUrl(req.url);
    const hostname = bareHostname(url);
    const method = req.method ?? 'GET';
    if (!METHODS.has(method)) throw new ToolError(`HTTP method '${String(method)}' is not supported`, 'INVALID_REQUEST');
    if (req.body !== undefined && method !== 'POST') {
      throw new ToolError(`a ${method} request cannot carry a body`, 'INVALID_REQUEST');
    }
    const headers = this.buildHeaders(req.headers);
    const timeoutMs = positiveInteger(req.timeoutMs ?? this.defaultTimeoutMs, 'timeoutMs');
    const maxBytes = nonNegativeInteger(req.maxBytes ?? this.defaultMaxBytes, 'maxBytes');

    // A literal is dialed without any lookup, so it is judged here, before a socket exists.
    const literal = parseIpLiteral(hostname);
    if (literal) this.assertAllowed(url.hostname, [literal], 'is');
    if (req.signal?.aborted) throw new ToolAbortedError();

    // One deadline for connect, headers and body; the caller's signal cancels the same way.
    const exchange = new CappedExchange(maxBytes, url.host);
    const timer = setTimeout(() => exchange.cancel(new DeadlineExceeded()), timeoutMs);
    const onCallerAbort = () => exchange.cancel(new ToolAbortedError());
    req.signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      this.agent.dispatch(
        { origin: url.origin, path: `${url.pathname}${url.search}`, method, headers, body: req.body ?? null },
        exchange,
      );
      const { status, headers: responseHeaders, body, truncated } = await exchange.result;
      return { status, headers: responseHeaders, body, truncated, url: url.href };
    } catch (err) {
      if (err instanceof DeadlineExceeded) throw new ToolError(`request to '${url.host}' timed out after ${timeoutMs} ms`, 'TIMEOUT');
      throw translateNetworkError(err, url.host);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  /** Closes pooled connections; in-flight requests finish first. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /**
   * Node's socket calls this instead of `dns.lookup` for every new connection to a host name.
   * Whatever it returns is what the socket dials, so check-then-use cannot be split by DNS.
   */
  private readonly guardedLookup: LookupFunction = (hostname, options, callback) => {
    this.resolveChecked(hostname).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const usable = wanted === 0 ? addresses : addresses.filter((a) => a.family === wanted);
        const first = usable[0];
        if (!first) {
          callback(new ToolError(`'${hostname}' has no IPv${wanted} address`, 'DNS_FAILED'), '', 0);
        } else if (options.all) {
          callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
        } else {
          callback(null, first.address, first.family);
        }
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };

  private async resolveChecked(hostname: string): Promise<ResolvedAddress[]> {
    const literal = parseIpLiteral(hostname);
    if (literal) {
      this.assertAllowed(hostname, [literal], 'is');
      return [toResolved(literal)];
    }
    let answer: readonly ResolvedAddress[];
    try {
      answer = await this.resolver(hostname);
    } catch {
      throw new ToolError(`could not resolve host '${hostname}'`, 'DNS_FAILED');
    }
    if (answer.length === 0) throw new ToolError(`could not resolve host '${hostname}'`, 'DNS_FAILED');
    const parsed = answer.map((a) => parseIpLiteral(a.address));
    this.assertAllowed(hostname, parsed, 'resolves to');
    // Dial the canonical form of what was checked, never the resolver's own spelling of it.
    return (parsed as IpAddress[]).map(toResolved);
  }

  /** Refuses the whole answer if any one address in it is not allowed (or not an address at all). */
  private assertAllowed(host: string, addresses: ReadonlyArray<IpAddress | undefined>, verb: 'is' | 'resolves to'): void {
    for (const address of addresses) {
      const verdict: AddressClass = address ? classifyParsedAddress(address, this.allowed) : { allowed: false, range: 'invalid' };
      if (verdict.allowed) continue;
      const share = addresses.length > 1 ? ` (one of its ${addresses.length} addresses)` : '';
      // The address itself is not named for host names: it would map the internal network.
      throw new EgressDeniedError(host, `${verb} ${describeAddressClass(verdict)}${share}`);
    }
  }

  private buildHeaders(given: Readonly<Record<string, string>> | undefined): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [rawName, value] of Object.entries(given ?? {})) {
      const name = rawName.toLowerCase();
      if (!HEADER_NAME.test(name)) throw new ToolError(`'${rawName.slice(0, 64)}' is not a valid header name`, 'INVALID_REQUEST');
      if (FORBIDDEN_HEADERS.has(name)) throw new ToolError(`the '${name}' header is set by the client itself`, 'INVALID_REQUEST');
      if (typeof value !== 'string' || !HEADER_VALUE.test(value)) {
        throw new ToolError(`the value of header '${name}' contains characters not allowed in HTTP headers`, 'INVALID_REQUEST');
      }
      headers[name] = value;
    }
    headers['user-agent'] ??= this.userAgent;
    headers['accept'] ??= '*/*';
    headers['accept-encoding'] ??= 'gzip, br';
    return headers;
  }
}

function toResolved(address: IpAddress): ResolvedAddress {
  return { address: address.toString(), family: address.kind() === 'ipv4' ? 4 : 6 };
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
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

/** The deadline passed; reported as a TIMEOUT ToolError naming the host. */
class DeadlineExceeded extends Error {}
/** The body reached its cap; used to abort the exchange, never reported. */
class CapReached extends Error {}

interface Collected {
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
class CappedExchange implements Dispatcher.DispatchHandler {
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

function isZlibError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}

/** Maps a transport failure to a message that names the host and the failure class, nothing internal. */
function translateNetworkError(err: unknown, host: string): ToolError {
  if (err instanceof ToolError) return err;
  const code = errorCode(err);
  switch (code) {
    case 'ECONNREFUSED':
      return new ToolError(`connection to '${host}' was refused`, 'CONNECTION_REFUSED');
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return new ToolError(`the connection to '${host}' closed before the response was complete`, 'CONNECTION_CLOSED');
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      return new ToolError(`'${host}' is unreachable`, 'HOST_UNREACHABLE');
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new ToolError(`connecting to '${host}' timed out`, 'TIMEOUT');
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new ToolError(`'${host}' stopped responding`, 'TIMEOUT');
    case 'UND_ERR_HEADERS_OVERFLOW':
      return new ToolError(`the response headers from '${host}' are too large`, 'BAD_RESPONSE');
  }
  if (code && TLS_CERTIFICATE_CODES.has(code)) {
    return new ToolError(`the TLS certificate of '${host}' was rejected (${code})`, 'TLS_FAILED');
  }
  if (code && (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || code === 'EPROTO')) {
    return new ToolError(`the TLS handshake with '${host}' failed`, 'TLS_FAILED');
  }
  if (code && code.startsWith('HPE_')) {
    return new ToolError(`'${host}' sent a malformed HTTP response`, 'BAD_RESPONSE');
  }
  return new ToolError(`the request to '${host}' failed`, 'NETWORK_ERROR');
}

/** The error code, looking through happy-eyeballs' AggregateError and `cause` wrappers. */
function errorCode(err: unknown, depth = 0): string | undefined {
  if (typeof err !== 'object' || err === null || depth > 3) return undefined;
  const { code, errors, cause } = err as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string') return code;
  if (Array.isArray(errors) && errors.length > 0) return errorCode(errors[0], depth + 1);
  return errorCode(cause, depth + 1);
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new ToolError(`${name} must be a positive integer`, 'INVALID_REQUEST');
  return value;
}

function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new ToolError(`${name} must be a non-negative integer`, 'INVALID_REQUEST');
  return value;
}
