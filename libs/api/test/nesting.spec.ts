import type { Principal } from '@toolgate/contracts';
import { DEFAULT_LIMITS, MAX_ARGS_DEPTH, MAX_ARGS_VALUES, maxValuesWithin } from '@toolgate/gateway';
import { RecordingAuditSink, threadSchedule } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { describe, expect, it } from 'vitest';
import { createAppRouter, createCallerFactory, createContextInner, createRestHandler, MAX_INPUT_DEPTH, MAX_INPUT_VALUES } from '../src/index.js';
import { realGateway } from './real-gateway.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker', 'approver'] };

function setup() {
  const audit = new RecordingAuditSink();
  const gateway = realGateway({ tools: [calculatorTool], principals: [worker], roles: { worker: ['*'] }, audit, tmpPrefix: 'toolgate-api-nesting-' });
  const router = createAppRouter({ gateway, health: () => ({ ok: true, version: 'test', reasons: [], sources: [] }) });
  const caller = createCallerFactory(router)(createContextInner({ principal: worker }));
  return { caller, rest: createRestHandler(router), records: audit.records };
}

function nested(levels: number, shape: 'array' | 'object' | 'mixed'): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = shape === 'array' || (shape === 'mixed' && i % 2) ? [value] : { a: value };
  return value;
}

const ARGS_TOO_DEEP = `invalid request: args: arguments are nested deeper than ${MAX_ARGS_DEPTH} levels`;
const CASES = (['array', 'object', 'mixed'] as const).flatMap((shape) => [200_000, 5_000].map((levels) => [shape, levels] as const));

describe('stack exhaustion by deeply nested input, over tRPC and REST', () => {
  it.each(CASES)('refuses %s arguments %i deep in tools.invoke, tools.explain and approvals.request (tRPC)', async (shape, levels) => {
    const { caller, records } = setup();
    const args = { expression: '1', data: nested(levels, shape) } as never;
    for (const run of [
      () => caller.tools.invoke({ tool: 'calculator', args }),
      () => caller.tools.explain({ tool: 'calculator', args }),
      () => caller.approvals.request({ tool: 'calculator', args }),
    ]) {
      const error = await run().then(
        () => undefined,
        (e: unknown) => e as { code: string; message: string },
      );
      expect(error?.code).toBe('BAD_REQUEST');
      // Never the engine's own words: the caller learns what is wrong and by how much.
      expect(error?.message).not.toMatch(/call stack/i);
      expect(error?.message).toMatch(/nested deeper than/);
    }
    expect(records).toEqual([]);
  });

  it.each(CASES)('answers %s arguments %i deep with 400 and a clear message over REST', async (shape, levels) => {
    const { rest } = setup();
    for (const path of ['/tools/invoke', '/tools/explain', '/approvals']) {
      const res = await rest({ method: 'POST', path, query: new URLSearchParams(), principal: worker, body: { tool: 'calculator', args: { data: nested(levels, shape) } } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: { code: 'BAD_REQUEST', message: ARGS_TOO_DEEP } });
    }
  });

  it.each([
    ['an unknown field', { tool: 'calculator', args: {}, extra: nested(200_000, 'array') }],
    ['the grants', { tool: 'calculator', args: {}, grants: nested(200_000, 'array') }],
    ['the whole request', nested(200_000, 'object')],
  ])('refuses nesting hidden in %s before any validator walks it', async (_where, input) => {
    const { caller } = setup();
    await expect(caller.tools.invoke(input as never)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: `the request is nested deeper than ${MAX_INPUT_DEPTH} levels`,
    });
  });

  it('refuses deep input to procedures without arguments too (approvals.decide, settings)', async () => {
    const { caller } = setup();
    await expect(caller.approvals.decide({ id: 'x', approve: true, reason: nested(200_000, 'array') } as never)).rejects.toMatchObject({
      message: `the request is nested deeper than ${MAX_INPUT_DEPTH} levels`,
    });
    await expect(caller.settings.egress.set({ enabled: true, hosts: nested(200_000, 'array') } as never)).rejects.toMatchObject({
      message: `the request is nested deeper than ${MAX_INPUT_DEPTH} levels`,
    });
  });

  it('still accepts arguments at the limit', async () => {
    const { caller } = setup();
    const explained = await caller.tools.explain({ tool: 'calculator', args: { expression: '1', data: nested(MAX_ARGS_DEPTH - 1, 'mixed') } as never });
    // Refused by the calculator's closed schema, not by the nesting rule.
    expect(explained).toMatchObject({ wouldRun: false, denial: { gate: 'input' } });
  });
});

