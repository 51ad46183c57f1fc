import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalStore, BudgetPolicy, BudgetStore } from '@toolgate/contracts';
import { MemoryApprovalStore, MemoryBudgetStore } from '@toolgate/adapter-store-memory';
import { openSqliteStores } from '@toolgate/adapter-store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
// Internal: the pending-request cap is not exported, and the race fills it exactly.
import { MAX_PENDING_APPROVALS_PER_PRINCIPAL } from '../src/desks/approval-desk.js';
import { denialOf, harness, testTool } from './harness.js';

const BUDGET: BudgetPolicy = { calls: 50, windowSeconds: 3600 };
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The embedded default (SQLite) and the in-memory stores, each behind the real gateway. */
const STORES: readonly [string, () => { approvals: ApprovalStore; budgets: BudgetStore }][] = [
  ['memory', () => ({ approvals: new MemoryApprovalStore(), budgets: new MemoryBudgetStore() })],
  [
    'sqlite',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'toolgate-race-'));
      dirs.push(dir);
      const stores = openSqliteStores(join(dir, 'state.db'));
      return { approvals: stores.approvals, budgets: stores.budgets };
    },
  ],
];

function setup(stores: { approvals: ApprovalStore; budgets: BudgetStore }, budget: BudgetPolicy = BUDGET) {
  const deploy = testTool({ name: 'deploy', risk: 'high', input: { type: 'object', properties: { target: { type: 'string' } }, additionalProperties: false } });
  const ping = testTool({ name: 'ping', risk: 'low' });
  const h = harness({
    tools: [deploy, ping],
    principals: [{ id: 'racer', tenant: 'acme', roles: ['worker'], budget }],
    deps: { approvals: stores.approvals, budgets: stores.budgets },
  });
  const remaining = () => stores.budgets.remaining('acme', 'racer', budget, h.clock.now());
  return { h, deploy, ping, remaining };
}

async function approve(h: ReturnType<typeof setup>['h'], args: Record<string, string>) {
  const requested = await h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args });
  if (!requested.ok) throw new Error(JSON.stringify(requested.denial));
  return h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });
}

describe.each(STORES)('budget charged to losers of an approval race (%s stores)', (_kind, open) => {
  it.each([
    ['naming the approval', true],
    ['found by the payload digest', false],
  ])('20 parallel calls %s: exactly one runs and exactly one is charged', async (_how, byId) => {
    const { h, deploy, remaining } = setup(open());
    const approval = await approve(h, { target: 'prod' });
    expect(await remaining()).toBe(50);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        h.gateway.invoke(h.who('racer'), { tool: 'deploy', args: { target: 'prod' }, ...(byId ? { approvalId: approval.id } : {}) }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(deploy.calls).toHaveLength(1);
    expect(await remaining()).toBe(49);
    const losers = results.filter((r) => !r.ok).map((r) => denialOf(r));
    expect(losers).toHaveLength(19);
    for (const denial of losers) expect(denial).toMatchObject({ gate: 'approval', code: 'APPROVAL_REQUIRED' });
  });

  it('refuses the winner whose charge fails after the consume, runs nothing and gives its approval back (ADR 0062)', async () => {
    const budget = { calls: 1, windowSeconds: 60 };
    const stores = open();
    const { h, deploy, remaining } = setup(stores, budget);
    const approval = await approve(h, { target: 'prod' });
    // Another call of the same principal spends the last unit between gate 3 and gate 9.
    h.audit.afterAppend = async (record) => {
      if (record.event === 'authorized') await stores.budgets.charge('acme', 'racer', budget, h.clock.now());
    };
    const denial = denialOf(await h.gateway.invoke(h.who('racer'), { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id }));
    expect(denial).toMatchObject({ gate: 'budget', code: 'BUDGET_EXHAUSTED' });
    expect(denial.message).toContain(`The call did not run. Approval '${approval.id}' was not used and still allows one call.`);
    expect(denial.data).toMatchObject({ approvalId: approval.id, approvalReleased: true });
    expect(h.audit.records.at(-1)).toMatchObject({ event: 'denied', code: 'BUDGET_EXHAUSTED', detail: denial.message });
    expect(deploy.calls).toHaveLength(0);
    expect(await remaining()).toBe(0);
    // Once the window resets, the same approval runs the call: it was given back, not spent.
    h.audit.afterAppend = () => undefined;
    h.clock.advance(60_000);
    expect((await h.gateway.invoke(h.who('racer'), { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id })).ok).toBe(true);
    expect(deploy.calls).toHaveLength(1);
  });
});

describe.each(STORES)('approval requests from an exhausted principal (%s stores)', (_kind, open) => {
  it('are refused BUDGET_EXHAUSTED, create nothing and audit no request', async () => {
    const { h, ping } = setup(open(), { calls: 2, windowSeconds: 3600 });
    for (let i = 0; i < 2; i++) expect((await h.gateway.invoke(h.who('racer'), { tool: 'ping', args: {} })).ok).toBe(true);
    expect(ping.calls).toHaveLength(2);
    const before = h.audit.records.length;
    for (const args of [{ target: 'prod' }, { target: 'staging' }, {}] as Record<string, string>[]) {
      const refused = await h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args });
      expect(refused).toMatchObject({ ok: false, denial: { gate: 'budget', code: 'BUDGET_EXHAUSTED' } });
    }
    expect(await h.gateway.listApprovals(h.who('approver-1'), { status: 'pending' })).toEqual([]);
    expect(h.audit.records.slice(before).filter((r) => r.event === 'approval_requested')).toEqual([]);
    // The window resets: requests are accepted again.
    h.clock.advance(3600_000);
    expect((await h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args: { target: 'prod' } })).ok).toBe(true);
  });
});

