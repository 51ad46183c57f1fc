import { SearchConfigError, ToolError } from '@toolgate/contracts';
import { LoopbackHttpClient, startReplayServer } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { createTavilyProvider, TavilySearchProvider } from '../src/index.js';
import { KEY, fixture, json } from './recordings.js';

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
