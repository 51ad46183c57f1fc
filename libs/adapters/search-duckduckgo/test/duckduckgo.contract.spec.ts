import { testSearchProvider } from '@toolgate/testing';
import { describe } from 'vitest';
import { DuckDuckGoSearchProvider } from '../src/index.js';
import { fixture, html, resultsPage, expected } from './recordings.js';

// The shared SearchProvider suite (libs/testing), run against recordings of the real service.
describe('search-duckduckgo', () => {
  testSearchProvider({
    name: 'duckduckgo',
    create: (baseUrl) => new DuckDuckGoSearchProvider({ baseUrl }),
    recordings: {
      results: html(fixture('results.html')),
      empty: html(fixture('empty.html')),
      malformed: [
        html('<!DOCTYPE html><html><head><title>Error</title></head><body><h1>Something went wrong</h1></body></html>'),
        { status: 200, headers: { 'content-type': 'application/json' }, body: '{"results": []}' },
      ],
    },
    answerWith: (results) => html(resultsPage(results)),
    expected,
    queryOf: (request) => (request.method === 'GET' && request.path.startsWith('/html/?') ? request.query.get('q') ?? undefined : undefined),
    failures: [
      {
        name: 'the bot challenge (HTTP 202) as rate limited',
        response: html(fixture('challenge.html'), 202),
        reason: 'PROVIDER_RATE_LIMITED',
        message: /DuckDuckGo rate-limited this server/,
      },
      {
        name: 'a challenge page served with HTTP 200 as rate limited',
        response: html(fixture('challenge.html'), 200),
        reason: 'PROVIDER_RATE_LIMITED',
        message: /captcha/,
      },
      { name: 'HTTP 403 as refused', response: html('Forbidden', 403), reason: 'PROVIDER_REFUSED', message: /HTTP 403/ },
    ],
  });
});
