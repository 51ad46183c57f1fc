import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp, cpuWaitMs, runCli, sendExact, startHarness, type Harness } from './e2e-harness.js';

const ALICE = 'alice-token-source-health-0123456789';
/** How long `/healthz` and `/readyz` may take while a source restarts, less the time the box kept the server off a CPU. */
const PROBE_BOUND_MS = 100;

/**
 * An MCP server (newline-delimited JSON-RPC over stdio) offering `crash`, which writes the flag
 * file named by LOOP_FLAG and exits 1. Once the flag exists every start exits at once, before it
 * answers `initialize`: the source is then in a restart loop for as long as the flag stays.
 * Its `echo` answers what it was sent, so a test can tell the server is back.
 */
const LOOPING_SERVER = String.raw`
import { createInterface } from 'node:readline';
import { existsSync, writeFileSync } from 'node:fs';
const flag = process.env.LOOP_FLAG;
if (existsSync(flag)) process.exit(3);
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
const tools = [
  { name: 'crash', description: 'Exits 1 and keeps exiting.', inputSchema: { type: 'object', properties: {} } },
  { name: 'echo', description: 'Echoes its text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
];
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'looping', version: '1.0.0' } } });
  else if (m.method === 'tools/list') send({ id: m.id, result: { tools } });
  else if (m.method === 'tools/call' && m.params.name === 'crash') {
    writeFileSync(flag, '1');
    send({ id: m.id, result: { content: [{ type: 'text', text: 'bye' }] } });
    setTimeout(() => process.exit(1), 20);
  } else if (m.method === 'tools/call') send({ id: m.id, result: { content: [{ type: 'text', text: String(m.params.arguments.text) }] } });
  else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'no such method' } });
});
`;

/** A steady second server, so a looping source is seen not to take the others out. */
const STEADY_SERVER = String.raw`
import { createInterface } from 'node:readline';
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'steady', version: '2.0.0' } } });
  else if (m.method === 'tools/list') send({ id: m.id, result: { tools: [{ name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object', properties: {} } }] } });
  else if (m.method === 'tools/call') send({ id: m.id, result: { content: [{ type: 'text', text: 'pong' }] } });
  else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'no such method' } });
});
`;

/** One source as the reports carry it. */
interface SourceBody {
  readonly name: string;
  readonly state: string;
  readonly attempt: number;
}

interface Probe {
  readonly path: string;
  readonly status: number;
  readonly ms: number;
}

/**
 * Health and readiness of MCP sources (issue 12, defect 6): `/healthz`, `/readyz`, tRPC `health`,
 * `tools.sources`, REST `/api/v1/tools` and `toolgate tools sources` say where each source is,
 * without reason texts, paths or commands, and keep answering promptly while one source is in a
 * restart loop, which takes its own tools out but not the gateway out of rotation.
 */
