import type { JsonObject } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { MAX_ARGS_DEPTH, nestedWithin } from '../src/index.js';
import { denialOf, harness, testTool } from './harness.js';

/** `levels` containers deep around a scalar, built without recursion. */
function nested(levels: number, shape: 'array' | 'object' | 'mixed' | 'wide'): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) {
    if (shape === 'array') value = [value];
    else if (shape === 'object') value = { a: value };
    else if (shape === 'mixed') value = i % 2 ? [value] : { [`k${i}`]: value };
    else value = [1, 'x', { b: value }, [2]];
  }
  return value;
}

const SHAPES = ['array', 'object', 'mixed', 'wide'] as const;

describe('stack exhaustion by deeply nested arguments', () => {
  const tool = () =>
    testTool({ name: 'store', risk: 'high', input: { type: 'object', properties: { data: {}, note: { type: 'string' } }, additionalProperties: false } });

  it.each(SHAPES.flatMap((shape) => [200_000, 10_000, MAX_ARGS_DEPTH + 1].map((levels) => [shape, levels] as const)))(
    'refuses %s nesting %i levels deep in invoke, explain and approval requests, clearly',
    async (shape, levels) => {
      const store = tool();
      const h = harness({ tools: [store] });
      const args = { data: nested(levels, shape) } as JsonObject;
      const expected = { gate: 'size', code: 'INVALID_INPUT', message: `The arguments are nested deeper than ${MAX_ARGS_DEPTH} levels.` };
      expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'store', args }))).toMatchObject(expected);
      const explained = await h.gateway.explain(h.who('worker-1'), { tool: 'store', args });
      expect(explained).toMatchObject({ wouldRun: false, denial: expected });
      expect(explained.passed).toEqual(['authenticate', 'lookup', 'allow', 'budget']);
      expect(await h.gateway.requestApproval(h.who('worker-1'), { tool: 'store', args })).toMatchObject({ ok: false, denial: expected });
      expect(store.calls).toHaveLength(0);
      // The refusal is audited like any other, and the audit did not recurse over the arguments.
      expect(h.audit.kinds()).toEqual(['denied:INVALID_INPUT']);
    },
  );

  it('accepts nesting right at the limit', async () => {
    const h = harness({ tools: [tool()] });
    // `args` itself is level 1, so the data may hold one level fewer.
    const explained = await h.gateway.explain(h.who('worker-1'), { tool: 'store', args: { data: nested(MAX_ARGS_DEPTH - 1, 'mixed') } as JsonObject });
    expect(explained.denial?.code).not.toBe('INVALID_INPUT');
    expect(explained.passed).toContain('size');
  });

  it('keeps answering other callers while refusing a 200,000-level payload', async () => {
    const h = harness({ tools: [tool(), testTool({ name: 'ping', risk: 'low' })] });
    const hostile = Array.from({ length: 5 }, () =>
      h.gateway.invoke(h.who('worker-1'), { tool: 'store', args: { data: nested(200_000, 'array') } as JsonObject }),
    );
    const started = performance.now();
    const ping = await h.gateway.invoke(h.who('worker-2'), { tool: 'ping', args: {} });
    expect(performance.now() - started).toBeLessThan(100);
    expect(ping.ok).toBe(true);
    for (const result of await Promise.all(hostile)) expect(denialOf(result).code).toBe('INVALID_INPUT');
  });

  it('checks nesting without recursing, for shapes a recursive walk would die on', () => {
    expect(nestedWithin(nested(1_000_000, 'array'), 32)).toBe(false);
    expect(nestedWithin(nested(32, 'object'), 32)).toBe(true);
    expect(nestedWithin(nested(33, 'object'), 32)).toBe(false);
    expect(nestedWithin(Array.from({ length: 100_000 }, (_, i) => ({ i })), 2)).toBe(true);
    expect(nestedWithin('scalar', 0)).toBe(true);
  });
});
