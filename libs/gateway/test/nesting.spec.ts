import type { JsonObject } from '@toolgate/contracts';
import { timeLessCpuWait, timeOnThread } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { jsonBoundsProblem, MAX_ARGS_DEPTH, MAX_ARGS_VALUES, nestedWithin } from '../src/index.js';
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
      // Both refusals (the call and the approval request) are audited like any other, and the audit did not recurse over the arguments.
      expect(h.audit.kinds()).toEqual(['denied:INVALID_INPUT', 'denied:INVALID_INPUT']);
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
    const { value: ping, ms } = await timeLessCpuWait(() => h.gateway.invoke(h.who('worker-2'), { tool: 'ping', args: {} }));
    expect(ms).toBeLessThan(100);
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

describe('size blow-up before the size gate: the bounded walk itself', () => {
  const bounds = { maxDepth: MAX_ARGS_DEPTH, maxValues: MAX_ARGS_VALUES, maxBytes: 65_536, requireJson: true };

  it('counts a container before visiting its children, so a huge one costs almost nothing', () => {
    const huge = { u: Array.from({ length: 1_000_000 }, () => []) };
    const { value: problem, ms } = timeOnThread(() => jsonBoundsProblem(huge, bounds));
    expect(problem).toEqual({ kind: 'values', limit: MAX_ARGS_VALUES });
    expect(ms).toBeLessThan(20);
  });

  it('refuses by size what few values make large: long strings and long keys', () => {
    expect(jsonBoundsProblem({ s: 'x'.repeat(65_536) }, bounds)).toEqual({ kind: 'bytes', limit: 65_536 });
    expect(jsonBoundsProblem({ ['k'.repeat(65_536)]: 1 }, bounds)).toEqual({ kind: 'bytes', limit: 65_536 });
    expect(jsonBoundsProblem({ s: 'x'.repeat(60_000) }, bounds)).toBeUndefined();
  });

  it('never counts more than the JSON would hold, so what the size gate accepts passes', () => {
    for (const args of [{ u: Array.from({ length: 30_000 }, () => 0) }, { s: 'é'.repeat(30_000) }, Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`k${i}`, [null, true]]))]) {
      expect(JSON.stringify(args).length).toBeLessThanOrEqual(65_536);
      expect(jsonBoundsProblem(args, bounds)).toBeUndefined();
    }
  });

  it('refuses what is not JSON only when asked to, and keeps depth first', () => {
    expect(jsonBoundsProblem({ a: undefined }, bounds)).toEqual({ kind: 'not-json', found: 'undefined' });
    expect(jsonBoundsProblem({ a: Infinity }, bounds)).toEqual({ kind: 'not-json', found: 'Infinity' });
    expect(jsonBoundsProblem({ a: new Date() }, bounds)).toMatchObject({ kind: 'not-json' });
    expect(jsonBoundsProblem({ a: undefined }, { maxDepth: 2 })).toBeUndefined();
    expect(jsonBoundsProblem(nested(200_000, 'array'), bounds)).toEqual({ kind: 'depth', limit: MAX_ARGS_DEPTH });
  });
});