describe('source health and readiness, end to end', { timeout: 120_000 }, () => {
  let base: string;
  let flag: string;
  let h: Harness;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'toolgate-source-health-'));
    flag = join(base, 'loop.flag');
    await writeFile(join(base, 'looping-server.mjs'), LOOPING_SERVER);
    await writeFile(join(base, 'steady-server.mjs'), STEADY_SERVER);
    h = await startHarness(
      {},
      {
        // risk "low": the operator's trust, so the tools run without an approval.
        mcpServers: {
          servers: [
            { name: 'looping', command: process.execPath, args: [join(base, 'looping-server.mjs')], env: { LOOP_FLAG: flag }, tier: 'unisolated', risk: 'low' },
            { name: 'steady', command: process.execPath, args: [join(base, 'steady-server.mjs')], tier: 'unisolated', risk: 'low' },
          ],
        },
        principals: {
          principals: [{ id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] }],
          roles: { worker: ['*'] },
          tenants: { acme: { tools: ['*'], grants: [{ type: 'exec', scope: 'mcp:looping' }, { type: 'exec', scope: 'mcp:steady' }] } },
        },
      },
    );
  });
  afterAll(async () => {
    await h?.stop();
    await rm(base, { recursive: true, force: true });
  });

  const invoke = (tool: string, args: Record<string, unknown> = {}) => h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool, args } });
  const toolNames = async () => ((await h.call('/api/v1/tools', { token: ALICE })).body.tools as { name: string }[]).map((t) => t.name);
  const sourceOf = (body: { sources: SourceBody[] }, name: string) => body.sources.find((s) => s.name === name);

  /** GETs `path` and times it less the time the box kept the server off a CPU. */
  async function probe(path: string): Promise<Probe> {
    const started = performance.now();
    const waited = cpuWaitMs();
    const { status } = await h.call(path);
    return { path, status, ms: performance.now() - started - (cpuWaitMs() - waited) };
  }

  it('reports every source up with its counts, and is ready', async () => {
    const health = await h.call('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ ok: true, reasons: [] });
    expect(health.body.sources).toEqual([
      { name: 'looping', state: 'up', transport: 'stdio', attempt: 0, accepted: 2, rejected: 0, held: 0, since: expect.any(Number) },
      { name: 'steady', state: 'up', transport: 'stdio', attempt: 0, accepted: 1, rejected: 0, held: 0, since: expect.any(Number) },
    ]);
    const ready = await h.call('/readyz');
    expect(ready).toMatchObject({ status: 200, body: { ready: true, reasons: [], sources: health.body.sources } });
    expect(await toolNames()).toEqual(expect.arrayContaining(['looping__crash', 'looping__echo', 'steady__ping']));
  });

  describe('a source in a restart loop', () => {
    let probes: Probe[];
    beforeAll(async () => {
      expect(await invoke('looping__crash')).toMatchObject({ body: { ok: true } });
      expect(existsSync(flag)).toBe(true);
      // Probe both routes through at least three failed restarts (0.5 s, 1 s, 2 s of backoff).
      probes = [];
      const until = performance.now() + 4_500;
      while (performance.now() < until) {
        probes.push(await probe('/healthz'), await probe('/readyz'));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });

    it('keeps /healthz and /readyz answering 200 within 100 ms throughout', () => {
      console.log(`restart loop: ${probes.length} probes, slowest ${Math.max(...probes.map((p) => p.ms)).toFixed(1)} ms`);
      expect(probes.length).toBeGreaterThan(20);
      for (const p of probes) expect(p, `${p.path} answered ${p.status} in ${p.ms.toFixed(1)} ms`).toMatchObject({ status: 200 });
      expect(Math.max(...probes.map((p) => p.ms))).toBeLessThan(PROBE_BOUND_MS);
    });

    it('reports the looping source as restarting with its attempt, and the other source up, on /healthz, /readyz and tRPC health', async () => {
      const health = await h.call('/healthz');
      expect(health.status).toBe(200);
      expect(health.body.ok).toBe(true);
      const looping = sourceOf(health.body, 'looping');
      expect(looping).toMatchObject({ state: 'restarting', transport: 'stdio' });
      expect(looping!.attempt).toBeGreaterThanOrEqual(2);
      expect(sourceOf(health.body, 'steady')).toMatchObject({ state: 'up', accepted: 1 });
      const ready = await h.call('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.ready).toBe(true);
      expect(sourceOf(ready.body, 'looping')).toMatchObject({ state: 'restarting' });
      const trpc = await h.call('/trpc/health');
      expect(sourceOf(trpc.body.result.data, 'looping')).toMatchObject({ state: 'restarting' });
    });

    it('puts no reason text, path or command in the public reports', async () => {
      for (const path of ['/healthz', '/readyz', '/trpc/health']) {
        const text = JSON.stringify((await h.call(path)).body);
        for (const secret of [base, process.execPath, 'looping-server.mjs', 'exit code', 'LOOP_FLAG', 'stopped unexpectedly']) expect(text, path).not.toContain(secret);
        for (const source of (path === '/trpc/health' ? JSON.parse(text).result.data : JSON.parse(text)).sources) {
          expect(Object.keys(source).sort()).toEqual(['accepted', 'attempt', 'held', 'name', 'rejected', 'since', 'state', 'transport']);
        }
      }
    });

    it("stops offering the looping source's tools, refuses a call to one as SOURCE_UNAVAILABLE, and keeps serving the other source", async () => {
      const names = await toolNames();
      expect(names).not.toContain('looping__echo');
      expect(names).toContain('steady__ping');
      const refused = await invoke('looping__echo', { text: 'hi' });
      expect(refused.body).toMatchObject({ ok: false, denial: { gate: 'lookup', code: 'SOURCE_UNAVAILABLE' } });
      expect(refused.body.denial.message).toMatch(/'looping' is restarting/);
      expect(await invoke('steady__ping')).toMatchObject({ body: { ok: true } });
      // Nor does the MCP face offer them to an agent.
      const client = new Client({ name: 'source-health-e2e', version: '1.0.0' });
      await connectMcp(h, ALICE, client);
      try {
        const mcp = (await client.listTools()).tools.map((t) => t.name);
        expect(mcp).not.toContain('looping__echo');
        expect(mcp).toContain('steady__ping');
      } finally {
        await client.close();
      }
    });

    it('carries the sources beside the tools in REST /api/v1/tools and in every tRPC export, and answers tools.sources', async () => {
      const rest = await h.call('/api/v1/tools', { token: ALICE });
      expect(sourceOf(rest.body, 'looping')).toMatchObject({ state: 'restarting' });
      expect(Array.isArray(rest.body.tools)).toBe(true);
      const exported = await h.call(`/trpc/tools.list?input=${encodeURIComponent(JSON.stringify({ format: 'toolgate' }))}`, { token: ALICE });
      expect(exported.body.result.data).toMatchObject({ format: 'toolgate', aliases: [], withheld: [] });
      expect(sourceOf(exported.body.result.data, 'looping')).toMatchObject({ state: 'restarting' });
      // Without a format the answer stays the bare array current clients read.
      const bare = await h.call('/trpc/tools.list', { token: ALICE });
      expect(Array.isArray(bare.body.result.data)).toBe(true);
      const sources = await h.call('/api/v1/tools/sources', { token: ALICE });
      expect(sources.body.sources.map((s: { name: string }) => s.name)).toEqual(['looping', 'steady']);
      expect((await h.call('/api/v1/tools/sources')).status).toBe(401);
    });

    it('shows the sources in `toolgate tools sources` and `toolgate health`', async () => {
      const listed = await runCli(h, ['tools', 'sources'], ALICE);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^looping\s+restarting \(attempt \d+\)\s+stdio\s+2 accepted, 0 rejected, 0 held\s+since \d{4}-\d\d-\d\dT/m);
      expect(listed.stdout).toMatch(/^steady\s+up\s+stdio\s+1 accepted, 0 rejected, 0 held/m);
      const health = await runCli(h, ['health'], ALICE);
      expect(health.code).toBe(0);
      expect(health.stdout).toMatch(/^ok \(version [^)]+\)\nlooping\s+restarting/);
    });

    it('comes back up once the loop ends, and its tools are offered again', async () => {
      await rm(flag);
      const deadline = Date.now() + 40_000;
      while (Date.now() < deadline && sourceOf((await h.call('/healthz')).body, 'looping')?.state !== 'up') await new Promise((resolve) => setTimeout(resolve, 100));
      expect(sourceOf((await h.call('/healthz')).body, 'looping')).toMatchObject({ state: 'up', accepted: 2 });
      expect(await invoke('looping__echo', { text: 'back' })).toMatchObject({ body: { ok: true } });
    });
  });

  describe('a request the Host/Origin guard refuses', () => {
    it('learns only the verdict from /readyz, as from /healthz', async () => {
      const port = h.server.port;
      for (const headers of [[['Host', 'evil.example']], [['Host', 'evil.example'], ['Origin', 'https://evil.example']]] as [string, string][][]) {
        const ready = await sendExact(port, { method: 'GET', path: '/readyz', headers });
        expect(ready.status).toBe(200);
        expect(ready.body).toEqual({ ready: true });
        const health = await sendExact(port, { method: 'GET', path: '/healthz', headers });
        expect(health.body).toEqual({ ok: true });
      }
      const post = await sendExact(port, { method: 'POST', path: '/readyz', headers: [['Host', 'evil.example']] });
      expect(post.body).not.toHaveProperty('sources');
      expect(post.body).not.toHaveProperty('ready');
    });

    it('answers a POST to /readyz from an allowed Host with 405', async () => {
      const res = await h.call('/readyz', { method: 'POST' });
      expect(res.status).toBe(405);
    });
  });
});

