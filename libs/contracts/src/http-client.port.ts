import { token, type Token } from './token.js';

/** One outbound HTTP request. Only `http:` and `https:` URLs without userinfo are accepted. */
export interface HttpRequest {
  readonly url: string;
  readonly method?: 'GET' | 'POST' | 'HEAD';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Stop reading the body after this many bytes and report it as truncated. */
  readonly maxBytes?: number;
  /** Total time for connect, headers and body. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** A response whose body was read up to the byte cap. Redirects are returned, never followed. */
export interface HttpResponse {
  readonly status: number;
  /** Lower-case header names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
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
  request(request: HttpRequest): Promise<HttpResponse>;
}
export const HttpClientToken: Token<HttpClient> = token('HttpClient');
