import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { CLIENT_CAPABILITIES_META_KEY, createMcpHandler, inputRequired, inputResponse, Server } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BridgeStartError, mcpEndpoint, startMcpBridge, type McpBridge } from './mcp-bridge.js';

// Results are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

const TOKEN = 'bridge-spec-token-0123456789abcdef';

/**
 * An MCP server built with the official SDK (both eras from one handler, as Toolgate's face is)
 * on a loopback port, standing in for a Toolgate server where the bridge needs what Toolgate does
 * not do yet (progress) or must be made to do what it would not (revoke a token mid-session).
 */
class Upstream {
  http!: HttpServer;
  url!: string;
  /** When set, every request answers 401, as a server does for a revoked token. */
  refuse = false;
  /** The `_meta` of each tools/call the upstream received. */
  readonly metas: unknown[] = [];
  readonly authorizations: (string | undefined)[] = [];
  /** Every JSON-RPC body as it came over the wire, before the SDK reads it. */
  readonly bodies: any[] = [];
  /** The client capabilities each `ask` or `sample` call's envelope declared. */
  readonly declared: any[] = [];
  /**
   * When set, every tools/call is read as if its client had declared sampling with tools: a server
   * that asks whatever the client declared (the SDK's own server refuses to), so that only the
   * bridge stands between it and the desktop client.
   */
  overclaim = false;
  /** How many rounds the `forever` tool has asked for. */
  rounds = 0;

