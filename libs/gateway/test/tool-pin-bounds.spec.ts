import { randomBytes } from 'node:crypto';
import type { JsonObject, ToolPin } from '@toolgate/contracts';
import { watchLoopHold } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { ToolRegistry, type GatewayDeps } from '../src/index.js';
import { checkToolDefinition } from '../src/registry/manifest-rules.js';
import { acceptedBy, FIRST_SEEN, TOOL_PIN_BOUNDS, ToolPins } from '../src/registry/tool-pins.js';
import { denialOf, harness, testTool, thrown } from './harness.js';
import { declaredTool, FaultyPinStore, ScriptedSource, type DeclaredTool } from './scripted-source.js';

// ADR 0069: first-seen pins are bounded per provenance (TOOL_PIN_BOUNDS), so a server that keeps
// listing fresh names cannot grow the pin store and the gateway's memory without end; an
// acceptance is recorded as `<tenant>/<principal id>`, which no first sight can be.

const ADMINS = [
  { id: 'root', tenant: 'acme', roles: ['worker', 'admin'] },
  { id: FIRST_SEEN, tenant: 'acme', roles: ['admin'] },
];

/** Fresh, random tool names, as a hostile server invents them on every `tools/list_changed`. */
const fresh = (count: number, extra: JsonObject = {}): DeclaredTool[] =>
  Array.from({ length: count }, () => declaredTool(`t_${randomBytes(6).toString('hex')}`, extra));

/** A gateway whose registry logs to `logs`, with server `files` offering `entries`, pins loaded. */
async function boundedGateway(entries: readonly DeclaredTool[], deps: Partial<GatewayDeps> = {}) {
  const logs: string[] = [];
  const store = new FaultyPinStore();
  const registry = new ToolRegistry([testTool({ name: 'calculator' })], { log: (message) => logs.push(message) });
  const h = harness({ principals: ADMINS, deps: { pins: store, registry, ...deps } });
  const source = new ScriptedSource('files', entries);
  registry.addSource(source);
  await h.gateway.loadPins();
  const call = (tool: string, who = 'worker-1') => h.gateway.invoke(h.who(who), { tool, args: { path: 'a' } });
  /** The server lists `next` (as after list_changed) and the gateway pins what it may. */
  const relist = async (next: readonly DeclaredTool[]) => {
    source.list(next);
    await h.gateway.settlePins();
  };
  return { ...h, store, registry, source, logs, call, relist };
}

const pinsOf = async (store: FaultyPinStore, provenance = 'mcp:files'): Promise<ToolPin[]> => (await store.list()).filter((p) => p.provenance === provenance);
const bytesOf = (pins: readonly ToolPin[]) => pins.reduce((sum, p) => sum + Buffer.byteLength(p.definition, 'utf8'), 0);
const nameOf = (entry: DeclaredTool) => `files__${entry.name}`;

