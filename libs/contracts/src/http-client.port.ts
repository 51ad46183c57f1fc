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
