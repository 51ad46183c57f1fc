import {
  ToolError,
  type HttpClient,
  type JsonObject,
  type SearchOptions,
  type SearchProvider,
  type SearchResult,
  type ToolContext,
} from '@toolgate/contracts';
import { LoopbackHttpClient, startReplayServer, testToolContext, type ReplayServer } from '@toolgate/testing';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebSearchTool } from '../src/index.js';

/**
 * A provider that really goes over ctx.http to a local server answering JSON, and records what
 * the tool asked of it. (The real providers live in adapter libs this tool may not import; they
 * run the shared provider contract suite.)
 */
class RecordingProvider implements SearchProvider {
  readonly name = 'recording';
  readonly host = '127.0.0.1';
  readonly calls: Array<{ query: string; maxResults: number; http: HttpClient; signal?: AbortSignal }> = [];
  constructor(private readonly baseUrl: string) {}
  async search(query: string, options: SearchOptions): Promise<readonly SearchResult[]> {
    this.calls.push({ query, maxResults: options.maxResults, http: options.http, ...(options.signal ? { signal: options.signal } : {}) });
    const response = await options.http.request({ url: `${this.baseUrl}/search?q=${encodeURIComponent(query)}`, signal: options.signal });
    if (response.status === 429) throw new ToolError('rate-limited; try again later', 'PROVIDER_RATE_LIMITED');
    return JSON.parse(Buffer.from(response.body).toString()) as SearchResult[];
  }
}

const many = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ title: `Result ${i + 1}`, url: `https://example.com/${i + 1}`, snippet: `snippet ${i + 1}`, rank: i }));

describe('web_search', () => {
  let replay: ReplayServer;
  let http: LoopbackHttpClient;
  let provider: RecordingProvider;

  beforeAll(async () => {
    replay = await startReplayServer();
    replay.respondWith((req) =>
      req.query.get('q') === 'busy'
        ? { status: 429, body: 'slow down' }
        : { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(many(15)) },
    );
    http = new LoopbackHttpClient();
    provider = new RecordingProvider(replay.baseUrl);
  });
  afterAll(async () => {
    await replay.close();
    await http.close();
  });

  const context = (signal = new AbortController().signal): ToolContext => testToolContext({ signal, http });

  describe('manifest', () => {
    it('declares a medium-risk network tool whose only egress host is the provider host', () => {
      const tool = createWebSearchTool({ provider, defaultMaxResults: 5 });
      expect(tool.manifest).toMatchObject({
        name: 'web_search',
        risk: 'medium',
        permissions: [{ type: 'network', scope: '127.0.0.1' }],
        egress: { hosts: ['127.0.0.1'] },
        ignoreUnknownArgs: true,
        tier: 'inprocess',
      });
      expect(tool.manifest.description).toContain('recording');
    });

    it('bounds the arguments in the schema: query 1–500 characters, max_results ≤ 10 with the configured default', () => {
      const tool = createWebSearchTool({ provider, defaultMaxResults: 7 });
      const ajv = new Ajv({ strict: false, useDefaults: true });
      const valid = ajv.compile(tool.manifest.input);
      const withDefault: JsonObject = { query: 'rust' };
      expect(valid(withDefault)).toBe(true);
      expect(withDefault['max_results']).toBe(7);
      expect(valid({ query: 'rust', max_results: 10 })).toBe(true);
      expect(valid({ query: 'rust', max_results: 11 })).toBe(false); // the gateway's repair clamps it to 10
      expect(valid({ query: 'rust', max_results: 0 })).toBe(false);
      expect(valid({ query: '' })).toBe(false);
      expect(valid({ query: 'x'.repeat(501) })).toBe(false);
      expect(valid({ max_results: 3 })).toBe(false);
      expect(tool.manifest.input['additionalProperties']).toBeUndefined();
    });

    it('refuses a default outside 1–10 at construction', () => {
      for (const defaultMaxResults of [0, 11, 2.5, Number.NaN]) {
        expect(() => createWebSearchTool({ provider, defaultMaxResults }), String(defaultMaxResults)).toThrow(/from 1 to 10/);
      }
    });
  });

  describe('handler', () => {
    const tool = () => createWebSearchTool({ provider, defaultMaxResults: 5 });
    const validOutput = () => new Ajv({ strict: false }).compile(tool().manifest.output);

    it('searches through ctx.http with the default count and returns clean results', async () => {
      const ctx = context();
      const output = await tool().handler.invoke({ query: '  rust async  ' }, ctx);
      expect(validOutput()(output)).toBe(true);
      expect(output).toEqual({ results: many(5).map(({ title, url, snippet }) => ({ title, url, snippet })), provider: 'recording' });
      const call = provider.calls.at(-1)!;
      expect(call).toMatchObject({ query: 'rust async', maxResults: 5 });
      expect(call.http).toBe(http);
      expect(call.signal).toBe(ctx.signal);
      expect(replay.requests.at(-1)?.query.get('q')).toBe('rust async');
    });

    it('honours max_results and clamps a direct call to 1–10', async () => {
      const count = async (max_results: number) =>
        ((await tool().handler.invoke({ query: 'q', max_results }, context())) as { results: unknown[] }).results.length;
      expect(await count(3)).toBe(3);
      expect(await count(50)).toBe(10);
      expect(provider.calls.at(-1)?.maxResults).toBe(10);
      expect(await count(0)).toBe(1);
    });

    it('ignores parameters it does not know', async () => {
      const output = (await tool().handler.invoke({ query: 'q', language: 'de', safe_search: true }, context())) as { results: unknown[] };
      expect(output.results).toHaveLength(5);
    });

    it('needs the network permission', async () => {
      await expect(tool().handler.invoke({ query: 'q' }, { ...context(), http: undefined })).rejects.toMatchObject({
        message: 'network permission not granted',
        reason: 'NETWORK_NOT_GRANTED',
      });
    });

    it('refuses an empty or overlong query and a non-numeric count', async () => {
      await expect(tool().handler.invoke({ query: '   ' }, context())).rejects.toThrow('query must be a non-empty string');
      await expect(tool().handler.invoke({ query: 'x'.repeat(501) }, context())).rejects.toThrow('query must be at most 500 characters');
      await expect(tool().handler.invoke({ query: 'q', max_results: 'many' }, context())).rejects.toThrow(/max_results must be an integer/);
    });

    it("passes the provider's ToolError on", async () => {
      await expect(tool().handler.invoke({ query: 'busy' }, context())).rejects.toMatchObject({ reason: 'PROVIDER_RATE_LIMITED' });
    });
  });
});