describe('pin flood: a server listing fresh names on every list_changed (red team R1 finding 2)', () => {
  it('pins at most TOOL_PIN_BOUNDS.pins per source; past it a new tool is refused at lookup, pinned ones stay served, the operator hears once', async () => {
    const first = declaredTool('read');
    const p = await boundedGateway([first]);
    // Five rounds of 256 fresh names (the most one listing carries): 1,281 names against 1,024 pins.
    const rounds: DeclaredTool[][] = [];
    for (let round = 0; round < 5; round++) {
      const names = fresh(256);
      rounds.push(names);
      await p.relist([first, ...names]);
    }
    const stored = await pinsOf(p.store);
    expect(stored).toHaveLength(TOOL_PIN_BOUNDS.pins);
    // The pins taken are the first ones seen: the original tool and the first rounds, whole.
    expect(stored.map((pin) => pin.tool)).toContain(nameOf(first));
    for (const entry of [...rounds[0]!, ...rounds[1]!, ...rounds[2]!]) expect(stored.some((pin) => pin.tool === nameOf(entry))).toBe(true);

    const last = rounds[4]!;
    // The tool pinned first is served as before, in the listing and on a call.
    expect(p.gateway.listTools(p.who('worker-1')).map((m) => m.name)).toContain(nameOf(first));
    expect(await p.call(nameOf(first))).toMatchObject({ ok: true });
    // A new one past the bound: not listed, refused with a source-class denial that says why, never run.
    const refusedName = nameOf(last[last.length - 1]!);
    expect(p.gateway.listTools(p.who('worker-1')).map((m) => m.name)).not.toContain(refusedName);
    const before = p.source.calls.length;
    const denial = denialOf(await p.call(refusedName));
    expect(denial).toMatchObject({ gate: 'lookup', code: 'SOURCE_UNAVAILABLE', data: { source: 'files', state: 'up', reason: 'pins-full' } });
    expect(denial.message).toContain('more new tools than the gateway pins per server');
    expect(p.source.calls.length).toBe(before);
    expect(await thrown(p.gateway.acceptToolDefinition(p.who('root'), { tool: refusedName, digest: `sha256:${'0'.repeat(64)}` }))).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('reached its pin bound'),
    });
    // Logged once for the operator, however many fresh names followed.
    await p.relist([first, ...fresh(256)]);
    expect(p.logs.filter((l) => l.includes("MCP server 'files' reached its tool pin bound"))).toHaveLength(1);
    expect(p.logs[0]).toContain(`at most ${TOOL_PIN_BOUNDS.pins} pins`);
    expect(await pinsOf(p.store)).toHaveLength(TOOL_PIN_BOUNDS.pins);
  }, 60_000);

  it('stops the in-memory pins and the store growing at the bound, and other callers keep answering within 100 ms meanwhile', async () => {
    const store = new FaultyPinStore();
    const registry = new ToolRegistry();
    const pins = new ToolPins(store, { now: () => Date.now() }, 5000, 30_000, { pins: 64, bytes: TOOL_PIN_BOUNDS.bytes });
    registry.usePins(pins);
    const source = new ScriptedSource('files');
    registry.addSource(source);
    await pins.load();
    // The process's first schema compile costs ~50 ms of code generation and JIT, once, as at any
    // server's start; it is done before the watch, which is about the flood.
    checkToolDefinition(new ScriptedSource('warm', fresh(1, { outputSchema: { type: 'object', description: 'warm' } })).tools()[0]!);
    // Another caller: a timer that must keep firing on time while the flood is pinned (its
    // lateness, less the time the box kept this thread off a CPU).
    const ticker = watchLoopHold(10);
    let worst: number;
    try {
      for (let round = 0; round < 20; round++) {
        source.list(fresh(50, { outputSchema: { type: 'object', description: 'x'.repeat(20_000) } }));
        // As MCP discovery does, each tool's check (its schemas compiled) in a turn of its own,
        // so the registry finds them checked; compiling 50 in one turn held the loop ~80 ms cold.
        for (const definition of source.tools()) {
          checkToolDefinition(definition);
          await new Promise((resolve) => setImmediate(resolve));
        }
        registry.list();
        await pins.settled();
      }
    } finally {
      worst = ticker.stop();
    }
    expect(pins.usage('mcp:files').count).toBe(64);
    expect(await pinsOf(store)).toHaveLength(64);
    // The in-memory map holds exactly what the store holds: nothing past the bound is kept.
    const listed = source.tools().map((d) => d.manifest.name);
    expect(listed.filter((name) => pins.pinOf(name) !== undefined)).toEqual([]);
    expect(registry.withheld(listed[0]!)).toMatchObject({ kind: 'pins-full', source: 'files' });
    expect(store.written).toBe(64);
    // Tick to tick within 100 ms: the 10 ms interval plus a hold under 90 ms.
    expect(worst + 10).toBeLessThan(100);
  }, 60_000);

  it('keeps the bound across a restart: pins read from the store count against it', async () => {
    const store = new FaultyPinStore();
    const bounds = { pins: 10, bytes: TOOL_PIN_BOUNDS.bytes };
    const start = async (entries: readonly DeclaredTool[]) => {
      const registry = new ToolRegistry();
      const pins = new ToolPins(store, { now: () => Date.now() }, 5000, 30_000, bounds);
      registry.usePins(pins);
      registry.addSource(new ScriptedSource('files', entries));
      await pins.load();
      registry.list();
      await pins.settled();
      return { registry, pins };
    };
    await start(fresh(10));
    const again = await start(fresh(3));
    expect(again.pins.usage('mcp:files')).toMatchObject({ count: 10 });
    expect(again.registry.list()).toEqual([]);
    expect(await pinsOf(store)).toHaveLength(10);
  });

  it('counts each provenance on its own: one server at its bound does not stop another', async () => {
    const store = new FaultyPinStore();
    const registry = new ToolRegistry();
    const pins = new ToolPins(store, { now: () => Date.now() }, 5000, 30_000, { pins: 5, bytes: TOOL_PIN_BOUNDS.bytes });
    registry.usePins(pins);
    registry.addSource(new ScriptedSource('files', fresh(8)));
    const other = new ScriptedSource('notes', [declaredTool('read')]);
    registry.addSource(other);
    await pins.load();
    registry.list();
    await pins.settled();
    expect(registry.get('notes__read')).toBeDefined();
    expect(pins.usage('mcp:files').count).toBe(5);
    expect(pins.usage('mcp:notes').count).toBe(1);
  });

  it('releases what a failed first-seen write held, so a failing store does not use up the bound', async () => {
    const store = new FaultyPinStore();
    const registry = new ToolRegistry();
    let now = 0;
    const pins = new ToolPins(store, { now: () => now }, 5000, 30_000, { pins: 3, bytes: TOOL_PIN_BOUNDS.bytes });
    registry.usePins(pins);
    registry.addSource(new ScriptedSource('files', fresh(3)));
    await pins.load();
    store.faults.pinFirst = 'reject';
    registry.list();
    await pins.settled();
    expect(pins.usage('mcp:files').count).toBe(0);
    store.faults.pinFirst = 'ok';
    now += 5000;
    registry.list();
    await pins.settled();
    expect(registry.list()).toHaveLength(3);
    expect(pins.usage('mcp:files').count).toBe(3);
  });
});

