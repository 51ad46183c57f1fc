import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  EgressSettings,
  JsonObject,
  JsonValue,
  PrincipalRecord,
  TenantPolicy,
  ToolContext,
  ToolDefinition,
  ToolExecutor,
  ToolManifest,
} from '@toolgate/contracts';
// The ports the gateway only reads or writes through (audit, clock, directory) get the shared fakes.
import { LiteralDirectory, ManualClock, RecordingAuditSink, type RoleConfig } from '@toolgate/testing';
// The gateway's tests wire it to real adapters, as the composition root does.
import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import { MemoryApprovalStore, MemoryBudgetStore, MemorySettingsStore, MemoryToolPinStore } from '@toolgate/adapter-store-memory';
import { expect } from 'vitest';
import { Gateway, GatewayError, ToolRegistry, type GatewayDeps } from '../src/index.js';

/** A tool whose handler counts its calls and does what the test says. */
export interface TestTool extends ToolDefinition {
  readonly calls: { args: JsonObject; ctx: ToolContext }[];
}

export function testTool(
  manifest: Partial<ToolManifest> & { name: string },
  run: (args: JsonObject, ctx: ToolContext) => Promise<JsonValue> | JsonValue = (args) => ({ echo: args }),
): TestTool {
  const calls: TestTool['calls'] = [];
  return {
    calls,
    manifest: {
      version: '1.0.0',
      description: `test tool ${manifest.name}`,
      provenance: 'first-party',
      risk: 'low',
      permissions: [],
      input: { type: 'object', properties: {}, additionalProperties: false },
      output: {},
      tier: 'inprocess',
      timeoutMs: 1000,
      ...manifest,
    },
    handler: {
      async invoke(args, ctx) {
        calls.push({ args, ctx });
        return run(args, ctx);
      },
    },
  };
}

/** An echo tool with a typical schema: required string, optional bounded integer, enum, array, boolean. */
export function searchTool(overrides: Partial<ToolManifest> = {}): TestTool {
  return testTool({
    name: 'search',
    input: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1 },
        max_results: { type: 'integer', minimum: 1, maximum: 10 },
        mode: { type: 'string', enum: ['fast', 'deep'] },
        tags: { type: 'array', items: { type: 'string' } },
        safe: { type: 'boolean' },
        label: { type: 'string' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    ...overrides,
  });
}

export const ROLES: Record<string, RoleConfig> = {
  planner: ['send_message', 'read_messages', 'memory_write', 'memory_query'],
  worker: ['*'],
  searcher: ['search', 'calculator'],
  // Held by no principal of the default cast (so delegation hints are unchanged); tests that need
  // standing grants give it to the principals they add.
  fetcher: { tools: ['*'], grants: [{ type: 'network', scope: '*' }] },
};

/** The cast of every gateway test: tenant `acme` (allows everything) and tenant `globex`. */
export function principals(): PrincipalRecord[] {
  return [
    { id: 'planner-1', tenant: 'acme', roles: ['planner'] },
    { id: 'worker-1', tenant: 'acme', roles: ['worker'] },
    { id: 'worker-2', tenant: 'acme', roles: ['worker'] },
    { id: 'boss', tenant: 'acme', roles: ['worker', 'approver', 'operator'] },
    { id: 'approver-1', tenant: 'acme', roles: ['approver'] },
    { id: 'approver-2', tenant: 'acme', roles: ['approver', 'searcher'] },
    { id: 'thrifty', tenant: 'acme', roles: ['worker'], budget: { calls: 2, windowSeconds: 60 } },
    { id: 'ghost', tenant: 'acme', roles: ['no-such-role'] },
    { id: 'worker-g', tenant: 'globex', roles: ['worker'] },
    { id: 'boss-g', tenant: 'globex', roles: ['worker', 'approver', 'operator'] },
    { id: 'lost', tenant: 'nowhere', roles: ['worker'] },
  ];
}

export interface HarnessOptions {
  tools?: ToolDefinition[];
  tenants?: Record<string, TenantPolicy>;
  /** Replaces `ROLES`. */
  roles?: Record<string, RoleConfig>;
  /** Principals added to the default cast. */
  principals?: PrincipalRecord[];
  bootEgress?: EgressSettings;
  executors?: ToolExecutor[];
  deps?: Partial<GatewayDeps>;
}

export function harness(options: HarnessOptions = {}) {
  const audit = new RecordingAuditSink();
  const clock = new ManualClock();
  const approvals = new MemoryApprovalStore();
  const budgets = new MemoryBudgetStore();
  const settings = new MemorySettingsStore();
  const pins = new MemoryToolPinStore();
  const cast = [...principals(), ...(options.principals ?? [])];
  const directory = new LiteralDirectory({
    tenants: options.tenants ?? {
      acme: { tools: ['*'], selfApproval: false, grants: [] },
      globex: { tools: ['*'], selfApproval: false, grants: [] },
    },
    roles: options.roles ?? ROLES,
    principals: cast,
  });
  const registry = new ToolRegistry(options.tools ?? []);
  const workspaceRoot = mkdtempSync(join(tmpdir(), 'toolgate-gw-'));
  let ids = 0;
  const deps: GatewayDeps = {
    registry,
    pins,
    directory,
    approvals,
    budgets,
    settings,
    audit,
    executors: options.executors ?? [new InProcessExecutor()],
    clock,
    workspaces: new FsTenantWorkspaces(workspaceRoot),
    bootEgress: options.bootEgress ?? { enabled: false, allowAny: false, hosts: [] },
    newId: () => `id-${++ids}`,
    ...options.deps,
  };
  const gateway = new Gateway(deps);
  const who = (id: string) => {
    const p = cast.find((c) => c.id === id);
    if (!p) throw new Error(`no test principal ${id}`);
    return { id: p.id, tenant: p.tenant, roles: p.roles };
  };
  return { gateway, audit, clock, approvals, budgets, settings, pins, directory, registry, workspaceRoot, deps, who };
}

/** Throws if the value is not a denial; returns it for assertions. */
export function denialOf(result: { ok: boolean; denial?: unknown }) {
  if (result.ok) throw new Error(`expected a denial, got ${JSON.stringify(result)}`);
  return (result as { denial: import('@toolgate/contracts').Denial }).denial;
}

/** Asserts the promise rejects with a `GatewayError` (not a crash of another kind) and returns it for assertions. */
export async function thrown(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}
