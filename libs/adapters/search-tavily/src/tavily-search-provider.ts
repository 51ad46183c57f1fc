import { SEARCH_FAILURE_REASONS as REASONS, SearchConfigError, ToolError, type HttpResponse, type SearchOptions, type SearchProvider, type SearchResult } from '@toolgate/contracts';
import { checkStatus, clipText, noResults, readJsonAnswer, resolveEndpoint, toSearchResult } from '@toolgate/adapter-kit-search';

export const TAVILY_BASE_URL = 'https://api.tavily.com';

export interface TavilyOptions {
  /** The API key (`tvly-…`), sent as a bearer token and never put in a message. */
  readonly apiKey: string;
  /** Default `https://api.tavily.com` (tests use a local server). */
  readonly baseUrl?: string;
  /** Per-request time limit; default 15 s. */
  readonly timeoutMs?: number;
}

const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const PROVIDER = 'Tavily';
const API_KEY_SETTING = 'TOOLGATE_WEB_SEARCH_API_KEY';
/** Tavily's own ceiling for `max_results`. */
const TAVILY_MAX_RESULTS = 20;

/** Web search through Tavily's search API (`POST /search`), which needs an API key. */
export class TavilySearchProvider implements SearchProvider {
  readonly name = 'tavily';
  readonly host: string;
  private readonly endpoint: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;

  constructor(options: TavilyOptions) {
    if (!options.apiKey.trim()) throw new SearchConfigError('the tavily provider needs an API key', API_KEY_SETTING, true);
    const endpoint = resolveEndpoint(options.baseUrl ?? TAVILY_BASE_URL, PROVIDER, '/search');
    this.host = endpoint.host;
    this.endpoint = endpoint.url;
    this.apiKey = options.apiKey.trim();
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  async search(query: string, options: SearchOptions): Promise<readonly SearchResult[]> {
    const maxResults = Math.max(0, Math.min(options.maxResults, TAVILY_MAX_RESULTS));
    const response = await options.http.request({
      url: this.endpoint,
      method: 'POST',
      headers: { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        query,
        max_results: maxResults,
        search_depth: 'basic',
        topic: 'general',
        include_answer: false,
        include_raw_content: false,
        include_images: false,
      }),
      maxBytes: MAX_ANSWER_BYTES,
      timeoutMs: this.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    checkStatus(response.status, PROVIDER, (status) => this.statusError(status, response));
    const results = readJsonAnswer(response, PROVIDER).results.flatMap((entry) => {
      const { url, title, content } = (entry ?? {}) as { url?: unknown; title?: unknown; content?: unknown };
      return toSearchResult({ url, title, snippet: content }) ?? [];
    });
    if (results.length === 0) throw noResults(PROVIDER, query);
    return results.slice(0, maxResults);
  }

  /** The statuses Tavily gives its own meaning; the kit maps the rest (429, 5xx, redirects). */
  private statusError(status: number, response: HttpResponse): ToolError | undefined {
    // 432: plan limit reached, 433: pay-as-you-go limit reached. Both clear with time or money.
    if (status === 432 || status === 433) {
      return new ToolError(`Tavily's usage limit is reached (HTTP ${status}); try again later or ask the operator to raise the plan`, REASONS.rateLimited);
    }
    if (status === 401 || status === 403) {
      return new ToolError(`Tavily rejected the configured API key (HTTP ${status}); the operator must check TOOLGATE_WEB_SEARCH_API_KEY`, REASONS.refused);
    }
    if (status === 400) {
      const detail = this.errorDetail(response);
      return new ToolError(`Tavily refused the query${detail ? `: ${detail}` : ''}`, REASONS.badResponse);
    }
    return undefined;
  }

  /** Tavily's `{"detail":{"error":"…"}}` text, cut short and scrubbed of the key just in case. */
  private errorDetail(response: HttpResponse): string | undefined {
    try {
      const json = JSON.parse(Buffer.from(response.body).toString('utf8')) as { detail?: { error?: unknown } | string };
      const text = typeof json.detail === 'string' ? json.detail : json.detail?.error;
      if (typeof text !== 'string') return undefined;
      return clipText(text.split(this.apiKey).join('[key]'), 200);
    } catch {
      return undefined;
    }
  }
}

/**
 * Builds the provider from the server's settings (`TOOLGATE_WEB_SEARCH_API_KEY`, and optionally
 * `TOOLGATE_WEB_SEARCH_BASE_URL`). Throws a `SearchConfigError` with `missing` set when the key is
 * absent, so the server can fall back to DuckDuckGo with a warning, and one with `missing` unset
 * when the base URL is unusable (a startup error).
 */
export function createTavilyProvider(settings: { apiKey?: string; baseUrl?: string }): TavilySearchProvider {
  if (!settings.apiKey?.trim()) {
    throw new SearchConfigError(`the tavily provider needs ${API_KEY_SETTING}`, API_KEY_SETTING, true);
  }
  return new TavilySearchProvider({ apiKey: settings.apiKey, ...(settings.baseUrl?.trim() ? { baseUrl: settings.baseUrl.trim() } : {}) });
}
