import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditSink, Clock, PrincipalRecord, TenantPolicy, ToolDefinition, ToolPinStore, ToolSource } from '@toolgate/contracts';
// The API's tests drive the real gateway over real in-memory adapters, as the composition root wires it.
import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { MemoryApprovalStore, MemoryBudgetStore, MemorySettingsStore } from '@toolgate/adapter-store-memory';
import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import { Gateway, ToolRegistry } from '@toolgate/gateway';
import { LiteralDirectory, RecordingAuditSink, type RoleConfig } from '@toolgate/testing';

/** What one test's gateway holds; everything else is the same real wiring every time. */
export interface RealGatewayOptions {
  readonly tools: readonly ToolDefinition[];
  readonly principals: readonly PrincipalRecord[];
  readonly roles: Record<string, RoleConfig>;
  /** By default every tenant a principal names, each allowing every tool and no self-approval. */
  readonly tenants?: Record<string, TenantPolicy>;
  /** Where the gateway's audit goes; a fresh recording sink by default. */
  readonly audit?: AuditSink;
  /** The wall clock by default, as the server's. */
  readonly clock?: Clock;
  /** The start of the temporary workspace root's name, so a leftover directory names its test. */
  readonly tmpPrefix: string;
  /** Tool sources added after the tools, trusted with `risk: low` as an operator's servers file can. */
  readonly sources?: readonly ToolSource[];
  /** The pin store (the server's is SQLite or PostgreSQL); none by default. Call `loadPins()` before serving. */
  readonly pins?: ToolPinStore;
}

/** The fallback tenant policy: all tools, nobody approving their own call, no standing grants. */
const OPEN_TENANT: TenantPolicy = { tools: ['*'], selfApproval: false, grants: [] };

/**
 * A real `Gateway` over memory stores, the in-process executor and a fresh temporary workspace
 * root, with egress off. Tests of the routers assert what the real pipeline does,
 * so this wires no fakes but the directory, audit and clock.
 */
export function realGateway(options: RealGatewayOptions): Gateway {
  const tenants = options.tenants ?? Object.fromEntries(options.principals.map((p) => [p.tenant, OPEN_TENANT]));
  const registry = new ToolRegistry([...options.tools]);
  for (const source of options.sources ?? []) registry.addSource(source, { trustLowRisk: true });
  return new Gateway({
    registry,
    ...(options.pins ? { pins: options.pins } : {}),
    directory: new LiteralDirectory({ tenants, roles: options.roles, principals: [...options.principals] }),
    approvals: new MemoryApprovalStore(),
    budgets: new MemoryBudgetStore(),
    settings: new MemorySettingsStore(),
    audit: options.audit ?? new RecordingAuditSink(),
    executors: [new InProcessExecutor()],
    clock: options.clock ?? { now: () => Date.now() },
    workspaces: new FsTenantWorkspaces(mkdtempSync(join(tmpdir(), options.tmpPrefix))),
    bootEgress: { enabled: false, allowAny: false, hosts: [] },
  });
}
