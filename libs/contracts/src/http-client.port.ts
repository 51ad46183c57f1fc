import { token, type Token } from './token.js';

/** One outbound HTTP request. Only `http:` and `https:` URLs without userinfo are accepted. */
export interface HttpRequest {
  /** The absolute URL to fetch; its host must pass the call's egress policy. */
  readonly url: string;
  /** `GET` when absent. Only `POST` may carry a body. */
  readonly method?: 'GET' | 'POST' | 'HEAD';
  /** Request headers; the client sets its own `user-agent` when none is given. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The request body (UTF-8), for `POST` only. */
  readonly body?: string;
  /** Stop reading the body after this many bytes and report it as truncated. */
  readonly maxBytes?: number;
  /** Total time for connect, headers and body. */
  readonly timeoutMs?: number;
  /** Aborts the request (the call's deadline or cancellation). */
  readonly signal?: AbortSignal;
}

/** A response whose body was read up to the byte cap. Redirects are returned, never followed. */
export interface HttpResponse {
  /** The HTTP status code, as received (a 3xx is returned, not followed). */
  readonly status: number;
  /** Lower-case header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body bytes read, at most the request's `maxBytes`. */
  readonly body: Uint8Array;
  /** True when the body was longer than `maxBytes` and reading stopped there. */
  readonly truncated: boolean;
  /** The URL that was requested (normalised). */
  readonly url: string;
}

/**
 * The guarded HTTP client: the only way a tool or provider reaches the network. It resolves and
 * classifies every address itself and dials the address it checked (no DNS rebinding).
 * Failures throw `EgressDeniedError` (policy) or `ToolError` (network).
 */
export interface HttpClient {
  /** Sends one request to an address that passed the guard and reads the answer up to its cap. */
  request(request: HttpRequest): Promise<HttpResponse>;
}
/** The guarded client `apps/server` builds from its egress configuration, one per process. */
export const HttpClientToken: Token<HttpClient> = token('HttpClient');

/**
 * One outbound request whose answer is read as it arrives: a Server-Sent Events stream that
 * stays open (an MCP server's Streamable HTTP answers). Same URL and header rules as
 * {@link HttpRequest}; the body is never decoded, so the client asks for `identity`.
 */
export interface HttpStreamRequest {
  /** The absolute URL to fetch; its host must pass the guard (checked at every new connection). */
  readonly url: string;
  /** `POST` for messages, `GET` for an event stream, `DELETE` to end a session. */
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Request headers; the client owns the framing ones and sets `accept-encoding: identity`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The request body (UTF-8), for `POST` only. */
  readonly body?: string;
  /** Time for connect and the response headers. The body has no deadline of its own: the signal ends it. */
  readonly headersTimeoutMs?: number;
  /** Aborts the request, or the body while it is read. */
  readonly signal?: AbortSignal;
}

/** A response whose body is read as it arrives. Redirects are returned, never followed. */
export interface HttpStreamResponse {
  /** The HTTP status code, as received (a 3xx is returned, not followed). */
  readonly status: number;
  /** Lower-case header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /** The URL that was requested (normalised). */
  readonly url: string;
  /** The body bytes as they arrive; read once. A broken connection throws a `ToolError`. */
  readonly body: AsyncIterable<Uint8Array>;
  /** Stops reading and drops the connection; idempotent. */
  cancel(): void;
}

/**
 * The guarded HTTP client with streamed answers, for the one user that needs them: the
 * connection to a remote MCP server. Addresses are checked exactly as for `request()`. Tools get
 * only `HttpClient` (scoped to their call's hosts), never this.
 */
export interface StreamingHttpClient extends HttpClient {
  /** Sends one request to an address that passed the guard and returns once the headers arrived. */
  stream(request: HttpStreamRequest): Promise<HttpStreamResponse>;
}

/** True if the client can stream answers (the guarded client the server builds can). */
export function canStream(client: HttpClient): client is StreamingHttpClient {
  return typeof (client as Partial<StreamingHttpClient>).stream === 'function';
}
