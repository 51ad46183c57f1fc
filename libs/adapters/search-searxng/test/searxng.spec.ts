import { readFileSync } from 'node:fs';
import { SearchConfigError, ToolError } from '@toolgate/contracts';
import { testSearchProvider } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { createSearxngProvider, SearxngSearchProvider } from '../src/index.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const json = (body: string, status = 200) => ({ status, headers: { 'content-type': 'application/json' }, body });

describe('search-searxng', () => {
  testSearchProvider({
    name: 'searxng',
    create: (baseUrl) => new SearxngSearchProvider({ baseUrl }),
    recordings: {
      results: json(fixture('results.json')),
      empty: json(fixture('empty.json')),
      malformed: [
        json('{"query": "x", "answers": []}'),
        json('[1, 2, 3]'),
        { status: 200, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html><body>SearXNG</body></html>' },
      ],
    },
    // SearXNG's JSON answer as the instance builds it: one entry per result, the snippet in `content`.
    answerWith: (results) =>
      json(
        JSON.stringify({
          query: 'markup',
          number_of_results: 0,
          results: results.map((r, i) => ({ url: r.url, title: r.title, content: r.snippet, engine: 'google', engines: ['google'], positions: [i + 1], score: 1, category: 'general' })),
          answers: [],
          corrections: [],
          infoboxes: [],
          suggestions: [],
          unresponsive_engines: [],
        }),
      ),
    expected: [
      {
        title: 'Tokio - An asynchronous Rust runtime',
        url: 'https://tokio.rs/',
        snippet:
          'Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing network applications.',
      },
      {
        title: 'GitHub - smol-rs/smol: A small and fast async runtime for Rust',
        url: 'https://github.com/smol-rs/smol',
        snippet: 'A small and fast async runtime. This crate simply re-exports other smaller async crates (see the source).',
      },
      {
        title: 'The Async Ecosystem - Asynchronous Programming in Rust',
        url: 'https://rust-lang.github.io/async-book/08_ecosystem/00_chapter.html',
        snippet:
          'Async runtimes are libraries used for executing async applications. Runtimes usually bundle together a reactor with one or more executors.',
      },
      {
        title: 'async_std - Rust',
        url: 'https://docs.rs/async-std/latest/async_std/',
        snippet:
          'Async version of the Rust standard library. async-std is a foundation of portable Rust software, a set of minimal and battle-tested shared abstractions for the broader Rust ecosystem.',
      },
      {
        title: 'Which async runtime should I use? - help - The Rust Programming Language Forum',
        url: 'https://users.rust-lang.org/t/which-async-runtime/89012',
        snippet: '',
      },
    ],
    queryOf: (request) =>
      request.method === 'GET' && request.path.startsWith('/search?') && request.query.get('format') === 'json'
        ? request.query.get('q') ?? undefined
        : undefined,
    failures: [
      {
        name: 'a disabled JSON format (HTTP 403) with the settings hint',
        response: { status: 403, headers: { 'content-type': 'text/html' }, body: '<html><body>403 Forbidden</body></html>' },
        reason: 'PROVIDER_REFUSED',
        message: /enable the json format/,
      },
      {
        name: 'an answer whose engines all failed as unavailable, naming them',
        response: json(fixture('unresponsive.json')),
        reason: 'PROVIDER_UNAVAILABLE',
        message: /google: too many requests; duckduckgo: CAPTCHA; brave: timeout/,
      },
    ],
  });
});

describe('SearXNG specifics', () => {
  it('keeps the path of the base URL and derives the host from it', async () => {
    const provider = createSearxngProvider({ baseUrl: 'https://search.example.org/searxng/' });
    expect(provider.host).toBe('search.example.org');
    const seen: string[] = [];
    await provider
      .search('q', {
        maxResults: 1,
        http: {
          request: async (req) => {
            seen.push(req.url);
            return { status: 200, headers: {}, body: new TextEncoder().encode(fixture('results.json')), truncated: false, url: req.url };
          },
        },
      })
      .catch(() => undefined);
    expect(seen).toEqual(['https://search.example.org/searxng/search?format=json&q=q']);
  });

  it('throws a missing-setting SearchConfigError without a base URL, so the server can fall back', () => {
    for (const baseUrl of [undefined, '', '   ']) {
      try {
        createSearxngProvider({ baseUrl });
        throw new Error('expected a missing-setting error');
      } catch (err) {
        expect(err).toBeInstanceOf(SearchConfigError);
        expect(err).not.toBeInstanceOf(ToolError);
        expect((err as SearchConfigError).setting).toBe('TOOLGATE_WEB_SEARCH_BASE_URL');
        expect((err as SearchConfigError).missing).toBe(true);
        expect((err as SearchConfigError).message).toMatch(/TOOLGATE_WEB_SEARCH_BASE_URL/);
      }
    }
  });

  it('throws an unusable-setting SearchConfigError for an unusable base URL', () => {
    for (const baseUrl of ['searx.example.org', 'ftp://searx.example.org', 'https://user:pw@searx.example.org']) {
      expect(() => createSearxngProvider({ baseUrl }), baseUrl).toThrow(/SearXNG base URL/);
      expect(() => createSearxngProvider({ baseUrl }), baseUrl).toThrow(expect.objectContaining({ name: 'SearchConfigError', setting: 'TOOLGATE_WEB_SEARCH_BASE_URL', missing: false }));
    }
  });

  it('refuses a truncated answer instead of parsing half of it', async () => {
    const provider = new SearxngSearchProvider({ baseUrl: 'https://search.example.org' });
    const body = new TextEncoder().encode(fixture('results.json').slice(0, 500));
    await expect(
      provider.search('q', { maxResults: 3, http: { request: async (req) => ({ status: 200, headers: {}, body, truncated: true, url: req.url }) } }),
    ).rejects.toMatchObject({ reason: 'PROVIDER_BAD_RESPONSE' });
  });
});

describe('SearXNG egress host', () => {
  it('names the host as the egress allowlist does: IPv6 without brackets, no trailing dot', () => {
    expect(createSearxngProvider({ baseUrl: 'http://[fd00::8]:8888/' }).host).toBe('fd00::8');
    expect(createSearxngProvider({ baseUrl: 'https://Search.Example.org./' }).host).toBe('search.example.org');
  });
});
