import { SearchConfigError, ToolError } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { createSearxngProvider, SearxngSearchProvider } from '../src/index.js';
import { fixture } from './recordings.js';

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
