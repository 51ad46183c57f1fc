import { testSearchProvider } from '@toolgate/testing';
import { describe } from 'vitest';
import { TavilySearchProvider } from '../src/index.js';
import { KEY, fixture, json, sentQuery } from './recordings.js';

// The shared SearchProvider suite (libs/testing), run against recordings of the real service.
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
