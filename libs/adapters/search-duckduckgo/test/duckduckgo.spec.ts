import { SearchConfigError, ToolError } from '@toolgate/contracts';
import { LoopbackHttpClient, startReplayServer } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { createDuckDuckGoProvider, decodeResultLink, DuckDuckGoSearchProvider, parseDuckDuckGoHtml } from '../src/index.js';
import { fixture, html, expected } from './recordings.js';

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
