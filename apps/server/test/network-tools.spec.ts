import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GuardedHttpClient } from '@toolgate/adapter-net-guard';
import { DuckDuckGoSearchProvider } from '@toolgate/adapter-search-duckduckgo';
import { SearxngSearchProvider } from '@toolgate/adapter-search-searxng';
import { TavilySearchProvider } from '@toolgate/adapter-search-tavily';
import { EgressDeniedError, type JsonObject, type SearchProvider, type ToolContext } from '@toolgate/contracts';
import { ToolRegistry } from '@toolgate/gateway';
import { httpFetchTool } from '@toolgate/tool-http-fetch';
import { createWebSearchTool } from '@toolgate/tool-web-search';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/**
 * The network tools and search providers wired to the real guarded client, as the composition
 * root wires them, against servers on 127.0.0.1 only. The guard's own suite covers every address
 * form; this shows the pieces agree: tools use ctx.http, refusals reach the agent unchanged, and
 * loopback is reachable only because the test opens 127.0.0.0/8.
 */
const MiB = 1024 * 1024;
const DDG_PAGE = `<!DOCTYPE html><html><body><div id="links" class="results">
<div class="result results_links results_links_deep result--ad"><h2 class="result__title"><a class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example">An ad</a></h2></div>
<div class="result results_links results_links_deep web-result"><h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fone&amp;rut=aa">First &amp; best</a></h2><a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fone">The <b>first</b> result.</a></div>
<div class="result results_links results_links_deep web-result"><h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Ftwo&amp;rut=bb">Second</a></h2><a class="result__snippet">Another one.</a></div>
</div></body></html>`;

