import { describe, expect, it } from 'vitest';
import { MCP_DISCOVERY_BUDGET } from '../src/discovery-budget.js';
import { discoverTools, type DiscoveredServer, type ListedTool } from '../src/tool-discovery.js';

// ADR 0069: discovery charges a tool's whole declared entry (what the gateway pins), not only its
// input schema, to the server's byte budget, and refuses an entry larger than a pin holds.

function server(logs: string[]): DiscoveredServer {
  return {
    name: 'srv',
    config: { name: 'srv', command: 'node', args: [], env: {}, tier: 'unisolated' },
    timeoutMs: 1000,
    startTimeoutMs: 1000,
    log: (m) => logs.push(m),
    invoke: async () => ({ content: [] }),
  };
}

const input = { type: 'object', properties: { q: { type: 'string' } } };
const overTotal = `the server's tool definitions would exceed the discovery budget of ${MCP_DISCOVERY_BUDGET.schemaBytes} bytes in total`;
const PIN_BYTES = 256 * 1024;

/** How each member of an entry can carry bulk the input schema does not. */
const bulk: [string, (size: number) => Partial<ListedTool>][] = [
  ['huge output schemas', (size) => ({ outputSchema: { type: 'object', description: 'o'.repeat(size) } })],
  ['huge output schemas as many properties', (size) => ({ outputSchema: { type: 'object', properties: Object.fromEntries(Array.from({ length: Math.ceil(size / 40) }, (_, i) => [`p${i}`.padEnd(20, 'x'), { type: 'string' }])) } })],
  ['huge annotations', (size) => ({ annotations: { title: 'a'.repeat(size), readOnlyHint: true } })],
  ['huge annotations of unknown keys', (size) => ({ annotations: Object.fromEntries(Array.from({ length: Math.ceil(size / 1000) }, (_, i) => [`k${i}`, 'v'.repeat(990)])) })],
  ['huge descriptions', (size) => ({ description: 'd'.repeat(size) })],
  ['huge titles', (size) => ({ title: 't'.repeat(size) })],
  ['huge execution objects', (size) => ({ execution: { taskSupport: 'optional', note: 'e'.repeat(size) } })],
];

describe('a listing whose bulk is outside its input schemas (red team R1 finding 2)', () => {
  it.each(bulk)('%s: charged to the server budget, so the tools past 1 MiB in total are refused and logged', async (_class, carry) => {
    const logs: string[] = [];
    // 100 tools of about 20 KB each: about 2 MB declared, with input schemas of a few bytes.
    const listed = Array.from({ length: 100 }, (_, i) => ({ name: `t${i}`, inputSchema: input, ...carry(20_000) }) as ListedTool);
    const found = await discoverTools(listed, '1.0.0', server(logs), () => false);
    const declaredBytes = found.definitions.reduce((sum, d) => sum + Buffer.byteLength(JSON.stringify(d.declared), 'utf8'), 0);
    expect(declaredBytes).toBeLessThanOrEqual(MCP_DISCOVERY_BUDGET.schemaBytes);
    expect(found.definitions.length).toBeGreaterThanOrEqual(40);
    expect(found.definitions.length).toBeLessThan(60);
    // The tools listed first are the ones kept; every other one is named in the log with why.
    expect(found.definitions.map((d) => d.manifest.name)).toEqual(Array.from({ length: found.definitions.length }, (_, i) => `srv__t${i}`));
    expect(logs.filter((l) => l.endsWith(overTotal))).toHaveLength(100 - found.definitions.length);
  });

  it.each(bulk)('%s: one entry larger than a pin holds (256 KiB) is refused on its own, and the rest registered', async (_class, carry) => {
    const logs: string[] = [];
    const listed = [{ name: 'huge', inputSchema: input, ...carry(PIN_BYTES + 10) } as ListedTool, { name: 'fine', inputSchema: input }];
    const found = await discoverTools(listed, '1.0.0', server(logs), () => false);
    expect(found.definitions.map((d) => d.manifest.name)).toEqual(['srv__fine']);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/^MCP server 'srv': tool "huge" is not registered: its definition is \d+ bytes, more than the 262144 a tool pin holds$/);
  });

  it('registers an entry just under what a pin holds, charged in full', async () => {
    const logs: string[] = [];
    const big = { name: 'big', inputSchema: input, outputSchema: { type: 'object', description: 'o'.repeat(PIN_BYTES - 200) } } as ListedTool;
    const found = await discoverTools([big], '1.0.0', server(logs), () => false);
    expect(found.definitions.map((d) => d.manifest.name)).toEqual(['srv__big']);
    expect(logs).toEqual([]);
    // Four of them fill the 1 MiB budget: the fifth is refused for the total.
    const five = Array.from({ length: 5 }, (_, i) => ({ ...big, name: `big${i}` }));
    const many = await discoverTools(five, '1.0.0', server(logs), () => false);
    expect(many.definitions).toHaveLength(4);
    expect(logs.filter((l) => l.endsWith(overTotal))).toEqual([`MCP server 'srv': tool "big4" is not registered: ${overTotal}`]);
  });

  it('charges each re-listing afresh (the budget is one listing’s): the same catalogue fits again', async () => {
    const listed = Array.from({ length: 30 }, (_, i) => ({ name: `t${i}`, inputSchema: input, outputSchema: { type: 'object', description: 'o'.repeat(20_000) } }) as ListedTool);
    const first = await discoverTools(listed, '1.0.0', server([]), () => false);
    const second = await discoverTools(listed, '1.0.0', server([]), () => false);
    expect(first.definitions).toHaveLength(30);
    expect(second.definitions).toHaveLength(30);
  });
});
