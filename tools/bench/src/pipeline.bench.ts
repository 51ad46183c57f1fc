import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { MemoryApprovalStore, MemoryBudgetStore, MemorySettingsStore } from '@toolgate/adapter-store-memory';
import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import type {
  Authentication,
  AuditEvent,
  AuditReceipt,
  AuditRecord,
  AuditReport,
  AuditSink,
  JsonObject,
  Principal,
  PrincipalDirectory,
  PrincipalRecord,
  TenantPolicy,
  ToolContext,
} from '@toolgate/contracts';
import { Gateway, ToolRegistry } from '@toolgate/gateway';
import { calculatorTool } from '@toolgate/tool-calculator';
import { Ajv } from 'ajv';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { target, type BenchLine } from './targets.js';

const WARMUP = 3_000;
const BATCH = 500;
/** Wall-clock budget of the measured part; batches alternate until it is spent or MAX_CALLS is reached. */
const BUDGET_MS = 2_000;
const MAX_CALLS = 40_000;
const TARGET_OVERHEAD_US = 25;

/** An audit sink that accepts everything at once: the bench measures the gates, not a disk. */
class NoopAuditSink implements AuditSink {
  #seq = 0;
  async append(_event: AuditEvent): Promise<AuditReceipt> {
    return { seq: ++this.#seq, digest: 'noop' };
  }
  async verify(): Promise<AuditReport> {
    return { ok: true, records: this.#seq, segments: 0 };
  }
  async tail(): Promise<readonly AuditRecord[]> {
    return [];
  }
  health() {
    return { ok: true };
  }
  async close(): Promise<void> {}
}

/** One tenant, one principal with an unlimited budget, allowed the calculator. */
class BenchDirectory implements PrincipalDirectory {
  readonly principal: PrincipalRecord = { id: 'bench', tenant: 'bench', roles: ['worker'] };
  readonly policy: TenantPolicy = { tools: ['calculator'], selfApproval: false, grants: [] };
  authenticate(): Promise<Authentication> {
    return Promise.resolve({ outcome: 'principal', principal: this.principal });
  }
  get(tenant: string, id: string) {
    return tenant === 'bench' && id === 'bench' ? this.principal : undefined;
  }
  principals() {
    return [this.principal];
  }
  roleTools(role: string) {
    return role === 'worker' ? ['calculator'] : undefined;
  }
  roleGrants(role: string) {
    return role === 'worker' ? [] : undefined;
  }
  tenant(tenant: string) {
    return tenant === 'bench' ? this.policy : undefined;
  }
  tenants() {
    return ['bench'];
  }
}

/**
 * What the gateway costs per call: `gateway.invoke(calculator)` with in-memory stores, an audit
 * sink that resolves at once and the in-process executor, against calling the calculator's
 * handler directly after the same ajv validation (a compiled validator). Both run the same
 * expression; batches alternate so machine noise hits both alike. Reports p50 per call, the
 * overhead at p50 (the median over rounds of each round's p50 difference, which a load spike in
 * one round cannot move; target < 25 µs) and the ratio.
 */
export async function bench(): Promise<BenchLine[]> {
  const workspaceRoot = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  try {
    const directory = new BenchDirectory();
    const gateway = new Gateway({
      registry: new ToolRegistry([calculatorTool]),
      directory,
      approvals: new MemoryApprovalStore(),
      budgets: new MemoryBudgetStore(),
      settings: new MemorySettingsStore(),
      audit: new NoopAuditSink(),
      executors: [new InProcessExecutor()],
      clock: { now: () => Date.now() },
      workspaces: new FsTenantWorkspaces(workspaceRoot),
      bootEgress: { enabled: false, allowAny: false, hosts: [] },
    });
    const principal: Principal = { id: 'bench', tenant: 'bench', roles: ['worker'] };
    const args: JsonObject = { expression: '2 + 3 * 4 - (10 / 4) ** 2' };
    const expected = 2 + 3 * 4 - (10 / 4) ** 2;

    const validate = new Ajv({ strict: true, allErrors: true }).compile(calculatorTool.manifest.input);
    const ctx: ToolContext = { signal: new AbortController().signal, principal, workspaceRoot, callId: 'direct' };
    const direct = async (): Promise<void> => {
      if (!validate(args)) throw new Error('direct validation failed');
      const out = (await calculatorTool.handler.invoke(args, ctx)) as { result: number };
      if (out.result !== expected) throw new Error('direct result wrong');
    };
    const viaGateway = async (): Promise<void> => {
      const out = await gateway.invoke(principal, { tool: 'calculator', version: '1.0.0', args });
      if (!out.ok || (out.output as { result: number }).result !== expected) throw new Error(`gateway call failed: ${JSON.stringify(out)}`);
    };

    for (let i = 0; i < WARMUP; i++) {
      await direct();
      await viaGateway();
    }

    // Batches alternate; each pair of batches is one round, measured under the same machine load.
    const directTimes: number[] = [];
    const gatewayTimes: number[] = [];
    const roundOverheads: number[] = [];
    const started = performance.now();
    while (performance.now() - started < BUDGET_MS && directTimes.length < MAX_CALLS) {
      const d = await timeBatch(direct, directTimes);
      const g = await timeBatch(viaGateway, gatewayTimes);
      roundOverheads.push(percentile(g, 0.5) - percentile(d, 0.5));
    }

    const directP50 = percentile(directTimes, 0.5);
    const gatewayP50 = percentile(gatewayTimes, 0.5);
    const overhead = percentile(roundOverheads, 0.5);
    return [
      `pipeline: gateway.invoke(calculator) vs direct handler after ajv validation, ${gatewayTimes.length} calls each in ${roundOverheads.length} rounds`,
      `  direct   p50 ${us(directP50)}  p90 ${us(percentile(directTimes, 0.9))}`,
      `  gateway  p50 ${us(gatewayP50)}  p90 ${us(percentile(gatewayTimes, 0.9))}`,
      `  overhead at p50 ${us(overhead)} (median of per-round p50 differences)`,
      target('gateway overhead at p50', overhead * 1000, '<', TARGET_OVERHEAD_US, ' µs', 1),
      `  ratio gateway/direct at p50 ${(gatewayP50 / directP50).toFixed(1)}x`,
    ];
  } finally {
    rmSync(workspaceRoot, { recursive: true, force: true });
  }
}

/** Times BATCH calls one by one; returns this batch's samples (also appended to `into`). */
async function timeBatch(run: () => Promise<void>, into: number[]): Promise<number[]> {
  const batch: number[] = [];
  for (let i = 0; i < BATCH; i++) {
    const t0 = performance.now();
    await run();
    batch.push(performance.now() - t0);
  }
  into.push(...batch);
  return batch;
}

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
}

function us(ms: number): string {
  return `${(ms * 1000).toFixed(1)} µs`;
}