describe('network tools over the guarded client', () => {
  let server: http.Server;
  let origin: string;
  let written = 0;
  const seen: Array<{ url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const clients: GuardedHttpClient[] = [];
  const guarded = (options: ConstructorParameters<typeof GuardedHttpClient>[0] = {}) => {
    const client = new GuardedHttpClient(options);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
        const path = req.url ?? '/';
        if (path.startsWith('/html/')) {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(DDG_PAGE);
        } else if (path.startsWith('/search?format=json')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ query: 'q', results: [{ url: 'https://searx.example/r', title: 'SearX result', content: 'from searxng' }] }));
        } else if (path === '/search' && req.method === 'POST') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ results: [{ url: 'https://tavily.example/r', title: 'Tavily result', content: 'from tavily', score: 0.9 }] }));
        } else if (path === '/redirect') {
          res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
        } else if (path === '/huge') {
          const chunk = Buffer.alloc(64 * 1024, 0x61);
          res.writeHead(200, { 'content-type': 'text/plain' });
          const pump = () => {
            while (written < 100 * MiB && !res.destroyed) {
              written += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            if (!res.destroyed) res.end();
          };
          pump();
        } else {
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'set-cookie': 'sid=1' }).end('hello ✓');
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
  });

  const ctx = (client: GuardedHttpClient): ToolContext => ({
    signal: new AbortController().signal,
    principal: { id: 'agent-1', tenant: 'acme', roles: ['worker'] },
    workspaceRoot: '/nonexistent/workspace',
    callId: 'call-net-1',
    http: client,
  });
  const fetch = (args: JsonObject, client: GuardedHttpClient) => httpFetchTool.handler.invoke(args, ctx(client));

  it('registers both tools: their manifests satisfy every rule the gateway checks', () => {
    const registry = new ToolRegistry();
    registry.register(httpFetchTool);
    registry.register(createWebSearchTool({ provider: new SearxngSearchProvider({ baseUrl: 'http://[fd00::8]:8888/' }), defaultMaxResults: 5 }));
    expect(() => new ToolRegistry([createWebSearchTool({ provider: new DuckDuckGoSearchProvider(), defaultMaxResults: 10 })])).not.toThrow();
  });

  describe('http_fetch', () => {
    it('fetches from an opened range and drops cookies from the result', async () => {
      const out = (await fetch({ url: `${origin}/page` }, guarded({ allowedCidrs: ['127.0.0.0/8'] }))) as Record<string, unknown>;
      expect(out).toMatchObject({ status: 200, kind: 'text', body: 'hello ✓', truncated: false });
      expect(out['headers']).not.toHaveProperty('set-cookie');
    });

    it.each([
      (o: string) => o,
      (o: string) => o.replace('127.0.0.1', '127.1'),
      (o: string) => o.replace('127.0.0.1', '2130706433'),
      (o: string) => o.replace('127.0.0.1', '[::ffff:127.0.0.1]'),
      () => 'http://169.254.169.254/latest/meta-data/',
      () => 'http://[fd00::1]/',
      () => 'http://10.0.0.1/',
    ])('refuses a non-public destination with EgressDenied when nothing is opened (case %#)', async (target) => {
      const before = seen.length;
      await expect(fetch({ url: `${target(origin)}/` }, guarded())).rejects.toBeInstanceOf(EgressDeniedError);
      expect(seen.length).toBe(before);
    });

    it('refuses a host name that resolves to a private address', async () => {
      const client = guarded({ resolver: async () => [{ address: '10.20.30.40', family: 4 }] });
      await expect(fetch({ url: 'http://wiki.corp.example/' }, client)).rejects.toThrow(
        "egress to 'wiki.corp.example' refused: resolves to a private address",
      );
    });

    it('reports a redirect to the metadata endpoint without following it', async () => {
      const out = (await fetch({ url: `${origin}/redirect` }, guarded({ allowedCidrs: ['127.0.0.0/8'] }))) as Record<string, unknown>;
      expect(out).toMatchObject({ status: 302, location: 'http://169.254.169.254/latest/meta-data/' });
    });

    it('caps a 100 MB body at max_bytes and stops the transfer', async () => {
      const started = performance.now();
      const out = (await fetch({ url: `${origin}/huge`, max_bytes: MiB }, guarded({ allowedCidrs: ['127.0.0.0/8'] }))) as Record<string, unknown>;
      expect(out).toMatchObject({ truncated: true, bytes: MiB });
      expect((out['body'] as string).length).toBe(MiB);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(written).toBeLessThan(32 * MiB);
    });
  });

  describe('web_search', () => {
    const providers: Array<[string, (base: string) => SearchProvider, string]> = [
      ['duckduckgo', (baseUrl) => new DuckDuckGoSearchProvider({ baseUrl }), 'First & best'],
      ['searxng', (baseUrl) => new SearxngSearchProvider({ baseUrl }), 'SearX result'],
      ['tavily', (baseUrl) => new TavilySearchProvider({ baseUrl, apiKey: 'tvly-test-key' }), 'Tavily result'],
    ];

    it.each(providers)('searches through %s over the guarded client', async (name, create, firstTitle) => {
      const tool = createWebSearchTool({ provider: create(origin), defaultMaxResults: 5 });
      expect(tool.manifest.egress).toEqual({ hosts: ['127.0.0.1'] });
      const out = (await tool.handler.invoke({ query: 'rust async' }, ctx(guarded({ allowedCidrs: ['127.0.0.0/8'] })))) as {
        results: Array<{ title: string; url: string }>;
        provider: string;
      };
      expect(out.provider).toBe(name);
      expect(out.results[0]?.title).toBe(firstTitle);
      expect(out.results.every((r) => r.url.startsWith('https://'))).toBe(true);
    });

    it('sends the Tavily key through the guard as a bearer header', async () => {
      const tool = createWebSearchTool({ provider: new TavilySearchProvider({ baseUrl: origin, apiKey: 'tvly-test-key' }), defaultMaxResults: 3 });
      await tool.handler.invoke({ query: 'q' }, ctx(guarded({ allowedCidrs: ['127.0.0.0/8'] })));
      const sent = seen.filter((r) => r.url === '/search').at(-1)!;
      expect(sent.headers.authorization).toBe('Bearer tvly-test-key');
      expect(JSON.parse(sent.body)).toMatchObject({ query: 'q', max_results: 3 });
    });

    it('passes the guard refusal on when the provider host is not public', async () => {
      const tool = createWebSearchTool({ provider: new DuckDuckGoSearchProvider({ baseUrl: origin }), defaultMaxResults: 5 });
      await expect(tool.handler.invoke({ query: 'q' }, ctx(guarded()))).rejects.toBeInstanceOf(EgressDeniedError);
    });
  });
});