describe.each(STORES)('approval request flooding (%s stores)', (_kind, open) => {
  it(`lets one principal keep at most ${MAX_PENDING_APPROVALS_PER_PRINCIPAL} undecided requests, even sent all at once`, async () => {
    const { h } = setup(open());
    const results = await Promise.all(
      Array.from({ length: MAX_PENDING_APPROVALS_PER_PRINCIPAL * 2 }, (_, i) =>
        h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args: { target: `t${i}` } }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(MAX_PENDING_APPROVALS_PER_PRINCIPAL);
    for (const r of results.filter((x) => !x.ok)) {
      expect(r).toMatchObject({
        ok: false,
        denial: { gate: 'approval', code: 'BUDGET_EXHAUSTED', data: { pending: MAX_PENDING_APPROVALS_PER_PRINCIPAL, limit: MAX_PENDING_APPROVALS_PER_PRINCIPAL } },
      });
    }
    // Another principal of the tenant is not held back by this one's queue.
    expect((await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'x' } })).ok).toBe(true);
    // A decision frees a place; so does expiry.
    const pending = await h.gateway.listApprovals(h.who('approver-1'), { status: 'pending', limit: 100 });
    const mine = pending.filter((a) => a.requester === 'racer');
    await h.gateway.decideApproval(h.who('approver-1'), mine[0]!.id, { approve: false });
    expect((await h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args: { target: 'after-decision' } })).ok).toBe(true);
    expect((await h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args: { target: 'one-too-many' } })).ok).toBe(false);
    h.clock.advance(h.deps.limits?.approvalTtlMs ?? 16 * 60_000);
    expect((await h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args: { target: 'after-expiry' } })).ok).toBe(true);
  });

  it('fails closed when the store cannot count pending requests', async () => {
    const stores = open();
    const { h } = setup({
      approvals: Object.assign(Object.create(stores.approvals) as ApprovalStore, {
        list: async () => {
          throw new Error('database is locked at /var/lib/toolgate/state.db');
        },
      }),
      budgets: stores.budgets,
    });
    const refused = await h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args: { target: 'prod' } });
    expect(refused).toMatchObject({ ok: false, denial: { code: 'STATE_UNAVAILABLE' } });
    expect(JSON.stringify(refused)).not.toContain('/var/lib');
  });
});

describe.each(STORES)('duplicate approval requests for one payload (%s stores)', (_kind, open) => {
  const requested = (h: ReturnType<typeof setup>['h'], args: Record<string, string>) => h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args });
  const idOf = (r: Awaited<ReturnType<typeof requested>>) => {
    if (!r.ok) throw new Error(JSON.stringify(r.denial));
    return r.approval.id;
  };

  it('answers concurrent first requests for the same arguments with one pending request, audited once', async () => {
    const { h } = setup(open());
    const ids = (await Promise.all(Array.from({ length: 8 }, () => requested(h, { target: 'prod' })))).map(idOf);
    expect(new Set(ids).size).toBe(1);
    // Asked again later: still the one; and arguments the input gate repairs to the same payload (7 → '7') find theirs too.
    expect(idOf(await requested(h, { target: 'prod' }))).toBe(ids[0]);
    const seven = idOf(await requested(h, { target: '7' }));
    expect(idOf(await h.gateway.requestApproval(h.who('racer'), { tool: 'deploy', args: { target: 7 } as never }))).toBe(seven);
    const pending = await h.gateway.listApprovals(h.who('approver-1'), { status: 'pending', limit: 100 });
    expect(pending.map((a) => a.id).sort()).toEqual([ids[0], seven].sort());
    expect(h.audit.records.filter((r) => r.event === 'approval_requested')).toHaveLength(2);
  });

  it('keeps distinct requests for other arguments and other principals, and counts a reused one once against the cap', async () => {
    const { h } = setup(open());
    const prod = idOf(await requested(h, { target: 'prod' }));
    expect(idOf(await requested(h, { target: 'staging' }))).not.toBe(prod);
    const other = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
    expect(idOf(other)).not.toBe(prod);
    for (let i = 2; i < MAX_PENDING_APPROVALS_PER_PRINCIPAL; i++) idOf(await requested(h, { target: `t${i}` }));
    // At the cap a new payload is refused, but the one already waiting is still answered with its request.
    expect((await requested(h, { target: 'one-too-many' })).ok).toBe(false);
    expect(idOf(await requested(h, { target: 'prod' }))).toBe(prod);
  });

  it('makes a new request once the waiting one expired or was decided', async () => {
    const { h } = setup(open());
    const first = idOf(await requested(h, { target: 'prod' }));
    h.clock.advance(h.deps.limits?.approvalTtlMs ?? 15 * 60_000);
    const second = idOf(await requested(h, { target: 'prod' }));
    expect(second).not.toBe(first);
    await h.gateway.decideApproval(h.who('approver-1'), second, { approve: false });
    const third = idOf(await requested(h, { target: 'prod' }));
    expect([first, second]).not.toContain(third);
  });
});