describe('readiness while the audit is down', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    await h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: { tool: 'calculator', args: { expression: '1+1' } } });
    // Damage one frame of the audit trail, as audit-failure.e2e does, and start over it.
    const dir = join(h.dataDir, 'data', 'audit');
    const segment = (await readdir(dir)).filter((f) => /^audit-\d+\.log$/.test(f)).sort()[0]!;
    const lines = (await readFile(join(dir, segment), 'utf8')).split('\n');
    lines[1] = lines[1]!.replace('"calculator"', '"calculatoR"');
    await writeFile(join(dir, segment), lines.join('\n'));
    await h.restart();
  });
  afterAll(async () => h?.stop());

  it('answers /readyz 503 with the audit reason, as /healthz does, and a refused Host only {ready: false}', async () => {
    const health = await h.call('/healthz');
    expect(health.status).toBe(503);
    const ready = await h.call('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ ready: false, reasons: health.body.reasons, sources: [] });
    expect(ready.body.reasons.join(' ')).toMatch(/^audit: /);
    const refused = await sendExact(h.server.port, { method: 'GET', path: '/readyz', headers: [['Host', 'evil.example']] });
    expect(refused).toMatchObject({ status: 503, body: { ready: false } });
    expect(Object.keys(refused.body)).toEqual(['ready']);
  });
});
