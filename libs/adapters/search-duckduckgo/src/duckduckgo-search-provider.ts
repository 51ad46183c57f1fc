import { SEARCH_FAILURE_REASONS as REASONS, ToolError, type SearchOptions, type SearchProvider, type SearchResult } from '@toolgate/contracts';
import { badResponse, checkStatus, noResults, resolveEndpoint } from '@toolgate/adapter-kit-search';
import { parseDuckDuckGoHtml } from './parse-results.js';

export const DUCKDUCKGO_BASE_URL = 'https://html.duckduckgo.com';

export interface DuckDuckGoOptions {
  /** Where the HTML endpoint lives; default `https://html.duckduckgo.com` (tests use a local server). */
  readonly baseUrl?: string;
  /** Per-request time limit; default 15 s. */
  readonly timeoutMs?: number;
}

const MAX_PAGE_BYTES = 2 * 1024 * 1024;
const PROVIDER = 'DuckDuckGo';

/**
 * Web search through DuckDuckGo's keyless HTML endpoint (`/html/?q=`). The default provider: it
 * needs no account, at the price of scraping a page whose layout can change and of DuckDuckGo's
 * bot challenge under load, which is reported as a rate limit.
 */
export class DuckDuckGoSearchProvider implements SearchProvider {
  readonly name = 'duckduckgo';
  readonly host: string;
  private readonly endpoint: string;
  private readonly timeoutMs: number;

  constructor(options: DuckDuckGoOptions = {}) {
    const endpoint = resolveEndpoint(options.baseUrl ?? DUCKDUCKGO_BASE_URL, PROVIDER, '/html/');
    this.host = endpoint.host;
    this.endpoint = endpoint.url;
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  async search(query: string, options: SearchOptions): Promise<readonly SearchResult[]> {
    const response = await options.http.request({
      url: `${this.endpoint}?q=${encodeURIComponent(query)}`,
      method: 'GET',
      headers: { accept: 'text/html', 'accept-language': 'en-US,en;q=0.8' },
      maxBytes: MAX_PAGE_BYTES,
      timeoutMs: this.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // Under load DuckDuckGo answers 202 with a captcha page instead of results.
    checkStatus(response.status, PROVIDER, (status) => (status === 429 || status === 202 ? rateLimited() : undefined));
    const page = parseDuckDuckGoHtml(Buffer.from(response.body).toString('utf8'));
    switch (page.kind) {
      case 'results':
        return page.results.slice(0, Math.max(0, options.maxResults));
      case 'empty':
        throw noResults(PROVIDER, query);
      case 'challenge':
        throw rateLimited();
      case 'unrecognised':
        throw badResponse(PROVIDER, 'a page that is not a results page');
    }
  }
}

/**
 * Builds the provider from the server's settings. DuckDuckGo needs none, so this never throws a
 * missing-setting error; it is the fallback of the other providers. A base URL that is given but
 * unusable is a `SearchConfigError` naming `TOOLGATE_WEB_SEARCH_BASE_URL` (a startup error).
 */
export function createDuckDuckGoProvider(settings: { baseUrl?: string } = {}): DuckDuckGoSearchProvider {
  return new DuckDuckGoSearchProvider(settings.baseUrl ? { baseUrl: settings.baseUrl } : {});
}

function rateLimited(): ToolError {
  return new ToolError(
    'DuckDuckGo rate-limited this server (it asked for a captcha); try again in a few minutes, or ask the operator to configure another search provider',
    REASONS.rateLimited,
  );
}
