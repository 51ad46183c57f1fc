import { ToolError, type HttpClient, type SearchProvider, type SearchResult } from '@toolgate/contracts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackHttpClient } from './loopback-http-client.js';
import { startReplayServer, type RecordedResponse, type ReplayedRequest, type ReplayServer } from './replay-server.js';

/** The `ToolError.reason` every provider uses for each failure class. */
export const SearchErrorReasons = {
  rateLimited: 'PROVIDER_RATE_LIMITED',
  unavailable: 'PROVIDER_UNAVAILABLE',
  refused: 'PROVIDER_REFUSED',
  badResponse: 'PROVIDER_BAD_RESPONSE',
  noResults: 'NO_RESULTS',
} as const;

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
 * The behaviour every `SearchProvider` must show, checked against a local 127.0.0.1 server that
 * replays recorded responses of the real service: parsing, the result cap, the query on the
 * wire, and one clear `ToolError` reason per failure class (rate limit, 5xx, refusal, malformed
 * body, no results, redirect, network failure, abort).
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
