import { ToolError, type HttpResponse, type SearchOptions, type SearchProvider, type SearchResult } from '@toolgate/contracts';

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
const MAX_TITLE = 300;
const MAX_SNIPPET = 600;
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
    if (!options.apiKey.trim()) throw new ToolError('the tavily provider needs an API key', 'MISSING_SETTING');
    const base = parseBaseUrl(options.baseUrl ?? TAVILY_BASE_URL);
    // The egress allowlist speaks in bare hosts: no IPv6 brackets, no trailing dot.
    this.host = base.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
    this.endpoint = `${base.origin}${base.pathname.replace(/\/+$/, '')}/search`;
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
    this.checkStatus(response);
    const results = parseResults(response).flatMap(toResult);
    if (results.length === 0) throw new ToolError(`Tavily found no results for '${query}'`, 'NO_RESULTS');
    return results.slice(0, maxResults);
  }

  private checkStatus(response: HttpResponse): void {
    const { status } = response;
    if (status === 200) return;
    const detail = this.errorDetail(response);
    if (status === 429) throw new ToolError('Tavily rate-limited this server; try again later', 'PROVIDER_RATE_LIMITED');
    // 432: plan limit reached, 433: pay-as-you-go limit reached. Both clear with time or money.
    if (status === 432 || status === 433) {
      throw new ToolError(`Tavily's usage limit is reached (HTTP ${status}); try again later or ask the operator to raise the plan`, 'PROVIDER_RATE_LIMITED');
    }
    if (status >= 500) throw new ToolError(`Tavily is unavailable (HTTP ${status}); try again later`, 'PROVIDER_UNAVAILABLE');
    if (status === 401 || status === 403) {
      throw new ToolError(`Tavily rejected the configured API key (HTTP ${status}); the operator must check TOOLGATE_WEB_SEARCH_API_KEY`, 'PROVIDER_REFUSED');
    }
    if (status === 400) throw new ToolError(`Tavily refused the query${detail ? `: ${detail}` : ''}`, 'PROVIDER_BAD_RESPONSE');
    throw new ToolError(`Tavily answered with unexpected HTTP ${status}`, 'PROVIDER_BAD_RESPONSE');
  }

  /** Tavily's `{"detail":{"error":"…"}}` text, cut short and scrubbed of the key just in case. */
  private errorDetail(response: HttpResponse): string | undefined {
    try {
      const json = JSON.parse(Buffer.from(response.body).toString('utf8')) as { detail?: { error?: unknown } | string };
      const text = typeof json.detail === 'string' ? json.detail : json.detail?.error;
      if (typeof text !== 'string') return undefined;
      return clean(text.split(this.apiKey).join('[key]'), 200);
    } catch {
      return undefined;
    }
  }
}

/**
 * Builds the provider from the server's settings (`TOOLGATE_WEB_SEARCH_API_KEY`, and optionally
 * `TOOLGATE_WEB_SEARCH_BASE_URL`). Throws a `ToolError` with reason `MISSING_SETTING` when the key
 * is absent, so the server can fall back to DuckDuckGo with a warning.
 */
export function createTavilyProvider(settings: { apiKey?: string; baseUrl?: string }): TavilySearchProvider {
  if (!settings.apiKey?.trim()) {
    throw new ToolError('the tavily provider needs TOOLGATE_WEB_SEARCH_API_KEY', 'MISSING_SETTING');
  }
  return new TavilySearchProvider({ apiKey: settings.apiKey, ...(settings.baseUrl?.trim() ? { baseUrl: settings.baseUrl.trim() } : {}) });
}

function parseResults(response: HttpResponse): unknown[] {
  if (response.truncated) throw badResponse('an answer larger than the limit');
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(response.body).toString('utf8'));
  } catch {
    throw badResponse('a body that is not JSON');
  }
  const results = (json as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw badResponse('JSON without a results list');
  return results;
}

function toResult(entry: unknown): SearchResult[] {
  if (typeof entry !== 'object' || entry === null) return [];
  const { url, title, content } = entry as { url?: unknown; title?: unknown; content?: unknown };
  if (typeof url !== 'string' || !isHttpUrl(url)) return [];
  const cleanTitle = clean(typeof title === 'string' ? title : '', MAX_TITLE);
  if (!cleanTitle) return [];
  return [{ title: cleanTitle, url: new URL(url).href, snippet: clean(typeof content === 'string' ? content : '', MAX_SNIPPET) }];
}

function badResponse(what: string): ToolError {
  return new ToolError(`Tavily answered with ${what}`, 'PROVIDER_BAD_RESPONSE');
}

function isHttpUrl(text: string): boolean {
  try {
    const { protocol } = new URL(text);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function clean(text: string, max: number): string {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  return collapsed.length > max ? `${collapsed.slice(0, max - 1).trimEnd()}…` : collapsed;
}

function parseBaseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError('the Tavily base URL is not a valid URL', 'INVALID_SETTING');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw new ToolError('the Tavily base URL must be a plain http(s) URL without credentials, query or fragment', 'INVALID_SETTING');
  }
  return url;
}
