import { SearchConfigError, ToolError } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { resolveEndpoint } from './provider-endpoint.js';

describe('resolveEndpoint', () => {
  it('keeps the base path and appends the endpoint path once', () => {
    expect(resolveEndpoint('https://search.example.org/searxng/', 'SearXNG', '/search')).toEqual({
      host: 'search.example.org',
      url: 'https://search.example.org/searxng/search',
    });
    expect(resolveEndpoint('https://html.duckduckgo.com', 'DuckDuckGo', '/html/').url).toBe('https://html.duckduckgo.com/html/');
    expect(resolveEndpoint('http://127.0.0.1:8080//', 'X', '/search').url).toBe('http://127.0.0.1:8080/search');
  });

  it('names the host as the egress allowlist does: lower case, IPv6 without brackets, no trailing dot', () => {
    expect(resolveEndpoint('http://[fd00::8]:8888/', 'X', '/search').host).toBe('fd00::8');
    expect(resolveEndpoint('https://Search.Example.org./', 'X', '/search').host).toBe('search.example.org');
  });

  it('refuses a base URL it cannot use, naming the provider but not the URL', () => {
    const cases: Array<[string, RegExp]> = [
      ['searx.example.org', /the SearXNG base URL is not a valid URL/],
      ['ftp://searx.example.org', /plain http\(s\) URL/],
      ['https://user:s3cret@searx.example.org', /without credentials/],
      ['https://searx.example.org/?q=1', /query/],
      ['https://searx.example.org/#top', /fragment/],
    ];
    for (const [baseUrl, message] of cases) {
      try {
        resolveEndpoint(baseUrl, 'SearXNG', '/search');
        throw new Error(`expected ${baseUrl} to be refused`);
      } catch (err) {
        // A configuration fault, not a tool failure: it must never reach an agent as one.
        expect(err, baseUrl).toBeInstanceOf(SearchConfigError);
        expect(err, baseUrl).not.toBeInstanceOf(ToolError);
        expect((err as SearchConfigError).setting).toBe('TOOLGATE_WEB_SEARCH_BASE_URL');
        expect((err as SearchConfigError).missing).toBe(false);
        expect((err as SearchConfigError).message).toMatch(message);
        expect((err as SearchConfigError).message).not.toContain('s3cret');
        expect((err as SearchConfigError).message).not.toContain('searx.example.org');
      }
    }
  });
});
