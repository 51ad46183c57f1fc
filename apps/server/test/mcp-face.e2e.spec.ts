import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedSchema } from '@toolgate/gateway';
import { bwrapUnavailable, connectMcp, healthTimes, sendExact, startHarness, type ExactAnswer, type Harness } from './e2e-harness.js';

// Response bodies are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

const ALICE = 'alice-token-mcp-face-0123456789abcdef';
const PETE = 'pete-token-mcp-face-0123456789abcdef';
/** Reads the tenant's whole audit trail (operators see every principal's records). */
const OLGA = 'olga-token-mcp-face-0123456789abcdef';

/**
 * An upstream MCP server (newline-delimited JSON-RPC over stdio) with one tool, `wait`, that never
 * answers; when the call is cancelled it writes the cancelled request id to STOPPED_FLAG. It is
 * Toolgate's slow tool: cancellation from an MCP client must reach it.
 */
const WAITING_SERVER = String.raw`
import { createInterface } from 'node:readline';
import { writeFileSync } from 'node:fs';
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'slow', version: '1.0.0' } } });
  else if (m.method === 'tools/list') send({ id: m.id, result: { tools: [{ name: 'wait', description: 'Waits until cancelled.', inputSchema: { type: 'object', properties: {} } }] } });
  else if (m.method === 'tools/call') { /* never answers */ }
  else if (m.method === 'notifications/cancelled') writeFileSync(process.env.STOPPED_FLAG, String(m.params.requestId));
  else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'no such method' } });
});
`;

/** One request with exactly the given header lines, to `/mcp` by POST unless told otherwise. */
const send = (port: number, init: { method?: string; path?: string; headers: [string, string][]; body?: string | Buffer }) =>
  sendExact(port, { method: 'POST', path: '/mcp', tolerateReset: true, ...init });

type Generation = 'modern (v2, 2026-07-28)' | 'legacy (v2, 2025-11-25)' | 'legacy (sdk 1.x, 2025-era)';
const GENERATIONS: Generation[] = ['modern (v2, 2026-07-28)', 'legacy (v2, 2025-11-25)', 'legacy (sdk 1.x, 2025-era)'];

interface TestClient {
  readonly protocolVersion: string | undefined;
  listTools(params?: { cursor?: string }): Promise<{ tools: { name: string; [k: string]: unknown }[]; nextCursor?: string }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }, signal?: AbortSignal): Promise<any>;
  close(): Promise<void>;
}

