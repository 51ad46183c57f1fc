import { ToolError, type HttpResponse, type SearchOptions, type SearchProvider, type SearchResult } from '@toolgate/contracts';
import { parseDuckDuckGoHtml } from './parse-results.js';

export const DUCKDUCKGO_BASE_URL = 'https://html.duckduckgo.com';

export interface DuckDuckGoOptions {
  /** Where the HTML endpoint lives; default `https://html.duckduckgo.com` (tests use a local server). */
  readonly baseUrl?: string;
  /** Per-request time limit; default 15 s. */
  readonly timeoutMs?: number;
}

const MAX_PAGE_BYTES = 2 * 1024 * 1024;

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
    const base = parseBaseUrl(options.baseUrl ?? DUCKDUCKGO_BASE_URL);
    // The egress allowlist speaks in bare hosts: no IPv6 brackets, no trailing dot.
    this.host = base.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
    this.endpoint = `${base.origin}${base.pathname.replace(/\/+$/, '')}/html/`;
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
    checkStatus(response);
    const page = parseDuckDuckGoHtml(Buffer.from(response.body).toString('utf8'));
    switch (page.kind) {
      case 'results':
        return page.results.slice(0, Math.max(0, options.maxResults));
      case 'empty':
        throw new ToolError(`DuckDuckGo found no results for '${query}'`, 'NO_RESULTS');
      case 'challenge':
        throw rateLimited();
      case 'unrecognised':
        throw new ToolError('DuckDuckGo answered with a page that is not a results page', 'PROVIDER_BAD_RESPONSE');
    }
  }
}

/**
 * Builds the provider from the server's settings. DuckDuckGo needs none, so this never throws a
 * missing-setting error; it is the fallback of the other providers.
 */
export function createDuckDuckGoProvider(settings: { baseUrl?: string } = {}): DuckDuckGoSearchProvider {
  return new DuckDuckGoSearchProvider(settings.baseUrl ? { baseUrl: settings.baseUrl } : {});
}

function checkStatus(response: HttpResponse): void {
  const { status } = response;
  // Under load DuckDuckGo answers 202 with a captcha page instead of results.
  if (status === 429 || status === 202) throw rateLimited();
  if (status >= 500) throw new ToolError(`DuckDuckGo is unavailable (HTTP ${status}); try again later`, 'PROVIDER_UNAVAILABLE');
  if (status === 401 || status === 403) throw new ToolError(`DuckDuckGo refused the search (HTTP ${status})`, 'PROVIDER_REFUSED');
  if (status !== 200) throw new ToolError(`DuckDuckGo answered with unexpected HTTP ${status}`, 'PROVIDER_BAD_RESPONSE');
}

function rateLimited(): ToolError {
  return new ToolError(
    'DuckDuckGo rate-limited this server (it asked for a captcha); try again in a few minutes, or ask the operator to configure another search provider',
    'PROVIDER_RATE_LIMITED',
  );
}

function parseBaseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError('the DuckDuckGo base URL is not a valid URL', 'INVALID_SETTING');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw new ToolError('the DuckDuckGo base URL must be a plain http(s) URL without credentials, query or fragment', 'INVALID_SETTING');
  }
  return url;
}