describe('huge output schemas and annotations: the byte bound per source', () => {
  // About 250 KB of canonical definition each, just under what one pin holds (256 KiB).
  const big = (field: 'outputSchema' | 'annotations'): JsonObject =>
    field === 'outputSchema' ? { outputSchema: { type: 'object', description: 'o'.repeat(250_000) } } : { annotations: { title: 'a'.repeat(250_000), readOnlyHint: true } };

  it.each(['outputSchema', 'annotations'] as const)('pins at most TOOL_PIN_BOUNDS.bytes of %s per source, whatever the count', async (field) => {
    const p = await boundedGateway([]);
    for (let round = 0; round < 3; round++) await p.relist(fresh(30, big(field)));
    const stored = await pinsOf(p.store);
    expect(bytesOf(stored)).toBeLessThanOrEqual(TOOL_PIN_BOUNDS.bytes);
    // 16 MiB of ~250 KB definitions: 67 fit, the 68th would not.
    expect(stored.length).toBe(Math.floor(TOOL_PIN_BOUNDS.bytes / Buffer.byteLength(stored[0]!.definition, 'utf8')));
    expect(bytesOf(stored) + Buffer.byteLength(stored[0]!.definition, 'utf8')).toBeGreaterThan(TOOL_PIN_BOUNDS.bytes);
    const refused = p.source.tools().map((d) => d.manifest.name).find((name) => !stored.some((pin) => pin.tool === name))!;
    expect(denialOf(await p.call(refused))).toMatchObject({ code: 'SOURCE_UNAVAILABLE', data: { reason: 'pins-full' } });
    expect(p.logs.filter((l) => l.includes('reached its tool pin bound'))).toHaveLength(1);
  }, 60_000);
});

describe('names reused vs new past the bound', () => {
  it('serves a reused name as pinned, holds a reused name whose definition changed, and refuses only new names', async () => {
    const store = new FaultyPinStore();
    const logs: string[] = [];
    const registry = new ToolRegistry([], { log: (m) => logs.push(m) });
    const pins = new ToolPins(store, { now: () => Date.now() }, 5000, 30_000, { pins: 3, bytes: TOOL_PIN_BOUNDS.bytes });
    registry.usePins(pins);
    const kept = [declaredTool('a'), declaredTool('b'), declaredTool('c')];
    const source = new ScriptedSource('files', kept);
    registry.addSource(source);
    await pins.load();
    registry.list();
    await pins.settled();
    expect(registry.list()).toHaveLength(3);
    // The server drops them, lists fresh names, then comes back to the old ones.
    source.list(fresh(4));
    registry.list();
    await pins.settled();
    expect(registry.list()).toEqual([]);
    source.list([kept[0]!, declaredTool('b', { description: 'Reads b, differently.' }), declaredTool('brand_new')]);
    expect(registry.get('files__a')).toBeDefined();
    expect(registry.withheld('files__b')).toMatchObject({ kind: 'held', reason: 'changed' });
    expect(registry.withheld('files__brand_new')).toMatchObject({ kind: 'pins-full' });
    expect(pins.usage('mcp:files').count).toBe(3);
    expect(await pinsOf(store)).toHaveLength(3);
  });

  it('lets an admin accept a held definition of a source at its bound (acceptance replaces a pin, it adds none)', async () => {
    const p = await boundedGateway([declaredTool('read')]);
    const filler = fresh(TOOL_PIN_BOUNDS.pins - 1);
    await p.relist([declaredTool('read'), ...filler.slice(0, 255)]);
    await p.relist([declaredTool('read'), ...filler.slice(255, 510)]);
    await p.relist([declaredTool('read'), ...filler.slice(510, 765)]);
    await p.relist([declaredTool('read'), ...filler.slice(765)]);
    expect(await pinsOf(p.store)).toHaveLength(TOOL_PIN_BOUNDS.pins);
    await p.relist([declaredTool('read', { description: 'Reads, now differently.' })]);
    const held = (await p.gateway.heldTools(p.who('root'))).find((h) => h.tool === 'files__read')!;
    await p.gateway.acceptToolDefinition(p.who('root'), { tool: 'files__read', digest: held.newDigest });
    expect(await p.call('files__read')).toMatchObject({ ok: true });
    expect(await pinsOf(p.store)).toHaveLength(TOOL_PIN_BOUNDS.pins);
  }, 60_000);
});

