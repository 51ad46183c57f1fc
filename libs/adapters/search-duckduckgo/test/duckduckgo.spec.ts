import { readFileSync } from 'node:fs';
import { SearchConfigError, ToolError } from '@toolgate/contracts';
import { LoopbackHttpClient, startReplayServer, testSearchProvider } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { createDuckDuckGoProvider, decodeResultLink, DuckDuckGoSearchProvider, parseDuckDuckGoHtml } from '../src/index.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const html = (body: string, status = 200) => ({ status, headers: { 'content-type': 'text/html; charset=UTF-8' }, body });

/**
 * A results page as DuckDuckGo builds it (the structure of `fixtures/results.html`): each field
 * is the inner HTML of its element, so the page carries the markup and entities as they are.
 */
function resultsPage(results: readonly { title: string; url: string; snippet: string }[]): string {
  const blocks = results.map((r, i) => {
    const link = `//duckduckgo.com/l/?uddg=${encodeURIComponent(r.url)}&amp;rut=${i.toString(16).padStart(8, '0')}`;
    return `<div class="result results_links results_links_deep web-result ">
      <div class="links_main links_deep result__body">
        <h2 class="result__title"><a rel="nofollow" class="result__a" href="${link}">${r.title}</a></h2>
        <a class="result__snippet" href="${link}">${r.snippet}</a>
        <div class="clear"></div>
      </div>
    </div>`;
  });
  return `<!DOCTYPE html><html><head><meta http-equiv="content-type" content="text/html; charset=UTF-8" /><title>markup at DuckDuckGo</title></head>
<body><div class="serp__results"><div id="links" class="results">${blocks.join('\n')}</div></div></body></html>`;
}

const expected = [
  {
    title: 'Tokio - An asynchronous Rust runtime',
    url: 'https://tokio.rs/',
    snippet:
      'Tokio is an asynchronous runtime for the Rust programming language. It provides the building blocks needed for writing network applications without compromising speed.',
  },
  {
    title: 'The Async Ecosystem - Asynchronous Programming in Rust',
    url: 'https://rust-lang.github.io/async-book/08_ecosystem/00_chapter.html',
    snippet:
      'Async runtimes are libraries used for executing async applications. Runtimes usually bundle together a reactor with one or more executors. Reactors provide subscription mechanisms for external events, like async I/O, interprocess communication, and timers.',
  },
  {
    title: 'The State of Async Rust: Runtimes | corrode Rust Consulting',
    url: 'https://corrode.dev/blog/async/',
    snippet: `Tokio's dominance & what it means for library authors: async-std, smol and the "one true runtime" debate, revisited.`,
  },
  {
    title: 'GitHub - smol-rs/smol: A small and fast async runtime for Rust',
    url: 'https://github.com/smol-rs/smol',
    snippet:
      'A small and fast async runtime. This crate simply re-exports other smaller async crates (see the source). To use tokio-based libraries with smol, apply the async-compat adapter to futures and I/O types.',
  },
  {
    title: 'tokio::runtime - Rust',
    url: 'https://docs.rs/tokio/latest/tokio/runtime/index.html?search=block_on#modules',
    snippet:
      'The Tokio runtime. Unlike other Rust programs, asynchronous applications require runtime support. In particular, the following runtime services are necessary: An I/O event loop, called the driver, which drives I/O resources and dispatches I/O events to tasks that depend on them.',
  },
];

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

