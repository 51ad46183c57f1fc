import type { JsonObject, JsonSchema, JsonValue } from '@toolgate/contracts';
import { filling, timeLessCpuWait } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../src/index.js';
import { denialOf, harness, testTool } from './harness.js';

/*
 * Schemas that would cost quadratic or exponential time, reaching the gateway as an agent or an
 * MCP server would send them: refused at registration, or answered quickly through invoke and
 * explain. What the compiler itself refuses and how fast it validates is
 * src/schema/schema-compiler.spec.ts.
 */

/** `n` property names: `n0`, `n1`, … */
const names = (n: number, prefix = 'n'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** `levels` definitions, each applying the previous one twice through `keyword` (2^levels leaves). */
function doubling(levels: number, keyword: 'allOf' | 'anyOf' | 'oneOf', defs: '$defs' | 'definitions' = 'definitions'): JsonSchema {
  const table: JsonObject = { d0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) table[`d${i}`] = { [keyword]: [{ $ref: `#/${defs}/d${i - 1}` }, { $ref: `#/${defs}/d${i - 1}` }] };
  return { type: 'object', [defs]: table, properties: { x: { $ref: `#/${defs}/d${levels}` } } };
}

/** A tool of an MCP source (so the registry leaves a refused one out instead of throwing). */
function mcpSource(input: JsonSchema): { tool: ReturnType<typeof testTool>; source: { name: string; tools: () => ReturnType<typeof testTool>[] } } {
  const tool = testTool({ name: 'srv__take', provenance: 'mcp:srv', risk: 'high', input: { type: 'object', properties: { u: input as JsonValue }, additionalProperties: false } });
  return { tool, source: { name: 'srv', tools: () => [tool] } };
}

describe('quadratic validation keywords', () => {
  describe('uniqueItems on items deep equality must compare pairwise', () => {
    it('leaves the repro tool of issue 9 out of the registry, so invoke and explain find no tool', async () => {
      const { tool, source } = mcpSource({ type: 'array', uniqueItems: true, maxItems: 100_000 });
      const h = harness();
      const registry = h.registry;
      registry.addSource(source);
      expect(registry.list().map((t) => t.manifest.name)).not.toContain('srv__take');
      const args = { u: Array.from({ length: 9_000 }, (_, i) => [i]) } as JsonObject;
      const { ms } = await timeLessCpuWait(async () => {
        expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'srv__take', args }))).toMatchObject({ gate: 'lookup', code: 'TOOL_NOT_FOUND' });
        expect(await h.gateway.explain(h.who('worker-1'), { tool: 'srv__take', args })).toMatchObject({ wouldRun: false, denial: { code: 'TOOL_NOT_FOUND' } });
      });
      expect(ms).toBeLessThan(100);
      expect(registry.rejected()).toEqual([
        { source: 'srv', tool: 'srv__take', reason: expect.stringMatching(/^tool 'srv__take': the input schema does not compile: uniqueItems at '#\/properties\/u' compares every pair/) },
      ]);
      expect(tool.calls).toHaveLength(0);
    });

    it('refuses a first-party tool whose schema would compare pairwise, at registration', () => {
      const tool = testTool({ name: 'take', input: { type: 'object', properties: { u: { type: 'array', uniqueItems: true } }, additionalProperties: false } });
      expect(() => new ToolRegistry([tool])).toThrow(/tool 'take': the input schema does not compile: uniqueItems at '#\/properties\/u'/);
      const output = testTool({ name: 'give', output: { type: 'object', properties: { u: { type: 'array', uniqueItems: true, items: { type: 'array' } } } } });
      expect(() => new ToolRegistry([output])).toThrow(/tool 'give': the output schema does not compile: uniqueItems/);
    });
  });

  describe('enum on many values', () => {
    // As many entries as fit in a 64 KiB MCP schema.
    const ENTRIES = Array.from({ length: 10_000 }, (_, i) => i);

    it('answers invoke and explain with the usual enum problem, quickly, through the gateway', async () => {
      const tool = testTool({
        name: 'pick',
        input: { type: 'object', properties: { v: { type: 'array', items: { enum: ENTRIES } }, w: { enum: ['x', 'y'] } }, additionalProperties: false },
      });
      const h = harness({ tools: [tool] });
      const args = { v: filling(() => -1) } as JsonObject;
      // Validation is well under 50 ms (schema-compiler.spec.ts); the rest of each call is the pipeline's.
      await h.gateway.explain(h.who('worker-1'), { tool: 'pick', args: { v: [-1] } });
      const invoke = await timeLessCpuWait(() => h.gateway.invoke(h.who('worker-1'), { tool: 'pick', args }));
      expect(invoke.ms).toBeLessThan(500);
      const invoked = denialOf(invoke.value);
      const explain = await timeLessCpuWait(() => h.gateway.explain(h.who('worker-1'), { tool: 'pick', args }));
      expect(explain.ms).toBeLessThan(500);
      const explained = explain.value;
      expect(invoked).toMatchObject({ gate: 'input', code: 'INVALID_INPUT' });
      expect(explained).toMatchObject({ wouldRun: false, denial: { gate: 'input', code: 'INVALID_INPUT' } });
      const small = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'pick', args: { w: 'z' } }));
      expect(small.message).toBe(`Invalid arguments for 'pick': 'w' must be one of: "x", "y".`);
      expect(await h.gateway.invoke(h.who('worker-1'), { tool: 'pick', args: { v: [1, 2], w: 'y' } })).toMatchObject({ ok: true });
      expect(tool.calls).toHaveLength(1);
    });
  });
});