/** Arguments shaped to cost per-value work far beyond what the 64 KiB size gate admits, built without recursion. */
const BLOW_UPS: [string, () => unknown][] = [
  ['340,000 empty arrays', () => ({ u: Array.from({ length: 340_000 }, () => []) })],
  ['260,000 empty objects', () => ({ u: Array.from({ length: 260_000 }, () => ({})) })],
  ['90,000 keys', () => Object.fromEntries(Array.from({ length: 90_000 }, (_, i) => [`k${i}`, 0]))],
  ['480,000 small numbers', () => ({ u: Array.from({ length: 480_000 }, () => 0) })],
  ['480,000 one-element arrays', () => ({ u: Array.from({ length: 480_000 }, () => [0]) })],
  ['32 arrays of 12,000 nulls each', () => ({ u: Array.from({ length: 32 }, () => Array.from({ length: 12_000 }, () => null)) })],
  ['one string of 1,000,000 characters', () => ({ s: 'x'.repeat(1_000_000) })],
  ['20 strings of 4,000 characters', () => ({ u: Array.from({ length: 20 }, () => 'y'.repeat(4_000)) })],
  ['one key of 70,000 characters', () => ({ ['k'.repeat(70_000)]: 1 })],
];

const TOO_MANY = `arguments hold more than ${MAX_ARGS_VALUES} values, more than the 65536-byte arguments limit can hold`;
const TOO_LARGE = 'arguments are larger than the limit of 65536 bytes of JSON';

