import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import {
  EgressDeniedError,
  ToolAbortedError,
  ToolError,
  type HttpRequest,
  type HttpResponse,
  type HttpStreamRequest,
  type HttpStreamResponse,
  type StreamingHttpClient,
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
import { CappedExchange, flattenHeaders } from './capped-exchange.js';
import { translateNetworkError } from './network-errors.js';
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
const STREAM_METHODS = new Set(['GET', 'POST', 'DELETE']);

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
export class GuardedHttpClient implements StreamingHttpClient {
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

  /**
   * Like {@link request}, but returns at the headers and hands the body over as it arrives (an
   * SSE stream may never end; the caller's signal or `cancel()` ends it). The same address
   * checks, header rules and no redirects; the body is asked for and accepted only unencoded,
   * since it is not read whole here.
   */
  async stream(req: HttpStreamRequest): Promise<HttpStreamResponse> {
    const url = parseTargetUrl(req.url);
    const hostname = bareHostname(url);
    const method = req.method;
    if (!STREAM_METHODS.has(method)) throw new ToolError(`HTTP method '${String(method)}' is not supported`, 'INVALID_REQUEST');
    if (req.body !== undefined && method !== 'POST') throw new ToolError(`a ${method} request cannot carry a body`, 'INVALID_REQUEST');
    const headers = this.buildHeaders({ ...req.headers, 'accept-encoding': 'identity' });
    const timeoutMs = positiveInteger(req.headersTimeoutMs ?? this.defaultTimeoutMs, 'headersTimeoutMs');
    const literal = parseIpLiteral(hostname);
    if (literal) this.assertAllowed(url.hostname, [literal], 'is');
    if (req.signal?.aborted) throw new ToolAbortedError();

    // One controller ends the exchange: the caller's signal, the headers deadline, or cancel().
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DeadlineExceeded());
    }, timeoutMs);
    const onCallerAbort = () => controller.abort(new ToolAbortedError());
    req.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const release = () => req.signal?.removeEventListener('abort', onCallerAbort);
    let answer: Dispatcher.ResponseData;
    try {
      answer = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method,
        headers,
        body: req.body ?? null,
        signal: controller.signal,
        // The body of an event stream is quiet for as long as the server has nothing to say.
        bodyTimeout: 0,
      });
    } catch (err) {
      release();
      if (timedOut) throw new ToolError(`request to '${url.host}' timed out after ${timeoutMs} ms`, 'TIMEOUT');
      if (req.signal?.aborted) throw new ToolAbortedError();
      throw translateNetworkError(err, url.host);
    } finally {
      clearTimeout(timer);
    }
    const responseHeaders = flattenHeaders(answer.headers);
    const encoding = responseHeaders['content-encoding']?.trim().toLowerCase();
    if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
      release();
      answer.body.on('error', () => undefined);
      answer.body.destroy();
      throw new ToolError(`the response from '${url.host}' is encoded (${encoding.slice(0, 32)}), though an unencoded one was asked for`, 'BAD_RESPONSE');
    }
    const body = answer.body;
    // A body dropped unread (cancel, abort) errors with nobody iterating it; iteration sees errors itself.
    body.on('error', () => undefined);
    const host = url.host;
    const signal = req.signal;
    async function* chunks(): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of body) yield chunk as Uint8Array;
      } catch (err) {
        if (signal?.aborted) throw new ToolAbortedError();
        throw translateNetworkError(err, host);
      } finally {
        release();
        body.destroy();
      }
    }
    return {
      status: answer.statusCode,
      headers: responseHeaders,
      url: url.href,
      body: chunks(),
      cancel: () => {
        release();
        controller.abort(new ToolAbortedError());
        body.destroy();
      },
    };
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

/** The deadline passed; reported as a TIMEOUT ToolError naming the host. */
class DeadlineExceeded extends Error {}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new ToolError(`${name} must be a positive integer`, 'INVALID_REQUEST');
  return value;
}

function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new ToolError(`${name} must be a non-negative integer`, 'INVALID_REQUEST');
  return value;
}
