import { readFileSync } from 'node:fs';
import { startReplayServer, type ReplayServer } from '@toolgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectSearchProvider } from '../src/bindings/search.bindings.js';
import { StartupError } from '../src/startup-error.js';
import { startHarness, type Harness } from './e2e-harness.js';

const RESULTS_PAGE = readFileSync(new URL('../../../libs/adapters/search-duckduckgo/test/fixtures/results.html', import.meta.url), 'utf8');

/** TOOLGATE_WEB_SEARCH_BASE_URL is documented for DuckDuckGo too: a mirror or proxy of its HTML endpoint. */
describe('TOOLGATE_WEB_SEARCH_BASE_URL with the DuckDuckGo provider', () => {
  let replay: ReplayServer;
  let h: Harness;

  beforeAll(async () => {
    replay = await startReplayServer();
    replay.respondWith({ status: 200, headers: { 'content-type': 'text/html; charset=UTF-8' }, body: RESULTS_PAGE });
    // Loopback is reachable only because the test opens 127.0.0.0/8 to the guarded client.
    h = await startHarness({
      TOOLGATE_WEB_SEARCH_BASE_URL: `${replay.baseUrl}/ddg`,
      TOOLGATE_EGRESS_ALLOWED_CIDRS: '127.0.0.0/8',
      TOOLGATE_EGRESS_ENABLED: 'true',
      TOOLGATE_ALLOWED_EGRESS_HOSTS: '127.0.0.1',
    });
  }, 60_000);

  afterAll(async () => {
    await h?.stop();
    await replay?.close();
  });

  it('sends web_search to the configured endpoint and returns its recorded answer', async () => {
    const res = await h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: { tool: 'web_search', args: { query: 'rust async' } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.ok, JSON.stringify(res.body)).toBe(true);
    expect(res.body.output.provider).toBe('duckduckgo');
    expect(res.body.output.results[0].url).toBe('https://tokio.rs/');
    expect(replay.requests.map((r) => r.path)).toEqual(['/ddg/html/?q=rust%20async']);
  });

  it('is DuckDuckGo\'s only when DuckDuckGo was chosen: a fallback does not take another provider\'s endpoint', () => {
    const warnings: string[] = [];
    const log = (_level: string, message: string) => void warnings.push(message);
    expect(selectSearchProvider({ provider: 'duckduckgo', baseUrl: 'http://127.0.0.1:9/ddg', maxResults: 5 }, log).host).toBe('127.0.0.1');
    expect(selectSearchProvider({ provider: 'duckduckgo', maxResults: 5 }, log).host).toBe('html.duckduckgo.com');
    // Tavily without its key falls back; the base URL was meant for Tavily, so DuckDuckGo keeps its own.
    const fallback = selectSearchProvider({ provider: 'tavily', baseUrl: 'http://127.0.0.1:9/tavily', maxResults: 5 }, log);
    expect(fallback.name).toBe('duckduckgo');
    expect(fallback.host).toBe('html.duckduckgo.com');
    expect(warnings.join('\n')).toMatch(/falling back to duckduckgo/);
  });

  it.each([
    ['duckduckgo', 'http://example.org/?q=secret-1'],
    ['duckduckgo', 'ftp://example.org/secret-2'],
    ['searxng', 'http://user:secret-3@example.org/'],
    ['tavily', 'not a url secret-4'],
  ] as const)('refuses an unusable base URL for %s naming the variable at fault, not its value (%s)', (provider, baseUrl) => {
    const attempt = () => selectSearchProvider({ provider, baseUrl, apiKey: 'k', maxResults: 5 }, () => undefined);
    expect(attempt).toThrow(StartupError);
    expect(attempt).toThrow(/^TOOLGATE_WEB_SEARCH_BASE_URL: /);
    expect(attempt).not.toThrow(/secret-/);
  });
});
