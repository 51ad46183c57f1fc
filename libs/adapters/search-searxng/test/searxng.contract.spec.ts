import { testSearchProvider } from '@toolgate/testing';
import { describe } from 'vitest';
import { SearxngSearchProvider } from '../src/index.js';
import { fixture, json } from './recordings.js';

// The shared SearchProvider suite (libs/testing), run against recordings of the real service.
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