  async start(): Promise<void> {
    const handler = createMcpHandler(
      () => {
        const server = new Server({ name: 'fake-toolgate', version: '9.9.9' }, { capabilities: { tools: { listChanged: true } }, instructions: 'be nice' });
        server.setRequestHandler('tools/list', () => ({ tools: [{ name: 'count', description: 'Counts to three, reporting progress.', inputSchema: { type: 'object' } }] }));
        server.setRequestHandler('tools/call', async (request, ctx) => {
          this.metas.push(request.params._meta);
          if (request.params.name === 'ask') {
            // Stands in for Toolgate's approval exchange: a URL elicitation only to a client that declared it.
            const declared = (ctx.mcpReq.envelope as Record<string, any> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
            this.declared.push(declared);
            const answer = inputResponse(ctx.mcpReq.inputResponses, 'approval');
            if (answer.kind === 'elicit') return { content: [{ type: 'text', text: `answered ${answer.action}` }] };
            if (!declared?.elicitation?.url) return { content: [{ type: 'text', text: 'no url elicitation' }], isError: true };
            return inputRequired({ inputRequests: { approval: inputRequired.elicitUrl({ message: 'approve it', url: 'https://gate.example/approvals/a1' }) }, requestState: 'opaque' });
          }
          if (request.params.name === 'odd') {
            // Requests the bridge does not pass on: roots, and a sampling request whose params are malformed.
            if (ctx.mcpReq.requestState() !== undefined) return { content: [{ type: 'text', text: `answered: ${Object.keys(ctx.mcpReq.inputResponses ?? {}).join(',') || 'none'}` }] };
            return inputRequired({
              inputRequests: { roots: inputRequired.listRoots(), bad: inputRequired.createMessage({ messages: 'not a list', maxTokens: -1 } as never) },
              requestState: 'opaque',
            });
          }
          if (request.params.name === 'forever') {
            this.rounds += 1;
            return inputRequired({ inputRequests: { model: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'again' } }], maxTokens: 5 }) }, requestState: `round-${this.rounds}` });
          }
          if (request.params.name === 'sample') {
            // Asks the model; with `overclaim` whatever the client declared.
            if (!this.overclaim) this.declared.push((ctx.mcpReq.envelope as Record<string, any> | undefined)?.[CLIENT_CAPABILITIES_META_KEY]);
            const answer = inputResponse(ctx.mcpReq.inputResponses, 'model');
            if (answer.kind === 'sampling') return { content: [{ type: 'text', text: `the model said: ${JSON.stringify(answer.result.content)}` }] };
            // A retry that left the answer out: the request failed, so the call does (as Toolgate's relay does).
            if (ctx.mcpReq.requestState() !== undefined) return { content: [{ type: 'text', text: `no answer (${answer.kind})` }], isError: true };
            const withTools = (request.params.arguments as Record<string, unknown> | undefined)?.['withTools'] === true;
            return inputRequired({
              inputRequests: {
                model: inputRequired.createMessage({
                  messages: [{ role: 'user', content: { type: 'text', text: 'write a haiku' } }],
                  maxTokens: 20,
                  ...(withTools ? { tools: [{ name: 'lookup', inputSchema: { type: 'object' } }] } : {}),
                }),
              },
              requestState: 'opaque',
            });
          }
          const token = request.params._meta?.progressToken;
          for (let progress = 1; progress <= 3 && token !== undefined; progress++) {
            await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total: 3 } });
          }
          return { content: [{ type: 'text', text: 'done' }] };
        });
        return server;
      },
      { legacy: 'stateless' },
    );
    this.http = createServer(async (req, res) => {
      this.authorizations.push(req.headers.authorization);
      if (this.refuse || req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      let body = Buffer.concat(chunks);
      if (req.method === 'POST') {
        const message = JSON.parse(body.toString('utf8'));
        this.bodies.push(message);
        if (this.overclaim && message.method === 'tools/call') {
          const meta = message.params?._meta ?? {};
          this.declared.push(meta[CLIENT_CAPABILITIES_META_KEY]);
          const forged = { ...message, params: { ...message.params, _meta: { ...meta, [CLIENT_CAPABILITIES_META_KEY]: { ...meta[CLIENT_CAPABILITIES_META_KEY], sampling: { tools: {} }, roots: {} } } } };
          body = Buffer.from(JSON.stringify(forged));
        }
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const response = await handler.fetch(
        new Request(`http://127.0.0.1${req.url}`, { method: req.method ?? 'POST', headers, ...(req.method === 'POST' ? { body } : {}) }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    });
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.http.close(() => resolve()));
  }
}

/** A bridge on in-memory pipes, and an SDK client speaking to it over them. */
async function bridged(url: string, token = TOKEN, modern = false, prepare?: (client: Client) => void, capabilities: Record<string, unknown> = {}) {
  const toBridge = new PassThrough();
  const fromBridge = new PassThrough();
  const logs: string[] = [];
  const bridge = await startMcpBridge({ url, token, version: '0.0.0-test', stdin: toBridge, stdout: fromBridge, log: (line) => logs.push(line) });
  // The SDK's stdio transport is symmetric: reading the bridge's stdout and writing its stdin, it is the client's end.
  const client = new Client({ name: 'spec', version: '1.0.0' }, { capabilities, ...(modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}) });
  prepare?.(client);
  await client.connect(new StdioServerTransport(fromBridge, toBridge));
  return { bridge, client, logs };
}

