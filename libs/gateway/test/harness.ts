import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  AuditEvent,
  AuditQuery,
  AuditReceipt,
  AuditRecord,
  AuditReport,
  AuditSink,
  Clock,
  EgressSettings,
  Grant,
  JsonObject,
  JsonValue,
  PrincipalDirectory,
  PrincipalRecord,
  TenantPolicy,
  ToolContext,
  ToolDefinition,
  ToolExecutor,
  ToolManifest,
} from '@toolgate/contracts';
// The gateway's tests wire it to real adapters, as the composition root does.
import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import { MemoryApprovalStore, MemoryBudgetStore, MemorySettingsStore } from '@toolgate/adapter-store-memory';
import { Gateway, ToolRegistry, type GatewayDeps } from '../src/index.js';

/** An audit sink that records events in memory and fails on demand. */
export class FakeAuditSink implements AuditSink {
  readonly records: AuditRecord[] = [];
  /** Return true to make that append reject. */
  failWhen: (event: AuditEvent) => boolean = () => false;
  /** Runs after a record is kept and before its append resolves: where a test makes something happen meanwhile. */
  afterAppend: (record: AuditRecord) => Promise<void> | void = () => undefined;

  get events(): AuditEvent[] {
    return this.records;
  }

  async append(event: AuditEvent): Promise<AuditReceipt> {
    if (this.failWhen(event)) throw new Error('disk full at /var/lib/toolgate/audit');
    const seq = this.records.length + 1;
    const digest = `d${seq}`;
    const record = { ...event, seq, prev: seq === 1 ? 'genesis' : `d${seq - 1}`, digest };
    this.records.push(record);
    await this.afterAppend(record);
    return { seq, digest };
  }

  async verify(): Promise<AuditReport> {
    return { ok: true, records: this.records.length, segments: 1 };
  }

  async tail(query: AuditQuery): Promise<readonly AuditRecord[]> {
    const matching = this.records.filter(
      (r) =>
        (query.tenant === undefined || r.tenant === query.tenant) &&
        (query.principal === undefined || r.principal === query.principal) &&
        (query.afterSeq === undefined || r.seq > query.afterSeq),
    );
    return matching.slice(-query.limit);
  }

  health() {
    return { ok: true };
  }

  async close(): Promise<void> {}

  kinds(): string[] {
    return this.records.map((r) => (r.code ? `${r.event}:${r.code}` : r.event));
  }
}

/** A clock that moves only when told. */
export class FakeClock implements Clock {
  constructor(public time = Date.UTC(2030, 0, 1, 12, 0, 0)) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

/** A role as the principals file writes it: a list of tools (no grants), or tools with standing grants. */
export type RoleConfig = readonly string[] | { readonly tools: readonly string[]; readonly grants: readonly Grant[] };

/** A principal directory from literal configuration. */
export class FakeDirectory implements PrincipalDirectory {
  constructor(
    readonly config: {
      tenants: Record<string, TenantPolicy>;
      roles: Record<string, RoleConfig>;
      principals: PrincipalRecord[];
    },
  ) {}
  authenticate() {
    return undefined;
  }
  get(tenant: string, id: string) {
    return this.config.principals.find((p) => p.tenant === tenant && p.id === id);
  }
  principals(tenant: string) {
    return this.config.principals.filter((p) => p.tenant === tenant);
  }
  roleTools(role: string) {
    const entry = Object.hasOwn(this.config.roles, role) ? this.config.roles[role] : undefined;
    return entry === undefined ? undefined : 'tools' in entry ? entry.tools : entry;
  }
  roleGrants(role: string) {
    const entry = Object.hasOwn(this.config.roles, role) ? this.config.roles[role] : undefined;
    return entry === undefined ? undefined : 'grants' in entry ? entry.grants : [];
  }
  tenant(tenant: string) {
    return Object.hasOwn(this.config.tenants, tenant) ? this.config.tenants[tenant] : undefined;
  }
  tenants() {
    return Object.keys(this.config.tenants);
  }
}

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
  const audit = new FakeAuditSink();
  const clock = new FakeClock();
  const approvals = new MemoryApprovalStore();
  const budgets = new MemoryBudgetStore();
  const settings = new MemorySettingsStore();
  const cast = [...principals(), ...(options.principals ?? [])];
  const directory = new FakeDirectory({
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
  return { gateway, audit, clock, approvals, budgets, settings, directory, registry, workspaceRoot, deps, who };
}

/** Throws if the value is not a denial; returns it for assertions. */
export function denialOf(result: { ok: boolean; denial?: unknown }) {
  if (result.ok) throw new Error(`expected a denial, got ${JSON.stringify(result)}`);
  return (result as { denial: import('@toolgate/contracts').Denial }).denial;
}
