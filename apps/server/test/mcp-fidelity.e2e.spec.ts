import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthTimes, startHarness, type Harness } from './e2e-harness.js';

const ALICE = 'alice-token-mcp-fidelity-0123456789';
/** How long `/healthz` may take while a server floods, less the time the box kept the server off a CPU. */
const HEALTH_BOUND_MS = 100;
// The adapter's fixture: a server that floods its log, announces list changes in a loop and
// mirrors large payloads (libs/adapters/mcp-client/test/fixtures/fidelity-server.mjs).
const FIDELITY_SERVER = fileURLToPath(new URL('../../../libs/adapters/mcp-client/test/fixtures/fidelity-server.mjs', import.meta.url));

/**
 * What a real server sends that the gateway must bound (issue 12 defects 5 and 8; DESIGN §9: no
 * server-controlled input may hold the event loop): a flood of log messages, a flood of
 * `tools/list_changed`, and a large result mirrored in `structuredContent` with binary data in it.
 * While each runs, `/healthz` keeps answering within 100 ms, and the operator log stays bounded.
 */
describe('server floods and large mirrored results, end to end', { timeout: 120_000 }, () => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'toolgate-mcp-fidelity-'));
    h = await startHarness(
      {},
      {
        // risk "low": the operator's trust, so the calls run without an approval.
        mcpServers: { servers: [{ name: 'fid', command: process.execPath, args: [FIDELITY_SERVER], env: {}, tier: 'unisolated', risk: 'low' }] },
        principals: {
          principals: [{ id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] }],
          roles: { worker: ['*'] },
          tenants: { acme: { tools: ['*'], grants: [{ type: 'exec', scope: 'mcp:fid' }] } },
        },
      },
    );
  });
  afterAll(async () => {
    await h?.stop();
    await rm(base, { recursive: true, force: true });
  });

  async function whileCalling(tool: string, args: Record<string, unknown>): Promise<{ body: Record<string, unknown>; slowest: number }> {
    let done = false;
    const answer = h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool, args } }).finally(() => (done = true));
    const times = await healthTimes(h, () => done);
    const { body } = await answer;
    return { body: body as Record<string, unknown>, slowest: Math.max(...times) };
  }

  it('a flood of 20,000 log messages: /healthz stays prompt and the operator log gets a bounded share', async () => {
    const before = h.logs.length;
    const { body, slowest } = await whileCalling('fid__log', { count: 20_000, level: 'warning' });
    console.log(`log flood: slowest /healthz ${slowest.toFixed(1)} ms, ${h.logs.length - before} operator lines`);
    expect(body).toMatchObject({ ok: true });
    expect(slowest).toBeLessThan(HEALTH_BOUND_MS);
    const logged = h.logs.slice(before).filter((l) => l.startsWith("warn mcp fid: MCP server 'fid' log (warning"));
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.length).toBeLessThan(1000);
  });

  it('a flood of 2,000 tools/list_changed: /healthz stays prompt and few listings follow', async () => {
    const listings = async () => Number((await h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool: 'fid__listings', args: {} } })).body.output.content[0].text);
    const first = await listings();
    const { body, slowest } = await whileCalling('fid__change', { times: 2000 });
    expect(body).toMatchObject({ ok: true });
    let settled = false;
    const after = healthTimes(h, () => settled);
    await new Promise((r) => setTimeout(r, 3000));
    settled = true;
    const slowestAfter = Math.max(...(await after));
    console.log(`list_changed flood: slowest /healthz ${Math.max(slowest, slowestAfter).toFixed(1)} ms`);
    expect(Math.max(slowest, slowestAfter)).toBeLessThan(HEALTH_BOUND_MS);
    expect((await listings()) - first).toBeLessThanOrEqual(3);
    const { body: tools } = await h.call('/api/v1/tools', { token: ALICE });
    expect((tools.tools as { name: string }[]).map((t) => t.name)).toContain('fid__added');
  });

  it('an 800 KB text mirrored in structuredContent with 200 images: passed on once, within the output limit, /healthz prompt', async () => {
    const { body, slowest } = await whileCalling('fid__mirror', { how: 'big' });
    expect(body).toMatchObject({ ok: true });
    const result = body.output as { content: { type: string; summary?: string }[]; structuredContent: { content: string; images: unknown[] } };
    expect(result.content).toEqual([{ type: 'text', summary: `same text as structuredContent.content (${'All work and no play. '.length * 36_400} characters)` }]);
    expect(result.structuredContent.images).toHaveLength(200);
    expect(result.structuredContent.images[0]).toEqual({ type: 'image', summary: 'image (image/png, 3000 bytes) not passed on' });
    console.log(`big mirror: slowest /healthz ${slowest.toFixed(1)} ms`);
    expect(slowest).toBeLessThan(HEALTH_BOUND_MS);
  });
});
