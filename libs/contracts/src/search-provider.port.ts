import type { HttpClient } from './http-client.port.js';
import { token, type Token } from './token.js';

export interface SearchResult {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
}

export interface SearchOptions {
  readonly maxResults: number;
  /** The guarded client the gateway scoped to this call's egress. */
  readonly http: HttpClient;
  readonly signal?: AbortSignal;
}

/**
 * A web search backend. Errors (rate limits, 5xx, malformed bodies, no results) are thrown as
 * `ToolError` with a message the agent can act on.
 */
export interface SearchProvider {
  /** `duckduckgo`, `searxng`, `tavily`, … */
  readonly name: string;
  /** The host the provider contacts, for the manifest's egress list. */
  readonly host: string;
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

export const SearchProviderToken: Token<SearchProvider> = token('SearchProvider');
