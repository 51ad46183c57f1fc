import { SEARCH_FAILURE_REASONS, ToolError, type HttpClient, type SearchProvider, type SearchResult } from '@toolgate/contracts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackHttpClient } from './loopback-http-client.js';
import { startReplayServer, type RecordedResponse, type ReplayedRequest, type ReplayServer } from './replay-server.js';

/** The `ToolError.reason` every provider uses for each failure class: the port's own list. */
export const SearchErrorReasons = SEARCH_FAILURE_REASONS;

/** The longest title and snippet a provider may return (docs/tools.md promises them). */
export const SearchResultLimits = { title: 300, snippet: 600 } as const;

/**
 * One result as a service serves it: `title` and `snippet` are the raw field values (for an HTML
 * page, the inner HTML of the title link and of the snippet), markup and entities included.
 */
export interface ServedSearchResult {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
}

/** A provider-specific failure the suite replays besides the generic ones. */
export interface RecordedFailure {
  readonly name: string;
  readonly response: RecordedResponse;
  /** The `ToolError.reason` it must produce. */
  readonly reason: string;
  /** What the message must say. */
  readonly message: RegExp;
}

export interface SearchProviderSuiteOptions {
  /** The provider's `name`, e.g. `duckduckgo`. */
  readonly name: string;
  /** Builds the provider pointed at the replay server, e.g. `new X({ baseUrl })`. */
  create(baseUrl: string): SearchProvider;
  /** Responses recorded from the real service. */
  readonly recordings: {
    /** A normal answer with several results (and whatever noise the service adds). */
    readonly results: RecordedResponse;
    /** The service's own "nothing found" answer. */
    readonly empty: RecordedResponse;
    /** Bodies that must be refused as malformed (besides the suite's generic garbage). */
    readonly malformed?: readonly RecordedResponse[];
  };
  /** Every result the `results` recording must parse to, in order. */
  readonly expected: readonly SearchResult[];
  /**
   * The service's answer carrying exactly these results, built the way the service builds it
   * (the same JSON fields, or the same page around them) and putting each field in raw. The suite
   * uses it to serve markup, entities and overlong text that a recording rarely holds, and
   * decides itself what must come out.
   */
  answerWith(results: readonly ServedSearchResult[]): RecordedResponse;
  /** The query the provider sent in a replayed request, as the service would read it. */
  queryOf(request: ReplayedRequest): string | undefined;
  /** Provider-specific failures, e.g. an auth refusal or a captcha page. */
  readonly failures?: readonly RecordedFailure[];
  /** A secret (API key) that must never appear in an error message. */
  readonly secret?: string;
  /** The HTTP client handed to the provider; default a {@link LoopbackHttpClient}. */
  http?(): HttpClient;
}

/**
 * Markup and entities a service may put in a title or a snippet (search engines highlight with
 * <b>, scraped pages leak tags, and a hostile page can put anything in its own snippet), with
 * what an agent must be handed instead: the visible text, entities decoded exactly once. An
 * entry without an `expected` has no title once cleaned and must be skipped.
 */
const MARKUP_CASES: ReadonlyArray<{ readonly served: ServedSearchResult; readonly expected?: SearchResult }> = [
  {
    served: { title: 'Example <b>Title</b>', url: 'https://example.com/markup', snippet: 'A snippet &amp; more' },
    expected: { title: 'Example Title', url: 'https://example.com/markup', snippet: 'A snippet & more' },
  },
  {
    served: {
      title: 'Safe &amp; <em>sound</em>',
      url: 'https://example.com/hostile',
      snippet: 'Before<img src=x onerror=alert(1)> after<script>alert(2)</script><style>p { display: none }</style>',
    },
    expected: { title: 'Safe & sound', url: 'https://example.com/hostile', snippet: 'Before after' },
  },
  {
    // Escaped markup is text: decoded once it reads as the tags it names, and is not stripped.
    served: { title: '&lt;b&gt; is not bold', url: 'https://example.com/escaped', snippet: '&amp;amp; is decoded once, &amp;lt;i&amp;gt; too' },
    expected: { title: '<b> is not bold', url: 'https://example.com/escaped', snippet: '&amp; is decoded once, &lt;i&gt; too' },
  },
  { served: { title: '<img src=x onerror=alert(3)>', url: 'https://example.com/no-title', snippet: 'a result without a title' } },
  {
    served: {
      title: 'caf&eacute; &#8212; &#x1F600;&nbsp;&quot;quoted&quot;',
      url: 'https://example.com/entities',
      snippet: 'line<br>break&nbsp;&nbsp;and <p>a paragraph</p><!-- a comment -->\n\t end',
    },
    expected: { title: 'café — 😀 "quoted"', url: 'https://example.com/entities', snippet: 'line break and a paragraph end' },
  },
];

