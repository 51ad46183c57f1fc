import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { MemoryApprovalStore, MemoryBudgetStore, MemorySettingsStore } from '@toolgate/adapter-store-memory';
import type { AuditEvent, AuditRecord, Principal, PrincipalDirectory, PrincipalRecord, TenantPolicy } from '@toolgate/contracts';
import { Gateway, MAX_ARGS_DEPTH, ToolRegistry } from '@toolgate/gateway';
import { calculatorTool } from '@toolgate/tool-calculator';
import { describe, expect, it } from 'vitest';
import { createAppRouter, createCallerFactory, createContextInner, createRestHandler, MAX_INPUT_DEPTH } from '../src/index.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker', 'approver'] };

function directory(): PrincipalDirectory {
  const principals: PrincipalRecord[] = [worker];
  const tenant: TenantPolicy = { tools: ['*'], selfApproval: false, grants: [] };
  return {
    authenticate: () => undefined,
    get: (t, id) => principals.find((p) => p.tenant === t && p.id === id),
    principals: (t) => principals.filter((p) => p.tenant === t),
    roleTools: (role) => (role === 'worker' ? ['*'] : undefined),
    roleGrants: (role) => (role === 'worker' ? [] : undefined),
    tenant: (t) => (t === 'acme' ? tenant : undefined),
    tenants: () => ['acme'],
  };
}

function setup() {
  const records: AuditRecord[] = [];
  const gateway = new Gateway({
    registry: new ToolRegistry([calculatorTool]),
    directory: directory(),
    approvals: new MemoryApprovalStore(),
    budgets: new MemoryBudgetStore(),
    settings: new MemorySettingsStore(),
    audit: {
      append: async (event: AuditEvent) => {
        records.push({ ...event, seq: records.length + 1, prev: '', digest: '' });
        return { seq: records.length, digest: '' };
      },
      verify: async () => ({ ok: true, records: records.length, segments: 1 }),
      tail: async () => records,
      health: () => ({ ok: true }),
      close: async () => undefined,
    },
    executors: [new InProcessExecutor()],
    clock: { now: () => Date.now() },
    workspaceRoot: mkdtempSync(join(tmpdir(), 'toolgate-api-nesting-')),
    bootEgress: { enabled: false, allowAny: false, hosts: [] },
  });
  const router = createAppRouter({ gateway, health: () => ({ ok: true, version: 'test', reasons: [] }) });
  const caller = createCallerFactory(router)(createContextInner({ principal: worker }));
  return { caller, rest: createRestHandler(router), records };
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
