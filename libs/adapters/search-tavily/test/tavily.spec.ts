import { readFileSync } from 'node:fs';
import { SearchConfigError, ToolError } from '@toolgate/contracts';
import { LoopbackHttpClient, startReplayServer, testSearchProvider, type ReplayedRequest } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { createTavilyProvider, TavilySearchProvider } from '../src/index.js';

const KEY = 'tvly-dev-Zq8s3cr3tK3yValue0123456789';
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const json = (body: string, status = 200) => ({ status, headers: { 'content-type': 'application/json' }, body });

function sentQuery(request: ReplayedRequest): string | undefined {
  if (request.method !== 'POST' || request.path !== '/search') return undefined;
  if (request.headers.authorization !== `Bearer ${KEY}`) return undefined;
  const body = JSON.parse(request.body) as { query?: unknown };
  return typeof body.query === 'string' ? body.query : undefined;
}

describe('search-tavily', () => {
  testSearchProvider({
    name: 'tavily',
    create: (baseUrl) => new TavilySearchProvider({ apiKey: KEY, baseUrl }),
    secret: KEY,
    recordings: {
      results: json(fixture('results.json')),
      empty: json(fixture('empty.json')),
      malformed: [json('{"query": "x", "answer": null}'), json('{"results": "many"}'), json('null')],
    },
    // Tavily's answer as the API builds it: the snippet in `content`, no raw page content asked for.
    answerWith: (results) =>
      json(
        JSON.stringify({
          query: 'markup',
          follow_up_questions: null,
          answer: null,
          images: [],
          results: results.map((r, i) => ({ url: r.url, title: r.title, content: r.snippet, score: 1 - i / 100, raw_content: null })),
          response_time: 0.5,
        }),
      ),
    expected: [
      {
        title: 'Tutorial | Tokio - An asynchronous Rust runtime',
        url: 'https://tokio.rs/tokio/tutorial',
        snippet:
          'Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing networking applications. It gives the flexibility to target a wide range of systems, from large servers with dozens of cores to small embedded devices.',
      },
      {
        title: 'Which async runtime do you use? : r/rust - Reddit',
        url: 'https://www.reddit.com/r/rust/comments/1c5aq5n/which_async_runtime_do_you_use/',
        snippet: 'Tokio for almost everything. smol when I want something tiny; glommio for thread-per-core I/O on Linux. Embassy on microcontrollers.',
      },
      {
        title: 'Why async Rust? - Without boats, dreams dry up',
        url: 'https://without.boats/blog/why-async-rust/',
        snippet:
          'Async/await syntax in Rust was initially released to much fanfare and excitement. ... the runtime is a library, not part of the language.',
      },
      {
        title: 'glommio - Rust',
        url: 'https://docs.rs/glommio/latest/glommio/',
        snippet:
          "Glommio is a library providing a safe Rust interface for asynchronous, thread-local I/O, based on the linux io_uring interface and Rust's async support.",
      },
    ],
    queryOf: sentQuery,
    failures: [
      {
        name: 'a rejected API key (HTTP 401) without echoing it',
        response: json(fixture('unauthorized.json'), 401),
        reason: 'PROVIDER_REFUSED',
        message: /Tavily rejected the configured API key \(HTTP 401\)/,
      },
      {
        name: 'the plan limit (HTTP 432) as rate limited',
        response: json(fixture('plan-limit.json'), 432),
        reason: 'PROVIDER_RATE_LIMITED',
        message: /usage limit is reached \(HTTP 432\)/,
      },
      {
        name: "a refused query (HTTP 400) with Tavily's reason",
        response: json(fixture('bad-request.json'), 400),
        reason: 'PROVIDER_BAD_RESPONSE',
        message: /Tavily refused the query: Query is too long/,
      },
      {
        name: 'an error detail that echoes the key, scrubbed',
        response: json(JSON.stringify({ detail: { error: `invalid query for key ${KEY}` } }), 400),
        reason: 'PROVIDER_BAD_RESPONSE',
        message: /invalid query for key \[key\]/,
      },
    ],
  });
});

describe('Tavily specifics', () => {
  it('posts the documented request body with the key as a bearer token', async () => {
    const replay = await startReplayServer();
    const http = new LoopbackHttpClient();
    try {
      replay.respondWith(json(fixture('results.json')));
      const provider = new TavilySearchProvider({ apiKey: KEY, baseUrl: replay.baseUrl });
      await provider.search('rust', { maxResults: 3, http });
      const sent = replay.requests.at(-1)!;
      expect(sent.headers['content-type']).toBe('application/json');
      expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(JSON.parse(sent.body)).toEqual({
        query: 'rust',
        max_results: 3,
        search_depth: 'basic',
        topic: 'general',
        include_answer: false,
        include_raw_content: false,
        include_images: false,
      });
    } finally {
      await replay.close();
      await http.close();
    }
  });

  it('targets api.tavily.com by default', () => {
    expect(createTavilyProvider({ apiKey: KEY }).host).toBe('api.tavily.com');
    expect(createTavilyProvider({ apiKey: KEY, baseUrl: 'https://tavily-proxy.example.com' }).host).toBe('tavily-proxy.example.com');
  });

  it('throws a missing-setting SearchConfigError without a key, so the server can fall back', () => {
    for (const apiKey of [undefined, '', '  ']) {
      try {
        createTavilyProvider({ apiKey });
        throw new Error('expected a missing-setting error');
      } catch (err) {
        expect(err).toBeInstanceOf(SearchConfigError);
        expect(err).not.toBeInstanceOf(ToolError);
        expect((err as SearchConfigError).setting).toBe('TOOLGATE_WEB_SEARCH_API_KEY');
        expect((err as SearchConfigError).missing).toBe(true);
        expect((err as SearchConfigError).message).toMatch(/TOOLGATE_WEB_SEARCH_API_KEY/);
      }
    }
  });
});