async function connect(h: Harness, token: string, generation: Generation): Promise<TestClient> {
  if (generation === 'legacy (sdk 1.x, 2025-era)') {
    const client = new LegacyClient({ name: 'e2e-v1', version: '1.0.0' });
    const transport = await connectMcp(h, token, client);
    return {
      protocolVersion: transport.protocolVersion,
      listTools: (params) => client.listTools(params),
      callTool: (params, signal) => client.callTool(params, undefined, signal ? { signal } : {}),
      close: () => client.close(),
    };
  }
  const client = new ModernClient(
    { name: 'e2e-v2', version: '1.0.0' },
    generation === 'modern (v2, 2026-07-28)' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await connectMcp(h, token, client);
  return {
    protocolVersion: client.getNegotiatedProtocolVersion(),
    listTools: (params) => client.listTools(params),
    callTool: (params, signal) => client.callTool(params, signal ? { signal } : {}),
    close: () => client.close(),
  };
}

describe('Toolgate as an MCP server at /mcp, end to end', { timeout: 120_000 }, () => {
  let h: Harness;
  let base: string;
  let port: number;
  let sandboxed: boolean;
  const stoppedFlag = () => join(base, 'stopped.flag');

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'toolgate-mcp-face-'));
    await writeFile(join(base, 'waiting-server.mjs'), WAITING_SERVER);
    sandboxed = (await bwrapUnavailable('mcp-face role filtering')) === undefined;
    h = await startHarness(
      {},
      {
        // risk "low": the operator's trust, so `wait` runs without an approval.
        mcpServers: { servers: [{ name: 'slow', command: process.execPath, args: [join(base, 'waiting-server.mjs')], env: { STOPPED_FLAG: stoppedFlag() }, tier: 'unisolated', risk: 'low' }] },
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'pete', token: PETE, tenant: 'acme', roles: ['planner'] },
            { id: 'olga', token: OLGA, tenant: 'acme', roles: ['operator'] },
          ],
          roles: { worker: ['*'], planner: ['calculator', 'read_file'], operator: [] },
          tenants: { acme: { tools: ['*'], grants: [{ type: 'exec', scope: 'mcp:slow' }, { type: 'filesystem', scope: 'workspace' }] } },
        },
      },
    );
    port = h.server.port;
    // Discovery of the upstream server runs after the start; wait until its tool is listed.
    for (let i = 0; i < 200 && !(await h.call('/api/v1/tools', { token: ALICE })).body.tools.some((t: any) => t.name === 'slow__wait'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(async () => {
    await h?.stop();
    await rm(base, { recursive: true, force: true });
  });

  const audit = async (): Promise<any[]> => (await h.call('/api/v1/audit?limit=1000', { token: OLGA })).body;

  for (const generation of GENERATIONS) {
    describe(`with the SDK client, ${generation}`, () => {
      it('connects and negotiates the revision of its era', async () => {
        const client = await connect(h, ALICE, generation);
        if (generation.startsWith('modern')) expect(client.protocolVersion).toBe('2026-07-28');
        else expect(client.protocolVersion).toMatch(/^2025-/);
        await client.close();
      });

      it('lists exactly what tools.list shows that principal, with the same schemas, plus title and hints', async () => {
        const client = await connect(h, ALICE, generation);
        const rest = (await h.call('/api/v1/tools', { token: ALICE })).body.tools as any[];
        const listed = (await client.listTools()).tools;
        expect(listed.map((t) => t.name).sort()).toEqual(rest.map((t) => t.name).sort());
        for (const manifest of rest) {
          const tool = listed.find((t) => t.name === manifest.name)!;
          expect(tool.description).toBe(manifest.description);
          // Closed at every level, as the LLM exports are (ADR 0053): web_search's manifest drops unknown arguments instead.
          expect(tool.inputSchema).toEqual(closedSchema(manifest.input));
          expect(typeof tool.title).toBe('string');
          expect(tool.annotations).toMatchObject({ readOnlyHint: expect.any(Boolean), destructiveHint: expect.any(Boolean), openWorldHint: expect.any(Boolean) });
        }
        expect(listed.find((t) => t.name === 'calculator')).toMatchObject({ outputSchema: rest.find((t) => t.name === 'calculator').output, annotations: { readOnlyHint: true } });
        expect(listed.find((t) => t.name === 'slow__wait')?.annotations).toMatchObject({ openWorldHint: true });
        await client.close();
      });

      it('calls a tool through the gateway, audited like any call', async () => {
        const client = await connect(h, ALICE, generation);
        const result = await client.callTool({ name: 'calculator', arguments: { expression: '6*7' } });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toEqual({ result: 42 });
        expect(result.content).toEqual([{ type: 'text', text: '{"result":42}' }]);
        const records = (await audit()).filter((r) => r.tool === 'calculator' && r.principal === 'alice');
        expect(records.slice(-2).map((r) => r.event)).toEqual(['authorized', 'succeeded']);
        await client.close();
      });

      it('answers a denial as a tool error with the gate, code, hint and delegation, and the denial as structuredContent', async () => {
        const client = await connect(h, PETE, generation);
        const result = await client.callTool({ name: 'slow__wait', arguments: {} });
        expect(result.isError).toBe(true);
        expect(result.content[0].text).toMatch(/^Toolgate refused this call at the allow gate: TOOL_NOT_ALLOWED\./);
        expect(result.content[0].text).toContain('delegate the task to one of: alice');
        expect(result.structuredContent).toMatchObject({ ok: false, denial: { gate: 'allow', code: 'TOOL_NOT_ALLOWED' } });
        const denied = (await audit()).filter((r) => r.principal === 'pete' && r.tool === 'slow__wait');
        expect(denied.at(-1)).toMatchObject({ event: 'denied', code: 'TOOL_NOT_ALLOWED' });
        await client.close();
      });

      it('shows a planner only its tools: no bash', async () => {
        const client = await connect(h, PETE, generation);
        const names = (await client.listTools()).tools.map((t) => t.name).sort();
        expect(names).toEqual(['calculator', 'read_file']);
        const alice = await connect(h, ALICE, generation);
        // Where bubblewrap runs, bash is offered, and only to the worker.
        if (sandboxed) expect((await alice.listTools()).tools.map((t) => t.name)).toContain('bash');
        await Promise.all([client.close(), alice.close()]);
      });

      it('cancels a running call when the client aborts it: the upstream tool is told to stop and the audit closes the call', async () => {
        await rm(stoppedFlag(), { force: true });
        const client = await connect(h, ALICE, generation);
        const before = (await audit()).length;
        const controller = new AbortController();
        const call = client.callTool({ name: 'slow__wait', arguments: {} }, controller.signal).catch((e: unknown) => e);
        await expect.poll(async () => (await audit()).slice(before).map((r) => r.event), { timeout: 10_000 }).toEqual(['authorized']);
        controller.abort();
        expect(await call).toBeInstanceOf(Error);
        await expect.poll(() => existsSync(stoppedFlag()), { timeout: 10_000 }).toBe(true);
        await expect.poll(async () => (await audit()).slice(before).map((r) => r.event), { timeout: 10_000 }).toEqual(['authorized', 'denied']);
        // The gateway's audit names no reason; a cancelled call closes at execute, long before any deadline, and not as a TIMEOUT.
        expect((await audit()).at(-1)).toMatchObject({ tool: 'slow__wait', gate: 'execute', code: 'EXECUTION_FAILED' });
        await client.close();
      });
    });
  }

  const own = (): [string, string][] => [
    ['Host', `127.0.0.1:${port}`],
    ['Authorization', `Bearer ${ALICE}`],
    ['Content-Type', 'application/json'],
    ['Accept', 'application/json, text/event-stream'],
  ];
  const initialize = (id: number | string = 1) =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const toolsList = (id = 2) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
  const replace = (headers: [string, string][], name: string, value: string | undefined): [string, string][] => [
    ...headers.filter(([n]) => n.toLowerCase() !== name.toLowerCase()),
    ...(value === undefined ? [] : ([[name, value]] as [string, string][])),
  ];
  /** Audit records so far: a refused request must add none. */
  const auditCount = async () => (await audit()).length;

  /** Runs `attack` while sampling /healthz; the server must keep answering within 100 ms and audit nothing. */
  async function holdsUp(attack: () => Promise<void>): Promise<void> {
    const before = await auditCount();
    let done = false;
    const running = attack().finally(() => (done = true));
    const times = await healthTimes(h, () => done, { minSamples: 2 });
    await running;
    expect(Math.max(...times)).toBeLessThan(100);
    // Only the audit reads of this check itself may follow (they are not audited).
    expect(await auditCount()).toBe(before);
  }

  describe('missing or wrong token', () => {
    const spellings: [string, string | undefined][] = [
      ['no Authorization', undefined],
      ['a wrong token', 'Bearer not-a-token-of-anyone-0000000000'],
      ['Basic scheme', `Basic ${Buffer.from(`alice:${ALICE}`).toString('base64')}`],
      ['Bearer without token', 'Bearer '],
      ['token with a trailing word', `Bearer ${ALICE} extra`],
      ['a token of another case', `Bearer ${ALICE.toUpperCase()}`],
      ['the token in the query only', undefined],
    ];
    for (const [name, authorization] of spellings) {
      it(`answers ${name} with 401 and WWW-Authenticate: Bearer, and audits nothing`, async () => {
        await holdsUp(async () => {
          const headers = replace(own(), 'Authorization', authorization);
          const answer = await send(port, { path: name.includes('query') ? `/mcp?token=${ALICE}` : '/mcp', headers, body: initialize() });
          expect(answer.status).toBe(401);
          expect(answer.headers['www-authenticate']).toMatch(/^Bearer\b/);
          expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: expect.any(Number), message: expect.stringMatching(/^(missing bearer token|invalid bearer token: .+)$/) } });
          expect(answer.headers['www-authenticate']).toContain('/.well-known/oauth-protected-resource/mcp"');
        });
      });
    }
  });

  describe('DNS rebinding (Host) and foreign pages (Origin) at /mcp', () => {
    for (const host of ['evil.example', 'evil.example:PORT', '2130706433:PORT', '127.0.0.1.nip.io:PORT', 'localhost.evil:PORT', 'attacker.localhost.example:PORT']) {
      it(`refuses Host ${host} with 421, with a valid token, before reading the body`, async () => {
        await holdsUp(async () => {
          const answer = await send(port, { headers: replace(own(), 'Host', host.replace('PORT', String(port))), body: initialize() });
          expect(answer.status).toBe(421);
          expect(answer.body.error.code).toBe('HOST_NOT_ALLOWED');
        });
      });
    }
    for (const origin of ['http://evil.example', 'http://evil.example:PORT', 'null', 'http://127.0.0.1.evil.example:PORT', 'https://localhost.evil', 'http://localhost:1']) {
      it(`refuses Origin ${origin} with 403, with a valid token`, async () => {
        await holdsUp(async () => {
          const answer = await send(port, { headers: [...own(), ['Origin', origin.replace('PORT', String(port))]], body: initialize() });
          expect(answer.status).toBe(403);
          expect(answer.body.error.code).toBe('ORIGIN_NOT_ALLOWED');
        });
      });
    }
  });

  describe('malformed JSON-RPC', () => {
    for (const [name, body] of [
      ['truncated JSON', '{"jsonrpc":"2.0","id":1,"method":"tools/list"'],
      ['not JSON at all', 'tools/list please'],
      ['an empty body', ''],
      ['a JSON string', '"tools/list"'],
      ['a JSON number', '42'],
    ] as const) {
      it(`answers ${name} with a JSON-RPC error, HTTP 400, and keeps serving`, async () => {
        await holdsUp(async () => {
          const answer = await send(port, { headers: own(), body });
          expect(answer.status).toBe(400);
          expect(answer.body.jsonrpc).toBe('2.0');
          expect([-32700, -32600]).toContain(answer.body.error.code);
        });
      });
    }
    it('answers a request without jsonrpc 2.0 or method as an invalid request', async () => {
      for (const body of [{ id: 1, method: 'tools/list' }, { jsonrpc: '1.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 1 }, { jsonrpc: '2.0', id: {}, method: 'tools/list' }]) {
        const answer = await send(port, { headers: own(), body: JSON.stringify(body) });
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expect(answer.body.error.code, JSON.stringify(body)).toBe(-32600);
      }
    });
  });

  describe('batch arrays', () => {
    it('refuses a JSON-RPC batch of 2026-07-28 requests and audits nothing', async () => {
      await holdsUp(async () => {
        const modern = (id: number) => ({
          ...toolsList(id),
          params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
        });
        const answer = await send(port, { headers: [...own(), ['MCP-Protocol-Version', '2026-07-28']], body: JSON.stringify([modern(1), modern(2)]) });
        expect(answer.status).toBe(400);
        expect(answer.body.error.code).toBe(-32600);
      });
    });
    it('refuses a 2025-era batch (removed in 2025-06-18) of tool calls without running any of them', async () => {
      await holdsUp(async () => {
        const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'calculator', arguments: { expression: '1+1' } } });
        for (const version of ['2025-11-25', '2025-06-18', undefined]) {
          const headers = version ? [...own(), ['MCP-Protocol-Version', version] as [string, string]] : own();
          const bodies = [
            JSON.stringify([call(1), call(2)]),
            `  \n[${JSON.stringify(call(3))}]`,
            `${' '.repeat(5000)}[${JSON.stringify(call(4))}]`,
            JSON.stringify([initialize()]),
            // A UTF-8 byte-order mark, which the SDK's decoder drops before it parses.
            `\uFEFF${JSON.stringify([call(5), call(6)])}`,
            `\uFEFF \r\n[${JSON.stringify(call(7))}]`,
          ];
          for (const body of bodies) {
            const answer = await send(port, { headers, body });
            expect(answer.status, `${version} ${body.slice(0, 40)}`).toBe(400);
            expect(answer.body.error.code).toBe(-32600);
          }
        }
      });
    });
  });

  describe('unknown methods', () => {
    for (const method of ['tools/execute', 'resources/list', 'admin/approve', 'toolgate/invoke', '']) {
      it(`answers '${method}' with -32601 and audits nothing`, async () => {
        await holdsUp(async () => {
          const answer = await send(port, { headers: [...own(), ['MCP-Protocol-Version', '2025-11-25']], body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: {} }) });
          const error = answer.body.error ?? (typeof answer.body === 'string' ? JSON.parse(/data: (.*)/.exec(answer.body)?.[1] ?? '{}').error : undefined);
          expect(error?.code).toBe(-32601);
        });
      });
    }
  });

  describe('log injection through what the SDK reports', () => {
    it('keeps each report on one bounded line, whatever a client put in the request', async () => {
      const forged = 'x\nerror audit: chain broken\r\u001b[2J' + 'y'.repeat(5000);
      for (const body of [
        JSON.stringify({ jsonrpc: '2.0', id: 9, method: forged, params: {} }),
        `{"jsonrpc":"2.0","id":9,"method":"${'z'.repeat(300)}\n`,
        JSON.stringify({ jsonrpc: '2.0', method: `notifications/${forged}` }),
      ]) {
        await send(port, { headers: [...own(), ['MCP-Protocol-Version', '2025-11-25']], body });
        // A header value may carry a tab, the one control character HTTP lets through, and 16 KiB.
        await send(port, { headers: [...own(), ['MCP-Protocol-Version', `2099-01-01\tforged\t${'y'.repeat(3000)}`]], body });
      }
      const reports = h.logs.filter((line) => line.includes('MCP: '));
      console.log(`${reports.length} SDK reports, e.g. ${JSON.stringify(reports[0] ?? '').slice(0, 160)}`);
      expect(reports.length).toBeGreaterThan(0);
      for (const line of reports) {
        expect([...line].filter((c) => c < ' ' || c === '\u007f'), line.slice(0, 80)).toEqual([]);
        expect(line.length).toBeLessThan(260);
      }
    });
  });

  describe('session operations a stateless server does not have', () => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      it(`answers ${method} /mcp with 405 and audits nothing`, async () => {
        await holdsUp(async () => {
          const answer = await send(port, { method, headers: [...own(), ['Mcp-Session-Id', 'guessed-session']] });
          expect(answer.status).toBe(405);
        });
      });
    }
  });

  describe('oversized bodies', () => {
    it('refuses a body over the server cap with 413 by Content-Length, before reading it', async () => {
      await holdsUp(async () => {
        const big = Buffer.alloc(2 * 1024 * 1024, 'a');
        const answer = await send(port, { headers: own(), body: big });
        expect(answer.status).toBe(413);
        expect(answer.body.error.code).toBe(-32600);
      });
    });
    it('refuses a chunked body that grows past the cap with 413', async () => {
      await holdsUp(async () => {
        const answer = await new Promise<ExactAnswer>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp', setHost: false, headers: [...own(), ['Transfer-Encoding', 'chunked']].flat() }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
          });
          req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
          const piece = Buffer.alloc(64 * 1024, 'b');
          let sent = 0;
          const pump = () => {
            while (sent < 40 && req.write(piece)) sent += 1;
            if (sent < 40) req.once('drain', pump);
            else req.end();
          };
          pump();
        });
        expect(answer.status).toBe(413);
      });
    });
  });

  describe('wrong Accept or Content-Type', () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp']) {
      it(`answers Content-Type ${type} with 415`, async () => {
        await holdsUp(async () => {
          const answer = await send(port, { headers: replace(own(), 'Content-Type', type), body: initialize() });
          expect(answer.status).toBe(415);
        });
      });
    }
    for (const accept of ['text/html', 'application/xml', 'image/*']) {
      it(`answers Accept ${accept} with 406`, async () => {
        await holdsUp(async () => {
          const answer = await send(port, { headers: replace(own(), 'Accept', accept), body: initialize() });
          expect(answer.status).toBe(406);
        });
      });
    }
  });

  describe('unsupported protocol version', () => {
    for (const version of ['1999-01-01', '2024-01-01', 'latest', '2099-12-31']) {
      it(`refuses MCP-Protocol-Version ${version} on a request after initialize with 400`, async () => {
        await holdsUp(async () => {
          const answer = await send(port, { headers: [...own(), ['MCP-Protocol-Version', version]], body: JSON.stringify(toolsList()) });
          expect(answer.status).toBe(400);
        });
      });
    }
    for (const version of ['2025-06-18', '2025-11-25']) {
      it(`speaks ${version} to a raw client: initialize agrees on it and tools/list answers under its header`, async () => {
        const sse = (answer: ExactAnswer) => (typeof answer.body === 'string' ? JSON.parse(/data: (.*)/.exec(answer.body)?.[1] ?? '{}') : answer.body);
        const init = await send(port, {
          headers: own(),
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
        });
        expect(sse(init).result.protocolVersion).toBe(version);
        const list = await send(port, { headers: [...own(), ['MCP-Protocol-Version', version]], body: JSON.stringify(toolsList()) });
        expect(list.status).toBe(200);
        expect(sse(list).result.tools.map((t: any) => t.name)).toContain('calculator');
      });
    }

    it('answers an initialize naming an unknown revision with one it speaks (the spec: the server proposes its own)', async () => {
      const answer = await send(port, {
        headers: own(),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
      });
      const body = typeof answer.body === 'string' ? JSON.parse(/data: (.*)/.exec(answer.body)?.[1] ?? '{}') : answer.body;
      expect(body.result.protocolVersion).toMatch(/^20\d\d-\d\d-\d\d$/);
      expect(body.result.protocolVersion).not.toBe('1999-01-01');
    });
  });
});
