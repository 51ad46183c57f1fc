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
export const SearchProviderToken: Token<SearchProvider> = token('SearchProvider');
