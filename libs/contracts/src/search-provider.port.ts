import type { HttpClient } from './http-client.port.js';
import { token, type Token } from './token.js';

/** One web result as agents receive it: plain text, never markup. */
export interface SearchResult {
  /** The page title as one line of plain text (at most 300 characters). */
  readonly title: string;
  /** An absolute `http:` or `https:` URL; results with any other scheme are dropped. */
  readonly url: string;
  /** The service's excerpt as one line of plain text (at most 600 characters). */
  readonly snippet: string;
}

/** How one search runs. */
export interface SearchOptions {
  /** At most this many results are returned (a provider may find fewer). */
  readonly maxResults: number;
  /** The guarded client the gateway scoped to this call's egress. */
  readonly http: HttpClient;
  /** Fires when the call's deadline passes or the caller cancels; the request is then abandoned. */
  readonly signal?: AbortSignal;
}

/**
 * The `ToolError.reason` a provider gives each failure class. Agents decide from it whether to
 * retry (docs/tools.md lists them), so every provider uses exactly these and the shared suite in
 * `@toolgate/testing` checks each one.
 */
export const SEARCH_FAILURE_REASONS = {
  /** HTTP 429, a bot challenge or a plan limit: worth a retry later. */
  rateLimited: 'PROVIDER_RATE_LIMITED',
  /** HTTP 5xx, or every engine behind the service failed: worth a retry later. */
  unavailable: 'PROVIDER_UNAVAILABLE',
  /** HTTP 401/403: the service refuses this server (a key or an instance setting to fix). */
  refused: 'PROVIDER_REFUSED',
  /** An answer the provider cannot read: not its format, truncated, a redirect, a refused query. */
  badResponse: 'PROVIDER_BAD_RESPONSE',
  /** The service answered and found nothing for the query. */
  noResults: 'NO_RESULTS',
} as const;

/** One of {@link SEARCH_FAILURE_REASONS}. */
export type SearchFailureReason = (typeof SEARCH_FAILURE_REASONS)[keyof typeof SEARCH_FAILURE_REASONS];

/**
 * A web search backend. Failures of a search (rate limits, 5xx, malformed bodies, no results) are
 * thrown as `ToolError` with one of {@link SEARCH_FAILURE_REASONS} and a message the agent can act
 * on; a fault of the operator's settings is a {@link SearchConfigError}, thrown when the provider is
 * built, never from `search`.
 */
export interface SearchProvider {
  /** `duckduckgo`, `searxng`, `tavily`, … */
  readonly name: string;
  /** The host the provider contacts, for the manifest's egress list. */
  readonly host: string;
  /**
   * Searches the web for `query` through `options.http` only (so egress policy applies). Resolves
   * with the results, or rejects with a `ToolError` naming the failure; a search that finds nothing
   * is `NO_RESULTS`, not an empty list.
   */
  search(query: string, options: SearchOptions): Promise<readonly SearchResult[]>;
}
/**
 * A provider cannot be built from the settings it was given: a fault of the operator's
 * configuration, found at start, never a tool failure an agent sees. `missing` tells a setting
 * that is absent (the server may fall back to the default provider, and says so) from one that is
 * present but unusable (the server refuses to start). The message names the setting, never its
 * value, since that may be a key.
 */
export class SearchConfigError extends Error {
  override readonly name = 'SearchConfigError';
  constructor(
    message: string,
    /** The environment variable at fault, e.g. `TOOLGATE_WEB_SEARCH_API_KEY`. */
    readonly setting: string,
    /** True when the setting is absent rather than unusable. */
    readonly missing: boolean,
  ) {
    super(message);
  }
}

/** The search backend `apps/server` binds by `TOOLGATE_WEB_SEARCH_PROVIDER`. */
export const SearchProviderToken: Token<SearchProvider> = token('SearchProvider');
