import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthTimes, startHarness, type Harness } from './e2e-harness.js';

const ALICE = 'alice-token-tool-pin-flood-0123456789';

/**
 * The red team's flood (R1 finding 2), as a real stdio MCP server: besides `steady`, every
 * `tools/list` answers 256 tools of fresh names (each with a 2 KB output schema), then announces
 * `notifications/tools/list_changed` again, ROUNDS times. Without a bound every fresh name becomes
 * a permanent pin in state.db.
 */
const FLOOD_SERVER = String.raw`
import { createInterface } from 'node:readline';
const ROUNDS = Number(process.env.ROUNDS);
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
let round = 0;
const steady = { name: 'steady', description: 'Never changes.', inputSchema: { type: 'object', properties: {} } };
const fresh = (r) => Array.from({ length: 256 }, (_, i) => ({
  name: 'f' + r + '_' + i + '_' + Math.random().toString(36).slice(2, 10),
  description: 'Fresh tool ' + i + '.',
  inputSchema: { type: 'object', properties: {} },
  outputSchema: { type: 'object', description: 'o'.repeat(2000) },
}));
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'flood', version: '1.0.0' } } });
  else if (m.method === 'tools/list') {
    const r = round++;
    send({ id: m.id, result: { tools: r === 0 ? [steady] : [steady, ...fresh(r)] } });
    if (r < ROUNDS) setTimeout(() => send({ method: 'notifications/tools/list_changed' }), 20);
  } else if (m.method === 'tools/call') send({ id: m.id, result: { content: [{ type: 'text', text: 'ok' }] } });
  else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'no such method' } });
});
`;

/**
 * First-seen pins bounded per source, end to end (ADR 0069): a real server over SQLite, a
 * flooding MCP server, `/healthz` probed all along. The store and the gateway stop at 1,024 pins of
 * the server, its newest tools are refused with a source-class denial, its pinned tool is served,
 * and the operator log says so once.
 */
describe('pin flood: a server listing fresh names on every list_changed, end to end', { timeout: 180_000 }, () => {
  let base: string;
  let h: Harness;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'toolgate-pin-flood-'));
    await writeFile(join(base, 'flood-server.mjs'), FLOOD_SERVER);
    h = await startHarness(
      {},
      {
        // risk "low": the operator's trust, so a served tool runs without an approval.
        mcpServers: { servers: [{ name: 'flood', command: process.execPath, args: [join(base, 'flood-server.mjs')], env: { ROUNDS: '6' }, tier: 'unisolated', risk: 'low' }] },
        principals: {
          principals: [{ id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] }],
          roles: { worker: ['*'] },
          tenants: { acme: { tools: ['*'], grants: [{ type: 'exec', scope: 'mcp:flood' }] } },
        },
      },
    );
  });
  afterAll(async () => {
    await h?.stop();
    await rm(base, { recursive: true, force: true });
  });

  const pinRows = (): { tool: string }[] => {
    const db = new Database(join(h.dataDir, 'data', 'state.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare("SELECT tool FROM tool_pins WHERE provenance = 'mcp:flood' ORDER BY tool").all() as { tool: string }[];
    } finally {
      db.close();
    }
  };
  const relisted = () => h.logs.filter((l) => l.includes("MCP server 'flood' re-listed its tools")).length;
  const invoke = (tool: string) => h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool, args: {} } });

  it('stops state.db at 1,024 pins of the server, refuses its newest tools, serves its pinned one, logs once, and /healthz answers within 100 ms throughout', async () => {
    const deadline = Date.now() + 120_000;
    // Six re-listings of 256 fresh names: 1,537 names against a bound of 1,024.
    const times = await healthTimes(h, () => relisted() >= 6 || Date.now() > deadline, { intervalMs: 20 });
    expect(relisted()).toBe(6);
    // Let the pins of the last listing settle (one write per turn), probing all the while.
    const settled = Date.now() + 5000;
    times.push(...(await healthTimes(h, () => Date.now() > settled, { intervalMs: 20 })));
    expect(Math.max(...times)).toBeLessThan(100);
    console.log(`pin flood: ${times.length} /healthz probes, worst ${Math.max(...times).toFixed(1)} ms`);

    const rows = pinRows();
    expect(rows).toHaveLength(1024);
    expect(rows.map((r) => r.tool)).toContain('flood__steady');
    const bound = h.logs.filter((l) => l.includes("MCP server 'flood' reached its tool pin bound"));
    expect(bound).toHaveLength(1);
    expect(bound[0]).toMatch(/^warn .*\(1024 pins, \d+ bytes of definitions; at most 1024 pins and 16777216 bytes\)/);

    expect((await invoke('flood__steady')).body).toMatchObject({ ok: true });
    const listed = ((await h.call('/api/v1/tools', { token: ALICE })).body.tools as { name: string }[]).map((t) => t.name).filter((n) => n.startsWith('flood__'));
    // Only pinned tools are listed: those of the latest listing past the bound are not.
    const pinned = new Set(rows.map((r) => r.tool));
    expect(listed.every((name) => pinned.has(name))).toBe(true);
    const latest = h.logs.filter((l) => l.includes("MCP server 'flood' re-listed its tools")).at(-1)!;
    const unpinned = [...latest.matchAll(/flood__f6_\d+_[a-z0-9]+/g)].map((m) => m[0]).filter((name) => !pinned.has(name));
    expect(unpinned.length).toBeGreaterThan(0);
    const refused = await invoke(unpinned[0]!);
    expect(refused.body).toMatchObject({ ok: false, denial: { gate: 'lookup', code: 'SOURCE_UNAVAILABLE', data: { source: 'flood', reason: 'pins-full' } } });
    // Still 1,024 after the calls: nothing past the bound is written later.
    expect(pinRows()).toHaveLength(1024);
  });
});
