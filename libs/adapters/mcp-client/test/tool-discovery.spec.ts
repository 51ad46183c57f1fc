import { describe, expect, it } from 'vitest';
import { discoverTools, type DiscoveredServer, type ListedTool } from '../src/tool-discovery.js';

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

const open = { type: 'object', properties: {} };
/** A JSON value nested `levels` deep, built as text (a recursive build would itself overflow the stack). */
const nested = (levels: number, open: string, close: string) => JSON.parse(`${open.repeat(levels)}1${close.repeat(levels)}`) as unknown;

describe('declared definitions that nest too deep', () => {
  it.each([
    ['annotations as objects', (t: Record<string, unknown>) => (t['annotations'] = { a: nested(5000, '{"a":', '}') })],
    ['annotations as arrays', (t: Record<string, unknown>) => (t['annotations'] = { a: nested(200_000, '[', ']') })],
    ['an outputSchema', (t: Record<string, unknown>) => (t['outputSchema'] = { type: 'object', properties: { a: nested(150, '{"p":', '}') } })],
    ['execution', (t: Record<string, unknown>) => (t['execution'] = { taskSupport: 'optional', x: nested(100, '[', ']') })],
    ['a title', (t: Record<string, unknown>) => (t['title'] = nested(120, '[', ']'))],
  ])('leaves out a tool whose %s nests deeper than the pin store can hold, and registers the others', async (_class, spoil) => {
    const logs: string[] = [];
    const bad: Record<string, unknown> = { name: 'deep', inputSchema: open };
    spoil(bad);
    const listed = [bad as unknown as ListedTool, { name: 'fine', inputSchema: open, annotations: { a: nested(90, '[', ']') } }];
    const found = await discoverTools(listed, '1.0.0', server(logs), () => false);
    expect(found.definitions.map((d) => d.manifest.name)).toEqual(['srv__fine']);
    expect(logs).toEqual([`MCP server 'srv': tool "deep" is not registered: its definition nests deeper than 100 levels`]);
  });

  it('copies declared, so a later change to the listed object does not reach it', async () => {
    const tool = { name: 'copy', description: 'Copied.', inputSchema: { type: 'object', properties: { a: { type: 'string' } } }, annotations: { readOnlyHint: true } };
    const found = await discoverTools([tool], '1.0.0', server([]), () => false);
    tool.annotations.readOnlyHint = false;
    (tool.inputSchema.properties.a as { type: string }).type = 'number';
    expect(found.definitions[0]?.declared).toEqual({
      name: 'copy',
      description: 'Copied.',
      inputSchema: { type: 'object', properties: { a: { type: 'string' } } },
      annotations: { readOnlyHint: true },
    });
  });

  it('keeps a declared __proto__ key a key of the copy, without polluting objects', async () => {
    const tool = JSON.parse('{"name":"proto","inputSchema":{"type":"object","properties":{}},"annotations":{"__proto__":{"polluted":true}}}') as ListedTool;
    const found = await discoverTools([tool], '1.0.0', server([]), () => false);
    const annotations = found.definitions[0]?.declared?.['annotations'] as Record<string, unknown>;
    expect(Object.hasOwn(annotations, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
