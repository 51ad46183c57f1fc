import { ToolError, type HttpResponse, type SearchOptions, type SearchProvider, type SearchResult } from '@toolgate/contracts';

export interface SearxngOptions {
  /** The instance's base URL, e.g. `https://searx.example.org` or `http://searxng:8080/searxng`. */
  readonly baseUrl: string;
  /** Per-request time limit; default 15 s (SearXNG waits for its slowest engine). */
  readonly timeoutMs?: number;
}

const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const MAX_TITLE = 300;
const MAX_SNIPPET = 600;

/**
 * Web search through a SearXNG instance's JSON API (`/search?format=json&q=`). The instance
 * must have `json` in `search.formats` of its settings.yml; otherwise it answers 403, which is
 * reported with that hint.
 */
export class SearxngSearchProvider implements SearchProvider {
  readonly name = 'searxng';
  readonly host: string;
  private readonly endpoint: string;
  private readonly timeoutMs: number;

  constructor(options: SearxngOptions) {
    const base = parseBaseUrl(options.baseUrl);
    // The egress allowlist speaks in bare hosts: no IPv6 brackets, no trailing dot.
    this.host = base.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
    this.endpoint = `${base.origin}${base.pathname.replace(/\/+$/, '')}/search`;
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  async search(query: string, options: SearchOptions): Promise<readonly SearchResult[]> {
    const response = await options.http.request({
      url: `${this.endpoint}?format=json&q=${encodeURIComponent(query)}`,
      method: 'GET',
      headers: { accept: 'application/json' },
      maxBytes: MAX_ANSWER_BYTES,
      timeoutMs: this.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    checkStatus(response);
    const answer = parseAnswer(response);
    const results = answer.results.flatMap(toResult);
    if (results.length === 0) {
      if (answer.unresponsive.length > 0) {
        throw new ToolError(
          `SearXNG's engines did not answer (${answer.unresponsive.join('; ')}); try again later`,
          'PROVIDER_UNAVAILABLE',
        );
      }
      throw new ToolError(`SearXNG found no results for '${query}'`, 'NO_RESULTS');
    }
    return results.slice(0, Math.max(0, options.maxResults));
  }
}

/**
 * Builds the provider from the server's settings (`TOOLGATE_WEB_SEARCH_BASE_URL`). Throws a
 * `ToolError` with reason `MISSING_SETTING` when the base URL is absent, so the server can fall
 * back to DuckDuckGo with a warning, and `INVALID_SETTING` when it is unusable (a startup error).
 */
export function createSearxngProvider(settings: { baseUrl?: string }): SearxngSearchProvider {
  if (!settings.baseUrl?.trim()) {
    throw new ToolError('the searxng provider needs TOOLGATE_WEB_SEARCH_BASE_URL (the instance URL)', 'MISSING_SETTING');
  }
  return new SearxngSearchProvider({ baseUrl: settings.baseUrl.trim() });
}

interface Answer {
  readonly results: readonly unknown[];
  readonly unresponsive: readonly string[];
}

function parseAnswer(response: HttpResponse): Answer {
  if (response.truncated) throw badResponse('an answer larger than the limit');
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(response.body).toString('utf8'));
  } catch {
    throw badResponse('a body that is not JSON');
  }
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { results?: unknown }).results)) {
    throw badResponse('JSON without a results list');
  }
  const { results, unresponsive_engines: engines } = json as { results: unknown[]; unresponsive_engines?: unknown };
  // Each entry is [engine, reason]; the reasons ("timeout", "CAPTCHA") tell the agent whether to retry.
  const unresponsive = Array.isArray(engines)
    ? engines.flatMap((entry) =>
        Array.isArray(entry) && typeof entry[0] === 'string' ? [clean(`${entry[0]}: ${String(entry[1] ?? 'no answer')}`, 80)] : [],
      )
    : [];
  return { results, unresponsive };
}

function toResult(entry: unknown): SearchResult[] {
  if (typeof entry !== 'object' || entry === null) return [];
  const { url, title, content } = entry as { url?: unknown; title?: unknown; content?: unknown };
  if (typeof url !== 'string' || !isHttpUrl(url)) return []; // magnet:, data: and friends are no web results
  const cleanTitle = clean(typeof title === 'string' ? title : '', MAX_TITLE);
  if (!cleanTitle) return [];
  return [{ title: cleanTitle, url: new URL(url).href, snippet: clean(typeof content === 'string' ? content : '', MAX_SNIPPET) }];
}

function checkStatus(response: HttpResponse): void {
  const { status } = response;
  if (status === 429) throw new ToolError('SearXNG rate-limited this server; try again later', 'PROVIDER_RATE_LIMITED');
  if (status >= 500) throw new ToolError(`SearXNG is unavailable (HTTP ${status}); try again later`, 'PROVIDER_UNAVAILABLE');
  if (status === 403) {
    throw new ToolError(
      'SearXNG refused the JSON API (HTTP 403); the operator must enable the json format (search.formats) on the instance',
      'PROVIDER_REFUSED',
    );
  }
  if (status === 401) throw new ToolError('SearXNG refused the search (HTTP 401)', 'PROVIDER_REFUSED');
  if (status !== 200) throw new ToolError(`SearXNG answered with unexpected HTTP ${status}`, 'PROVIDER_BAD_RESPONSE');
}

function badResponse(what: string): ToolError {
  return new ToolError(`SearXNG answered with ${what}`, 'PROVIDER_BAD_RESPONSE');
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
    throw new ToolError('the SearXNG base URL is not a valid URL', 'INVALID_SETTING');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw new ToolError('the SearXNG base URL must be a plain http(s) URL without credentials, query or fragment', 'INVALID_SETTING');
  }
  return url;
}