describe('exponential and error-flooding schemas', () => {
  const required = (n: number): JsonObject => ({ type: 'object', required: names(n) });

  it('answers invoke and explain over a flooding argument with the first problem, quickly', async () => {
    const tool = testTool({ name: 'rows', input: { type: 'object', properties: { v: { type: 'array', items: required(3) } }, additionalProperties: false } });
    const h = harness({ tools: [tool] });
    const args = { v: filling(() => ({})) } as JsonObject;
    await h.gateway.explain(h.who('worker-1'), { tool: 'rows', args: { v: [{}] } });
    const invoke = await timeLessCpuWait(() => h.gateway.invoke(h.who('worker-1'), { tool: 'rows', args }));
    expect(invoke.ms).toBeLessThan(500);
    const invoked = denialOf(invoke.value);
    const explain = await timeLessCpuWait(() => h.gateway.explain(h.who('worker-1'), { tool: 'rows', args }));
    expect(explain.ms).toBeLessThan(500);
    const explained = explain.value;
    expect(invoked).toMatchObject({ gate: 'input', code: 'INVALID_INPUT', message: "Invalid arguments for 'rows': missing required argument 'n0' in 'v/0'." });
    expect(explained).toMatchObject({ wouldRun: false, denial: { gate: 'input', code: 'INVALID_INPUT', message: invoked.message } });
    expect(await h.gateway.invoke(h.who('worker-1'), { tool: 'rows', args: { v: [{ n0: 1, n1: 2, n2: 3 }] } })).toMatchObject({ ok: true });
    expect(tool.calls).toHaveLength(1);
  });

  it('lists at most 20 values of a large enum in the message', async () => {
    const tool = testTool({ name: 'pick10k', input: { type: 'object', properties: { w: { enum: Array.from({ length: 10_000 }, (_, i) => i) } }, additionalProperties: false } });
    const h = harness({ tools: [tool] });
    const { value: result, ms } = await timeLessCpuWait(() => h.gateway.invoke(h.who('worker-1'), { tool: 'pick10k', args: { w: -1 } }));
    expect(ms).toBeLessThan(100);
    const denial = denialOf(result);
    expect(denial.message).toBe(`Invalid arguments for 'pick10k': 'w' must be one of: ${names(20, '').join(', ')}, … 9980 more.`);
    expect(denial.hint!.length).toBeLessThan(1_000);
    const long = testTool({ name: 'pick_long', input: { type: 'object', properties: { w: { enum: ['x'.repeat(5_000), 'y'] } }, additionalProperties: false } });
    const message = denialOf(await harness({ tools: [long] }).gateway.invoke(h.who('worker-1'), { tool: 'pick_long', args: { w: 'z' } })).message;
    expect(message.length).toBeLessThan(300);
  });

  it('leaves a doubling MCP tool out of the registry with the reason, so invoke and explain find no tool', async () => {
    const tool = testTool({ name: 'srv__take', provenance: 'mcp:srv', risk: 'high', input: { ...doubling(22, 'allOf'), additionalProperties: false } });
    const source = { name: 'srv', tools: () => [tool] };
    const h = harness();
    h.registry.addSource(source);
    expect(h.registry.list().map((t) => t.manifest.name)).not.toContain('srv__take');
    const args = { x: '' } as JsonObject;
    const { ms } = await timeLessCpuWait(async () => {
      expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'srv__take', args }))).toMatchObject({ code: 'TOOL_NOT_FOUND' });
      expect(await h.gateway.explain(h.who('worker-1'), { tool: 'srv__take', args })).toMatchObject({ wouldRun: false, denial: { code: 'TOOL_NOT_FOUND' } });
    });
    expect(ms).toBeLessThan(100);
    expect(h.registry.rejected()).toEqual([{ source: 'srv', tool: 'srv__take', reason: expect.stringMatching(/^tool 'srv__take': the input schema does not compile: the schema's \$ref expansion/) }]);
    expect(tool.calls).toHaveLength(0);
  });

  it('refuses a first-party tool whose input or output schema floods, at registration', () => {
    const input = testTool({ name: 'flood', input: { type: 'object', properties: { v: { type: 'array', items: required(5_000) } }, additionalProperties: false } });
    expect(() => new ToolRegistry([input])).toThrow(/tool 'flood': the input schema does not compile: the schema's \$ref expansion/);
    const output = testTool({ name: 'doubles', output: doubling(22, 'anyOf') });
    expect(() => new ToolRegistry([output])).toThrow(/tool 'doubles': the output schema does not compile: the schema's \$ref expansion/);
  });
});
