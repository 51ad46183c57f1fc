import { SEARCH_FAILURE_REASONS as REASONS, SearchConfigError, ToolError, type SearchOptions, type SearchProvider, type SearchResult } from '@toolgate/contracts';
import { BASE_URL_SETTING, checkStatus, clipText, noResults, readJsonAnswer, resolveEndpoint, toSearchResult } from '@toolgate/adapter-kit-search';

export interface SearxngOptions {
  /** The instance's base URL, e.g. `https://searx.example.org` or `http://searxng:8080/searxng`. */
  readonly baseUrl: string;
  /** Per-request time limit; default 15 s (SearXNG waits for its slowest engine). */
  readonly timeoutMs?: number;
}

const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const PROVIDER = 'SearXNG';

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
    const endpoint = resolveEndpoint(options.baseUrl, PROVIDER, '/search');
    this.host = endpoint.host;
    this.endpoint = endpoint.url;
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
    checkStatus(response.status, PROVIDER, refusedJsonApi);
    const { results: entries, answer } = readJsonAnswer(response, PROVIDER);
    const results = entries.flatMap((entry) => {
      const { url, title, content } = (entry ?? {}) as { url?: unknown; title?: unknown; content?: unknown };
      return toSearchResult({ url, title, snippet: content }) ?? []; // magnet:, data: and friends are no web results
    });
    if (results.length === 0) {
      const unresponsive = unresponsiveEngines(answer.unresponsive_engines);
      if (unresponsive.length > 0) {
        throw new ToolError(`SearXNG's engines did not answer (${unresponsive.join('; ')}); try again later`, REASONS.unavailable);
      }
      throw noResults(PROVIDER, query);
    }
    return results.slice(0, Math.max(0, options.maxResults));
  }
}

/**
 * Builds the provider from the server's settings (`TOOLGATE_WEB_SEARCH_BASE_URL`). Throws a
 * `SearchConfigError` with `missing` set when the base URL is absent, so the server can fall back
 * to DuckDuckGo with a warning, and with `missing` unset when it is unusable (a startup error).
 */
export function createSearxngProvider(settings: { baseUrl?: string }): SearxngSearchProvider {
  if (!settings.baseUrl?.trim()) {
    throw new SearchConfigError(`the searxng provider needs ${BASE_URL_SETTING} (the instance URL)`, BASE_URL_SETTING, true);
  }
  return new SearxngSearchProvider({ baseUrl: settings.baseUrl.trim() });
}

/** A 403 from SearXNG almost always means the instance does not serve the JSON format. */
function refusedJsonApi(status: number): ToolError | undefined {
  if (status !== 403) return undefined;
  return new ToolError(
    'SearXNG refused the JSON API (HTTP 403); the operator must enable the json format (search.formats) on the instance',
    REASONS.refused,
  );
}

/** Each entry is [engine, reason]; the reasons ("timeout", "CAPTCHA") tell the agent whether to retry. */
function unresponsiveEngines(engines: unknown): string[] {
  if (!Array.isArray(engines)) return [];
  return engines.flatMap((entry) =>
    Array.isArray(entry) && typeof entry[0] === 'string' ? [clipText(`${entry[0]}: ${String(entry[1] ?? 'no answer')}`, 80)] : [],
  );
}