describe('size blow-up before the size gate', () => {
  it('bounds the arguments to what 64 KiB of JSON can hold: 32,768 values', () => {
    expect(MAX_ARGS_VALUES).toBe(32_768);
    expect(MAX_ARGS_VALUES).toBe(maxValuesWithin(DEFAULT_LIMITS.maxArgsBytes));
    // The densest arguments there are: one array of single-digit numbers.
    const densest = { u: Array.from({ length: MAX_ARGS_VALUES - 2 }, () => 0) };
    expect(JSON.stringify(densest).length).toBeGreaterThan(DEFAULT_LIMITS.maxArgsBytes);
  });

  it.each(BLOW_UPS)('refuses %s in tools.invoke, tools.explain and approvals.request (tRPC) quickly and clearly', async (_shape, build) => {
    const { caller, records } = setup();
    const args = build() as never;
    for (const run of [
      () => caller.tools.invoke({ tool: 'calculator', args }),
      () => caller.tools.explain({ tool: 'calculator', args }),
      () => caller.approvals.request({ tool: 'calculator', args }),
    ]) {
      const started = performance.now();
      const ran = threadSchedule().ranMs;
      const error = await run().then(
        () => undefined,
        (e: unknown) => e as { code: string; message: string },
      );
      // Refused by the bounded walk, not after a validator has gone over every value: this
      // thread's CPU time where the kernel says (a loaded box stretches the wall clock, 105 ms
      // seen in a CI run), else the wall time.
      const ms = ran > 0 ? threadSchedule().ranMs - ran : performance.now() - started;
      expect(ms).toBeLessThan(100);
      expect(error?.code).toBe('BAD_REQUEST');
      expect([TOO_MANY, TOO_LARGE]).toContain(error?.message);
    }
    expect(records).toEqual([]);
  });

  it.each(BLOW_UPS)('answers %s with 400 naming the limit over REST', async (_shape, build) => {
    const { rest, records } = setup();
    const args = build();
    for (const path of ['/tools/invoke', '/tools/explain', '/approvals']) {
      const res = await rest({ method: 'POST', path, query: new URLSearchParams(), principal: worker, body: { tool: 'calculator', version: '1.0.0', args } });
      expect(res.status).toBe(400);
      const { error } = res.body as { error: { code: string; message: string; issues: string[] } };
      expect(error.code).toBe('BAD_REQUEST');
      expect(error.message).toMatch(/65536/);
      expect(error.issues).toHaveLength(1);
    }
    expect(records).toEqual([]);
  });

  it('names the count for many values and the size for long strings', async () => {
    const { caller } = setup();
    await expect(caller.tools.explain({ tool: 'calculator', args: { u: Array.from({ length: 340_000 }, () => []) } as never })).rejects.toMatchObject({
      message: TOO_MANY,
    });
    await expect(caller.tools.explain({ tool: 'calculator', args: { s: 'x'.repeat(1_000_000) } })).rejects.toMatchObject({
      message: TOO_LARGE,
    });
  });

  it('leaves arguments the size gate could accept to the gateway, whose exact size gate answers', async () => {
    const { caller } = setup();
    // The walk counts a number as one byte, so long numbers pass it and meet the exact count.
    const longNumbers = await caller.tools.explain({ tool: 'calculator', args: { u: Array.from({ length: 10_000 }, () => 123_456_789) } as never });
    expect(longNumbers).toMatchObject({ wouldRun: false, denial: { gate: 'size', code: 'INPUT_TOO_LARGE' } });
    // One value over the bound (args, u and 32,767 numbers) is refused by the API, by count.
    await expect(caller.tools.explain({ tool: 'calculator', args: { u: Array.from({ length: MAX_ARGS_VALUES - 1 }, () => 0) } as never })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: TOO_MANY,
    });
    // Within 64 KiB the calculator's closed schema answers, as before.
    const small = await caller.tools.explain({ tool: 'calculator', args: { expression: '1', u: Array.from({ length: 30_000 }, () => 0) } as never });
    expect(small).toMatchObject({ wouldRun: false, denial: { gate: 'input' } });
  });

  it.each([
    ['300,000 grants', (): unknown => ({ tool: 'calculator', args: {}, grants: Array.from({ length: 300_000 }, () => ({})) })],
    ['an unknown field of 300,000 values', (): unknown => ({ tool: 'calculator', args: {}, extra: Array.from({ length: 300_000 }, () => 0) })],
  ])('refuses a request with %s before any validator walks it', async (_where, build) => {
    const { caller } = setup();
    await expect(caller.tools.invoke(build() as never)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: `the request holds more than ${MAX_INPUT_VALUES} values`,
    });
  });

  it('refuses 300,000 egress hosts and a decision reason of 300,000 values the same way', async () => {
    const { caller } = setup();
    await expect(caller.settings.egress.set({ enabled: true, hosts: Array.from({ length: 300_000 }, () => 'a.example') })).rejects.toMatchObject({
      message: `the request holds more than ${MAX_INPUT_VALUES} values`,
    });
    await expect(caller.approvals.decide({ id: 'x', approve: true, reason: Array.from({ length: 300_000 }, () => 0) } as never)).rejects.toMatchObject({
      message: `the request holds more than ${MAX_INPUT_VALUES} values`,
    });
  });

  it.each([
    ['undefined', { expression: '1', x: undefined }],
    ['NaN', { expression: '1', x: [Number.NaN] }],
    ['a Date', { expression: '1', x: new Date(0) }],
    ['a Map', { expression: '1', x: new Map() }],
    ['a function', { expression: '1', x: () => 1 }],
  ])('still refuses arguments holding %s, which are not JSON', async (_what, args) => {
    const { caller } = setup();
    await expect(caller.tools.explain({ tool: 'calculator', args: args as never })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/^arguments must be JSON values \(found /),
    });
  });

  it('passes ordinary arguments through untouched, an own __proto__ key included (zod dropped it silently)', async () => {
    const { caller } = setup();
    expect(await caller.tools.explain({ tool: 'calculator', args: { expression: '2+2' } })).toMatchObject({ wouldRun: true });
    // Not lost on the way: the calculator's closed schema now sees and names it.
    const explained = await caller.tools.explain({ tool: 'calculator', args: JSON.parse('{"expression":"1","__proto__":{"x":1}}') });
    expect(explained).toMatchObject({ wouldRun: false, denial: { gate: 'input' } });
  });
});