describe('DuckDuckGo specifics', () => {
  it('targets html.duckduckgo.com by default', () => {
    expect(new DuckDuckGoSearchProvider().host).toBe('html.duckduckgo.com');
    expect(createDuckDuckGoProvider().host).toBe('html.duckduckgo.com');
    expect(createDuckDuckGoProvider({ baseUrl: 'https://ddg.internal.example/proxy/' }).host).toBe('ddg.internal.example');
  });

  // TOOLGATE_WEB_SEARCH_BASE_URL reaches DuckDuckGo through this factory (a mirror or proxy).
  it.each([
    ['a bare origin', '', '/html/'],
    ['a path prefix', '/ddg', '/ddg/html/'],
    ['a path prefix with a trailing slash', '/proxy/ddg/', '/proxy/ddg/html/'],
  ])('the factory honours a base URL with %s, against a recorded answer on 127.0.0.1', async (_name, prefix, path) => {
    const replay = await startReplayServer();
    const http = new LoopbackHttpClient();
    try {
      replay.respondWith(html(fixture('results.html')));
      const provider = createDuckDuckGoProvider({ baseUrl: `${replay.baseUrl}${prefix}` });
      expect(provider.host).toBe('127.0.0.1');
      const results = await provider.search('rust async runtime', { http, maxResults: 10 });
      expect(results).toEqual(expected);
      expect(replay.requests).toHaveLength(1);
      expect(replay.requests[0]!.path).toBe(`${path}?q=rust%20async%20runtime`);
    } finally {
      await replay.close();
    }
  });

  it('refuses a base URL it cannot use', () => {
    for (const baseUrl of ['not a url', 'ftp://example.com', 'https://u:p@example.com', 'https://example.com/?q=1']) {
      const attempt = () => new DuckDuckGoSearchProvider({ baseUrl });
      expect(attempt, baseUrl).toThrow(SearchConfigError);
      try {
        attempt();
      } catch (err) {
        expect(err, baseUrl).not.toBeInstanceOf(ToolError);
        expect((err as SearchConfigError).setting).toBe('TOOLGATE_WEB_SEARCH_BASE_URL');
        expect((err as SearchConfigError).missing).toBe(false);
        expect((err as SearchConfigError).message).not.toContain('u:p');
      }
    }
  });

  it('skips ads and keeps organic results only', () => {
    const page = parseDuckDuckGoHtml(fixture('results.html'));
    expect(page.kind).toBe('results');
    const urls = page.kind === 'results' ? page.results.map((r) => r.url) : [];
    expect(urls).toHaveLength(5);
    expect(urls.join(' ')).not.toMatch(/y\.js|bing\.com|shuttle|jetbrains/);
  });

  it('decodes uddg redirect links and refuses everything else', () => {
    expect(decodeResultLink('//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1%26c%3D2&rut=abc')).toBe('https://example.com/a?b=1&c=2');
    expect(decodeResultLink('https://duckduckgo.com/l/?uddg=http%3A%2F%2Fexample.org%2F')).toBe('http://example.org/');
    expect(decodeResultLink('https://example.net/direct')).toBe('https://example.net/direct');
    expect(decodeResultLink('https://duckduckgo.com/y.js?ad_domain=x&u3=https%3A%2F%2Fbing.com')).toBeUndefined();
    expect(decodeResultLink('//duckduckgo.com/l/?uddg=javascript%3Aalert(1)')).toBeUndefined();
    expect(decodeResultLink('//duckduckgo.com/l/?uddg=file%3A%2F%2F%2Fetc%2Fpasswd')).toBeUndefined();
    expect(decodeResultLink('//duckduckgo.com/l/?rut=abc')).toBeUndefined();
    expect(decodeResultLink('/html/?q=more')).toBeUndefined();
    expect(decodeResultLink(undefined)).toBeUndefined();
  });

  it('caps very long titles and snippets', () => {
    const long = 'word '.repeat(400);
    const page = parseDuckDuckGoHtml(
      `<div class="result"><a class="result__a" href="https://example.com/">${long}</a><a class="result__snippet">${long}</a></div>`,
    );
    expect(page.kind).toBe('results');
    if (page.kind !== 'results') return;
    expect(page.results[0]!.title.length).toBeLessThanOrEqual(300);
    expect(page.results[0]!.snippet.length).toBeLessThanOrEqual(600);
    expect(page.results[0]!.snippet.endsWith('…')).toBe(true);
  });
});