describe('an acceptance never reads as a first sight (red team R1 finding 4)', () => {
  it("records an admin whose id is 'first-seen' as '<tenant>/first-seen', in the store, the accept answer and tools held", async () => {
    const p = await boundedGateway([declaredTool('read')]);
    expect(await p.store.get('files__read')).toMatchObject({ pinnedBy: 'first-seen' });
    const held0 = (await p.gateway.heldTools(p.who('root'))).length;
    expect(held0).toBe(0);
    await p.relist([declaredTool('read', { description: 'Reads, changed once.' })]);
    const held = (await p.gateway.heldTools(p.who(FIRST_SEEN))).find((h) => h.tool === 'files__read')!;
    expect(held.pinnedBy).toBe('first-seen');
    const pin = await p.gateway.acceptToolDefinition(p.who(FIRST_SEEN), { tool: 'files__read', digest: held.newDigest });
    expect(pin.pinnedBy).toBe('acme/first-seen');
    expect(await p.store.get('files__read')).toMatchObject({ pinnedBy: 'acme/first-seen' });
    // Changed again: tools held shows who accepted the pin in force, unmistakably not a first sight.
    await p.relist([declaredTool('read', { description: 'Reads, changed twice.' })]);
    const again = (await p.gateway.heldTools(p.who('root'))).find((h) => h.tool === 'files__read')!;
    expect(again.pinnedBy).toBe('acme/first-seen');
    expect(again.pinnedBy).not.toBe(FIRST_SEEN);
  });

  describe('hostile principal ids and tenants', () => {
    const cases: [string, { tenant: string; id: string }][] = [
      ['first-seen itself', { tenant: 'acme', id: 'first-seen' }],
      ['an empty tenant', { tenant: '', id: 'first-seen' }],
      ['an id with a slash posing as a tenant', { tenant: 'acme', id: 'first-seen/x' }],
      ['controls and a newline', { tenant: 'ac\u0000me', id: 'first-seen\nforged' }],
      ['bidi overrides and zero-width characters', { tenant: '\u202eemca', id: 'first\u200b-seen' }],
      ['line and paragraph separators', { tenant: 'acme', id: 'a\u2028b\u2029c' }],
      ['a 300-character id', { tenant: 'acme', id: 'x'.repeat(300) }],
      ['astral characters across the 256-character cut', { tenant: 'acme', id: '🚀'.repeat(200) }],
      ['a lone surrogate', { tenant: 'acme', id: 'a\ud800b' }],
    ];
    it.each(cases)('%s: never first-seen, within the pin rules, stored as given back', async (_, principal) => {
      const by = acceptedBy(principal);
      expect(by).not.toBe(FIRST_SEEN);
      expect(by).toContain('/');
      expect(by.length).toBeGreaterThan(0);
      expect(by.length).toBeLessThanOrEqual(256);
      expect(by).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u);
      // The store's own rules accept it (a refused pinnedBy would leave the tool held).
      const store = new FaultyPinStore();
      const pin = (await (async () => {
        const registry = new ToolRegistry();
        const pins = new ToolPins(store, { now: () => 1 });
        registry.usePins(pins);
        registry.addSource(new ScriptedSource('files', [declaredTool('read')]));
        await pins.load();
        registry.list();
        await pins.settled();
        return store.get('files__read');
      })())!;
      expect(await store.replace(pin.digest, { ...pin, pinnedBy: by, pinnedAt: 2 })).toBe(true);
      expect(await store.get('files__read')).toMatchObject({ pinnedBy: by });
    });
  });
});