/**
 * The behaviour every `SearchProvider` must show, checked against a local 127.0.0.1 server that
 * replays recorded responses of the real service: parsing, plain-text titles and snippets (markup
 * removed, entities decoded once, length capped), the result cap, the query on the wire, and one
 * clear `ToolError` reason per failure class (rate limit, 5xx, refusal, malformed body, no
 * results, redirect, network failure, abort).
 */
export function testSearchProvider(options: SearchProviderSuiteOptions): void {
  let replay: ReplayServer;
  let http: HttpClient;
  let provider: SearchProvider;

  beforeAll(async () => {
    replay = await startReplayServer();
    http = options.http?.() ?? new LoopbackHttpClient();
    provider = options.create(replay.baseUrl);
  });
  afterEach(() => replay.respondWith({ status: 404, body: 'no recording set' }));
  afterAll(async () => {
    await replay.close();
    await (http as { close?: () => Promise<void> }).close?.();
  });

  const search = (query: string, maxResults = 10, signal?: AbortSignal) =>
    provider.search(query, { maxResults, http, ...(signal ? { signal } : {}) });

  async function failure(query = 'anything'): Promise<ToolError> {
    try {
      await search(query);
    } catch (err) {
      expect(err, 'providers throw ToolError only').toBeInstanceOf(ToolError);
      const error = err as ToolError;
      if (options.secret) expect(error.message).not.toContain(options.secret);
      expect(error.message).not.toMatch(/\n\s+at /); // no stack
      return error;
    }
    throw new Error('expected the search to fail, but it returned results');
  }

  describe('identity', () => {
    it('names itself and derives its egress host from the base URL', () => {
      expect(provider.name).toBe(options.name);
      expect(provider.host).toBe('127.0.0.1');
    });
  });

  describe('results', () => {
    it('parses the recorded answer into clean results, in order', async () => {
      expect(options.expected.length).toBeGreaterThanOrEqual(3);
      // A real recording rarely holds hostile markup or escaped tags: the next two tests serve them.
      replay.respondWith(options.recordings.results);
      const results = await search('rust async runtime');
      expect(results).toEqual(options.expected);
      for (const result of results) {
        expect(result.title.trim()).not.toBe('');
        expect(result.url).toMatch(/^https?:\/\//);
        expect(result.title + result.snippet).not.toMatch(/<\/?[a-z][^>]*>/i); // no markup left
        expect(result.title + result.snippet).not.toMatch(/&(amp|lt|gt|quot|#\d+);/); // entities decoded
        expect(result.snippet).toBe(result.snippet.trim());
      }
    });

    it('hands agents plain text whatever markup and entities the service sends', async () => {
      replay.respondWith(options.answerWith(MARKUP_CASES.map((c) => c.served)));
      const results = await search('markup');
      expect(results).toEqual(MARKUP_CASES.flatMap((c) => (c.expected ? [c.expected] : [])));
      const text = JSON.stringify(results);
      expect(text).not.toMatch(/onerror|alert\(|<img|<script|<style|<br|<!--/i);
    });

    it('caps titles and snippets without splitting a character', async () => {
      const served = [
        { title: `Faces ${'😀'.repeat(400)}`, url: 'https://example.com/long', snippet: `${'😀&amp;'.repeat(400)}` },
        { title: `<b>${'long '.repeat(200)}</b>`, url: 'https://example.com/longer', snippet: `<i>${'snippet '.repeat(200)}</i>` },
        { title: 'Short', url: 'https://example.com/short', snippet: 'short' },
      ];
      replay.respondWith(options.answerWith(served));
      const results = await search('long');
      expect(results.map((r) => r.url)).toEqual(served.map((r) => r.url));
      for (const result of results.slice(0, 2)) {
        expect(result.title.length).toBeLessThanOrEqual(SearchResultLimits.title);
        expect(result.snippet.length).toBeLessThanOrEqual(SearchResultLimits.snippet);
        expect(result.title.length).toBeGreaterThan(SearchResultLimits.title / 2);
        expect(result.snippet.length).toBeGreaterThan(SearchResultLimits.snippet / 2);
        expect(result.title.endsWith('…') && result.snippet.endsWith('…')).toBe(true);
        expect(result.title + result.snippet).not.toMatch(/\p{Cs}/u); // no half of a surrogate pair
        expect(result.title + result.snippet).not.toMatch(/<\/?[a-z]|&amp;/i);
      }
      expect(results[0]!.snippet.startsWith('😀&😀&')).toBe(true);
    });

    it('returns at most maxResults', async () => {
      replay.respondWith(options.recordings.results);
      expect(await search('rust async runtime', 2)).toEqual(options.expected.slice(0, 2));
      expect(await search('rust async runtime', 1)).toEqual(options.expected.slice(0, 1));
    });

    it('sends the query intact, whatever characters it holds', async () => {
      replay.respondWith(options.recordings.results);
      const query = 'c++ & "rust" #1 100% ü/日本?';
      await search(query);
      const sent = replay.requests.at(-1);
      expect(sent).toBeDefined();
      expect(options.queryOf(sent!)).toBe(query);
    });

    it('reports an empty answer as NO_RESULTS naming the query', async () => {
      replay.respondWith(options.recordings.empty);
      const error = await failure('zxqv nothing matches this');
      expect(error.reason).toBe(SearchErrorReasons.noResults);
      expect(error.message).toContain('zxqv nothing matches this');
    });
  });

  describe('failures', () => {
    it('reports HTTP 429 as rate limited', async () => {
      replay.respondWith({ status: 429, headers: { 'content-type': 'text/plain', 'retry-after': '30' }, body: 'Too Many Requests' });
      const error = await failure();
      expect(error.reason).toBe(SearchErrorReasons.rateLimited);
      expect(error.message).toMatch(/rate.limit/i);
    });

    it.each([500, 502, 503])('reports HTTP %i as unavailable', async (status) => {
      replay.respondWith({ status, headers: { 'content-type': 'text/html' }, body: '<html><body>Internal error</body></html>' });
      const error = await failure();
      expect(error.reason).toBe(SearchErrorReasons.unavailable);
      expect(error.message).toContain(String(status));
    });

    it('reports a redirect as a bad response and does not follow it', async () => {
      replay.respondWith({ status: 302, headers: { location: '/elsewhere' }, body: '' });
      const before = replay.requests.length;
      const error = await failure();
      expect(error.reason).toBe(SearchErrorReasons.badResponse);
      expect(replay.requests.length).toBe(before + 1);
    });

    const garbage: RecordedResponse[] = [
      { status: 200, headers: { 'content-type': 'text/plain' }, body: '' },
      { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: '\u0000\u0001\u0002 binary noise' },
      { status: 200, headers: { 'content-type': 'application/json' }, body: '{"unexpected": ' },
    ];
    it('reports malformed bodies as bad responses', async () => {
      for (const response of [...garbage, ...(options.recordings.malformed ?? [])]) {
        replay.respondWith(response);
        const error = await failure();
        expect(error.reason, String(response.body).slice(0, 60)).toBe(SearchErrorReasons.badResponse);
      }
    });

    for (const recorded of options.failures ?? []) {
      it(`reports ${recorded.name}`, async () => {
        replay.respondWith(recorded.response);
        const error = await failure();
        expect(error.reason).toBe(recorded.reason);
        expect(error.message).toMatch(recorded.message);
      });
    }

    it('passes a network failure on as a ToolError', async () => {
      const closed = await startReplayServer();
      const port = closed.port;
      await closed.close();
      const unreachable = options.create(`http://127.0.0.1:${port}`);
      await expect(unreachable.search('anything', { maxResults: 3, http })).rejects.toBeInstanceOf(ToolError);
    });

    it('stops when the signal fires', async () => {
      replay.respondWith(() => ({ status: 200, body: '' })); // never reached: aborted first
      await expect(search('anything', 3, AbortSignal.abort())).rejects.toBeInstanceOf(ToolError);
    });
  });
}
