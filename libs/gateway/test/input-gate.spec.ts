import { describe, expect, it } from 'vitest';
import { denialOf, harness, searchTool, testTool } from './harness.js';

async function call(args: Record<string, unknown>) {
  const tool = searchTool();
  const h = harness({ tools: [tool] });
  const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: args as never });
  return { result, tool, h };
}

describe('gate 6: input', () => {
  it('passes valid arguments through untouched, with no repairs', async () => {
    const { result, tool } = await call({ query: 'cats', max_results: 3 });
    expect(result).toMatchObject({ ok: true });
    expect(result).not.toHaveProperty('repaired');
    expect(tool.calls[0]?.args).toEqual({ query: 'cats', max_results: 3 });
  });

  it('renames one mislabelled argument when exactly one required is missing and one extra is present', async () => {
    const { result, tool, h } = await call({ q: 'cats', max_results: 3 });
    expect(result).toMatchObject({ ok: true, repaired: [{ kind: 'rename', path: '/query', detail: "renamed 'q' to 'query'" }] });
    expect(tool.calls[0]?.args).toEqual({ query: 'cats', max_results: 3 });
    expect(h.audit.events.find((e) => e.event === 'succeeded')?.repaired).toEqual(["renamed 'q' to 'query'"]);
  });

  it('does not guess a rename when two arguments are unknown', async () => {
    const { result, tool } = await call({ q: 'cats', text: 'dogs' });
    const denial = denialOf(result);
    expect(denial.code).toBe('INVALID_INPUT');
    expect(denial.message).toContain("missing required argument 'query'");
    expect(denial.message).toContain("unknown argument 'q'");
    expect(denial.message).toContain("unknown argument 'text'");
    expect(tool.calls).toHaveLength(0);
  });

  it('coerces a numeric string to a number (the whole string, finite)', async () => {
    const { result, tool } = await call({ query: 'x', max_results: '7' });
    expect(result).toMatchObject({ ok: true, repaired: [{ kind: 'coerce', path: '/max_results' }] });
    expect(tool.calls[0]?.args['max_results']).toBe(7);
    for (const bad of ['7 apples', '0x10', '1e999', '', ' 7', '7.5']) {
      expect(denialOf((await call({ query: 'x', max_results: bad })).result).code).toBe('INVALID_INPUT');
    }
  });

  it('coerces a number to a string', async () => {
    const { result, tool } = await call({ query: 42 });
    expect(result).toMatchObject({ ok: true, repaired: [{ kind: 'coerce', path: '/query', detail: "converted 'query' from a number to a string" }] });
    expect(tool.calls[0]?.args['query']).toBe('42');
  });

  it('coerces "true"/"false" to booleans and nothing else', async () => {
    const { result, tool } = await call({ query: 'x', safe: 'false' });
    expect(result).toMatchObject({ ok: true, repaired: [{ kind: 'coerce', path: '/safe' }] });
    expect(tool.calls[0]?.args['safe']).toBe(false);
    expect(denialOf((await call({ query: 'x', safe: 'yes' })).result).code).toBe('INVALID_INPUT');
  });

  it('wraps a scalar in an array, coercing the item too', async () => {
    const { result, tool } = await call({ query: 'x', tags: 5 });
    expect(result).toMatchObject({
      ok: true,
      repaired: [
        { kind: 'coerce', path: '/tags', detail: "wrapped 'tags' in an array" },
        { kind: 'coerce', path: '/tags/0', detail: "converted 'tags/0' from a number to a string" },
      ],
    });
    expect(tool.calls[0]?.args['tags']).toEqual(['5']);
  });

  it('clamps to minimum and maximum', async () => {
    const low = await call({ query: 'x', max_results: 0 });
    expect(low.result).toMatchObject({ ok: true, repaired: [{ kind: 'clamp', detail: "raised 'max_results' to the minimum 1" }] });
    expect(low.tool.calls[0]?.args['max_results']).toBe(1);
    const high = await call({ query: 'x', max_results: 500 });
    expect(high.tool.calls[0]?.args['max_results']).toBe(10);
  });

  it('combines repairs: rename, then coerce and clamp the renamed value', async () => {
    const { result, tool } = await call({ text: 'cats', max_results: '99' });
    expect(result.ok).toBe(true);
    expect(result.repaired?.map((r) => r.kind)).toEqual(['rename', 'coerce', 'clamp']);
    expect(tool.calls[0]?.args).toEqual({ query: 'cats', max_results: 10 });
  });

  it('refuses what cannot be repaired, listing the problems, the valid parameters and enum values', async () => {
    const { result, tool, h } = await call({ query: 'x', mode: 'turbo', max_results: 'many' });
    const denial = denialOf(result);
    expect(denial.gate).toBe('input');
    expect(denial.code).toBe('INVALID_INPUT');
    expect(denial.message).toBe(`Invalid arguments for 'search': 'max_results' must be integer; 'mode' must be one of: "fast", "deep".`);
    expect(denial.hint).toBe(
      'Valid parameters: query: string (required); max_results: integer; mode: string, one of "fast", "deep"; tags: array of string; safe: boolean; label: string.',
    );
    expect(denial.data?.['parameters']).toEqual([
      { name: 'query', type: 'string', required: true },
      { name: 'max_results', type: 'integer', required: false },
      { name: 'mode', type: 'string', required: false, enum: ['fast', 'deep'] },
      { name: 'tags', type: 'array of string', required: false },
      { name: 'safe', type: 'boolean', required: false },
      { name: 'label', type: 'string', required: false },
    ]);
    expect(result).not.toHaveProperty('repaired');
    expect(tool.calls).toHaveLength(0);
    expect(h.audit.events).toHaveLength(1);
    expect(h.audit.events[0]).toMatchObject({ event: 'denied', gate: 'input', code: 'INVALID_INPUT' });
    expect(h.audit.events[0]).not.toHaveProperty('argsDigest');
  });

  it('never echoes argument values in the refusal', async () => {
    const denial = denialOf((await call({ query: 'x', mode: 'sk-live-SECRET' })).result);
    expect(JSON.stringify(denial)).not.toContain('SECRET');
  });

  it('with ignoreUnknownArgs, drops unknown arguments before validation and never passes them on', async () => {
    const tool = testTool({
      name: 'lenient',
      ignoreUnknownArgs: true,
      input: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    });
    const h = harness({ tools: [tool] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'lenient', args: JSON.parse('{"query": "x", "debug": true, "__proto__": {"polluted": 1}}') });
    expect(result).toMatchObject({
      ok: true,
      repaired: [
        { kind: 'drop', path: '/debug', detail: "dropped unknown argument 'debug'" },
        { kind: 'drop', path: '/__proto__', detail: "dropped unknown argument '__proto__'" },
      ],
    });
    expect(tool.calls[0]?.args).toEqual({ query: 'x' });
    expect(Object.keys(tool.calls[0]?.args ?? {})).toEqual(['query']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    // A drop never turns into a rename: the missing required argument stays missing.
    const missing = await h.gateway.invoke(h.who('worker-1'), { tool: 'lenient', args: { q: 'x' } });
    expect(denialOf(missing).message).toContain("missing required argument 'query'");
  });

  it('treats a `__proto__` argument as plain data when repairing (no prototype games)', async () => {
    const { result, tool } = await call(JSON.parse('{"__proto__": "cats"}'));
    expect(result).toMatchObject({ ok: true, repaired: [{ kind: 'rename', detail: "renamed '__proto__' to 'query'" }] });
    const passed = tool.calls[0]?.args as object;
    expect(Object.getPrototypeOf(passed)).toBe(Object.prototype);
    expect(passed).toEqual({ query: 'cats' });
  });
});