describe('the MCP bridge against an SDK-built upstream', () => {
  const upstream = new Upstream();
  let open: { bridge: McpBridge; client: Client }[] = [];
  beforeAll(() => upstream.start());
  afterAll(() => upstream.stop());
  beforeEach(async () => {
    upstream.refuse = false;
    upstream.overclaim = false;
    await Promise.all(open.map(({ client, bridge }) => client.close().then(() => bridge.close())));
    open = [];
  });
  const start = async (url = upstream.url, token = TOKEN, modern = false, prepare?: (client: Client) => void, capabilities: Record<string, unknown> = {}) => {
    const b = await bridged(url, token, modern, prepare, capabilities);
    open.push(b);
    return b;
  };

  it('advertises the upstream identity, instructions and tools capability, without list-change pushes it cannot relay', async () => {
    const { client } = await start();
    expect(client.getServerVersion()).toMatchObject({ name: 'fake-toolgate', version: '9.9.9' });
    expect(client.getInstructions()).toBe('be nice');
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
  });

  it('relays the progress of a call to a client that sent a progress token', async () => {
    const { client } = await start();
    const seen: unknown[] = [];
    const result = await client.request({ method: 'tools/call', params: { name: 'count', arguments: {} } }, { onprogress: (p) => seen.push(p) });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'done' }] });
    expect(seen).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
  });

  it.each([
    ['2025', false],
    ['2026-07-28', true],
  ])("passes the client's own _meta keys (an approval id) upstream, but not the hop's envelope (client in %s)", async (_era, modern) => {
    const { client } = await start(upstream.url, TOKEN, modern);
    await client.request({
      method: 'tools/call',
      params: { name: 'count', arguments: {}, _meta: { 'toolgate/approvalId': 'apr-123', 'io.modelcontextprotocol/clientInfo': { name: 'forged', version: '0' } } },
    });
    const meta = upstream.metas.at(-1) as Record<string, unknown>;
    expect(meta['toolgate/approvalId']).toBe('apr-123');
    // On the wire, the upstream hop describes the bridge's own connection, whatever the client put there.
    const sent = upstream.bodies.filter((b) => b.method === 'tools/call').at(-1);
    expect(sent.params._meta).toMatchObject({ 'toolgate/approvalId': 'apr-123', 'io.modelcontextprotocol/clientInfo': { name: 'toolgate-mcp-bridge' } });
    expect(JSON.stringify(sent)).not.toContain('forged');
  });

  describe('elicitation through the bridge (ADR 0050)', () => {
    it("declares upstream exactly the desktop client's URL elicitation and passes the request and its answer through", async () => {
      const shown: unknown[] = [];
      const { client } = await start(upstream.url, TOKEN, false, (c) => {
        c.setRequestHandler('elicitation/create', async (request) => {
          shown.push(request.params);
          return { action: 'accept' };
        });
      }, { elicitation: { url: {} } });
      const result = (await client.request({ method: 'tools/call', params: { name: 'ask', arguments: {} } })) as any;
      expect(result.content[0].text).toBe('answered accept');
      expect(shown).toEqual([expect.objectContaining({ mode: 'url', url: 'https://gate.example/approvals/a1', message: 'approve it' })]);
      expect(upstream.declared.at(-1)).toEqual({ elicitation: { url: {} } });
    });

    it('passes a decline through unchanged: the bridge decides nothing', async () => {
      const { client } = await start(upstream.url, TOKEN, false, (c) => c.setRequestHandler('elicitation/create', async () => ({ action: 'decline' })), { elicitation: { url: {} } });
      const result = (await client.request({ method: 'tools/call', params: { name: 'ask', arguments: {} } })) as any;
      expect(result.content[0].text).toBe('answered decline');
    });

    it.each([
      ['no elicitation', {}, false],
      ['form-mode elicitation only', { elicitation: { form: {} } }, false],
      ['URL elicitation, but in the 2026-07-28 era (an input_required cannot be handed on)', { elicitation: { url: {} } }, true],
    ])('declares no URL elicitation upstream for a desktop client with %s', async (_name, capabilities, modern) => {
      const { client } = await start(upstream.url, TOKEN, modern, (c) => {
        if ((capabilities as any).elicitation) c.setRequestHandler('elicitation/create', async () => ({ action: 'accept' }));
      }, capabilities);
      const result = (await client.request({ method: 'tools/call', params: { name: 'ask', arguments: {} } })) as any;
      expect(result).toMatchObject({ isError: true, content: [{ text: 'no url elicitation' }] });
      expect(upstream.declared.at(-1)?.elicitation?.url).toBeUndefined();
    });
  });

  describe('sampling through the bridge (ADR 0054)', () => {
    const reply = { role: 'assistant' as const, model: 'desktop-model', content: { type: 'text' as const, text: 'an old pond' } };

    it("declares upstream exactly the desktop client's sampling and passes the request and its answer through", async () => {
      const asked: any[] = [];
      const { client } = await start(upstream.url, TOKEN, false, (c) => {
        c.setRequestHandler('sampling/createMessage', async (request) => {
          asked.push(request.params);
          return reply;
        });
      }, { sampling: {} });
      const result = (await client.request({ method: 'tools/call', params: { name: 'sample', arguments: {} } })) as any;
      expect(result.content[0].text).toBe('the model said: {"type":"text","text":"an old pond"}');
      expect(asked).toEqual([expect.objectContaining({ messages: [{ role: 'user', content: { type: 'text', text: 'write a haiku' } }], maxTokens: 20 })]);
      expect(upstream.declared.at(-1)).toEqual({ sampling: {} });
    });

    it('declares sampling beside elicitation, each only as declared, and sampling with tools only when the desktop declared tools', async () => {
      const { client } = await start(upstream.url, TOKEN, false, (c) => {
        c.setRequestHandler('sampling/createMessage', async () => reply);
        c.setRequestHandler('elicitation/create', async () => ({ action: 'accept' }));
      }, { sampling: { tools: {}, context: {} }, elicitation: { url: {} } });
      await client.request({ method: 'tools/call', params: { name: 'sample', arguments: {} } });
      expect(upstream.declared.at(-1)).toEqual({ elicitation: { url: {} }, sampling: { tools: {}, context: {} } });
    });

    it("leaves the desktop client's error answer out of the retry, so the server fails that request and answers the call at once; the bridge makes up no answer", async () => {
      const { client, logs } = await start(upstream.url, TOKEN, false, (c) => {
        c.setRequestHandler('sampling/createMessage', async () => {
          throw new Error('the user rejected the sampling request');
        });
      }, { sampling: {} });
      const result = (await client.request({ method: 'tools/call', params: { name: 'sample', arguments: {} } })) as any;
      expect(result).toMatchObject({ isError: true, content: [{ text: 'no answer (missing)' }] });
      expect(logs.join('\n')).toMatch(/a sampling\/createMessage request was not answered: .*the user rejected the sampling request/);
    });

    describe('hostile input_required rounds from the server', () => {
      it('passes on neither roots nor a malformed sampling request, leaving both unanswered, and says so', async () => {
        let asked = 0;
        upstream.overclaim = true;
        const { client, logs } = await start(upstream.url, TOKEN, false, (c) => c.setRequestHandler('sampling/createMessage', async () => ((asked += 1), reply)), { sampling: {} });
        const result = (await client.request({ method: 'tools/call', params: { name: 'odd', arguments: {} } })) as any;
        expect(result.content[0].text).toBe('answered: none');
        expect(asked).toBe(0);
        expect(logs.join('\n')).toMatch(/a roots\/list request was not answered: the bridge does not pass on this request \(roots\/list\)/);
        expect(logs.join('\n')).toMatch(/a sampling\/createMessage request was not answered: the bridge does not pass on this request/);
      });

      it('stops a server that asks round after round at 10 rounds with a JSON-RPC error, and keeps serving', async () => {
        let asked = 0;
        upstream.rounds = 0;
        const { client } = await start(upstream.url, TOKEN, false, (c) => c.setRequestHandler('sampling/createMessage', async () => ((asked += 1), reply)), { sampling: {} });
        await expect(client.request({ method: 'tools/call', params: { name: 'forever', arguments: {} } })).rejects.toMatchObject({
          code: -32603,
          message: expect.stringContaining('the server asked for input more than 10 times in one call'),
        });
        expect(upstream.rounds).toBe(11);
        expect(asked).toBe(10);
        await expect(client.request({ method: 'tools/call', params: { name: 'count', arguments: {} } })).resolves.toMatchObject({ content: [{ text: 'done' }] });
      });

      it("hands the call's cancellation to the desktop client's sampling handler, which stops waiting", async () => {
        let aborted: Promise<void> | undefined;
        const { client } = await start(upstream.url, TOKEN, false, (c) => {
          c.setRequestHandler('sampling/createMessage', (_request, ctx) => {
            aborted = new Promise((resolve) => ctx.mcpReq.signal.addEventListener('abort', () => resolve()));
            return new Promise(() => undefined);
          });
        }, { sampling: {} });
        const controller = new AbortController();
        const call = client.request({ method: 'tools/call', params: { name: 'sample', arguments: {} } }, { signal: controller.signal }).catch((e: unknown) => e);
        await expect.poll(() => aborted !== undefined).toBe(true);
        controller.abort();
        expect(await call).toBeInstanceOf(Error);
        await expect(aborted).resolves.toBeUndefined();
      });
    });

    describe('a sampling request the desktop client did not declare (refused by the bridge itself)', () => {
      it.each([
        ['no capabilities at all', {}, false, {}, /the desktop client did not declare sampling$/],
        ['elicitation but no sampling', { elicitation: { form: {}, url: {} } }, false, {}, /the desktop client did not declare sampling$/],
        ['sampling without tools, asked with tools', { sampling: {} }, false, { withTools: true }, /the desktop client did not declare sampling with tools/],
        ['sampling, but in the 2026-07-28 era (an input_required cannot be handed on)', { sampling: {} }, true, {}, /the desktop client did not declare sampling$/],
      ])('%s: the desktop client is never asked, the request is left unanswered and stderr says why', async (_name, capabilities, modern, args, message) => {
        let asked = 0;
        upstream.overclaim = true;
        const { client, logs } = await start(upstream.url, TOKEN, modern, (c) => {
          if ((capabilities as any).sampling) c.setRequestHandler('sampling/createMessage', async () => ((asked += 1), reply));
          if ((capabilities as any).elicitation) c.setRequestHandler('elicitation/create', async () => ({ action: 'accept' }));
        }, capabilities);
        expect(await client.request({ method: 'tools/call', params: { name: 'sample', arguments: args } })).toMatchObject({ isError: true, content: [{ text: 'no answer (missing)' }] });
        expect(asked).toBe(0);
        expect(logs.join('\n')).toMatch(new RegExp(`a sampling/createMessage request was not answered: ${message.source}`));
        // Told upstream only what was declared: a 2026-07-28 desktop client is declared nothing.
        const told = upstream.declared.at(-1);
        if (modern || !(capabilities as any).sampling) expect(told?.sampling).toBeUndefined();
        else expect(told?.sampling).toEqual({});
        // The bridge keeps serving after the refusal.
        await expect(client.request({ method: 'tools/call', params: { name: 'count', arguments: {} } })).resolves.toMatchObject({ content: [{ text: 'done' }] });
      });
    });
  });

  it('sends the token as a bearer header and nothing else', async () => {
    const before = upstream.authorizations.length;
    const { client } = await start();
    await client.listTools();
    expect(new Set(upstream.authorizations.slice(before))).toEqual(new Set([`Bearer ${TOKEN}`]));
  });

  it('says the server refused the token when it starts refusing mid-session, stays up, and never logs the token', async () => {
    const { client, logs } = await start();
    upstream.refuse = true;
    await expect(client.request({ method: 'tools/call', params: { name: 'count', arguments: {} } })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('refused the token'),
    });
    upstream.refuse = false;
    await expect(client.request({ method: 'tools/call', params: { name: 'count', arguments: {} } })).resolves.toMatchObject({ content: [{ text: 'done' }] });
    expect(logs.join('\n')).toMatch(/refused the token/);
    expect(logs.join('\n')).not.toContain(TOKEN);
  });

  it('fails the start with BridgeStartError for a refused token', async () => {
    await expect(start(upstream.url, 'wrong-token')).rejects.toThrow(BridgeStartError);
    await expect(start(upstream.url, 'wrong-token')).rejects.toThrow(/refused the token/);
  });
});

describe('mcpEndpoint', () => {
  it('adds /mcp to the base URL as the rest of the CLI takes it', () => {
    expect(mcpEndpoint('http://127.0.0.1:8765').href).toBe('http://127.0.0.1:8765/mcp');
    expect(mcpEndpoint('https://gate.example.org/base//?q=1#x').href).toBe('https://gate.example.org/base/mcp');
  });

  it('refuses what is not an http(s) URL without credentials, without echoing them', () => {
    for (const url of ['', 'gate.example.org', 'file:///etc/passwd', 'javascript:alert(1)', 'ws://127.0.0.1:8765']) expect(() => mcpEndpoint(url)).toThrow(BridgeStartError);
    for (const url of ['http://user:s3cret@127.0.0.1:8765', 'http://s3cret@127.0.0.1:8765', 'http://:s3cret@127.0.0.1:8765']) {
      expect(() => mcpEndpoint(url)).toThrow(/must not carry credentials/);
      expect(() => mcpEndpoint(url)).not.toThrow(/s3cret/);
    }
  });
});
