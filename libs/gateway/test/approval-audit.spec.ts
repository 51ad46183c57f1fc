import type { ApprovalStore } from '@toolgate/contracts';
import { MemoryApprovalStore } from '@toolgate/adapter-store-memory';
import { describe, expect, it } from 'vitest';
import { argsDigest } from '../src/index.js';
import { denialOf, harness, testTool, thrown } from './harness.js';

const TS = new Date(Date.UTC(2030, 0, 1, 12, 0, 0)).toISOString();
const TTL_MS = 15 * 60 * 1000;

function deployTool() {
  return testTool({
    name: 'deploy',
    risk: 'high',
    input: { type: 'object', properties: { target: { type: 'string' }, replicas: { type: 'integer', maximum: 5 } }, required: ['target'], additionalProperties: false },
    // These specs approve a clamped payload; a high-risk tool is clamped only when it opts in (ADR 0063).
    repair: { clamp: true },
  });
}

function setup(options: { selfApproval?: boolean; approvals?: ApprovalStore } = {}) {
  const tool = deployTool();
  const h = harness({
    tools: [tool],
    tenants: {
      acme: { tools: ['*'], selfApproval: options.selfApproval ?? false, grants: [] },
      globex: { tools: ['*'], selfApproval: false, grants: [] },
    },
    ...(options.approvals ? { deps: { approvals: options.approvals } } : {}),
  });
  return { tool, h };
}

type H = ReturnType<typeof setup>['h'];

async function requested(h: H, requester = 'worker-1', args: Record<string, unknown> = { target: 'prod' }) {
  const result = await h.gateway.requestApproval(h.who(requester), { tool: 'deploy', args: args as never });
  if (!result.ok) throw new Error(JSON.stringify(result.denial));
  return result.approval;
}

/** ADR 0020: approval requests and decisions are audit records, written before they take effect. */
describe('auditing approvals', () => {
  it('records a request with the requester, the tool, the digest of the repaired arguments and the approval id', async () => {
    const { h } = setup();
    const approval = await requested(h, 'worker-1', { target: 'prod', replicas: 9 });
    expect(h.audit.events).toEqual([
      {
        event: 'approval_requested',
        ts: TS,
        tenant: 'acme',
        principal: 'worker-1',
        tool: 'deploy',
        version: '1.0.0',
        argsDigest: argsDigest({ target: 'prod', replicas: 5 }),
        repaired: ["lowered 'replicas' to the maximum 5"],
        detail: `pending until ${new Date(Date.parse(TS) + TTL_MS).toISOString()}`,
        approvalId: approval.id,
        seq: 1,
        prev: 'genesis',
        digest: 'd1',
      },
    ]);
    // The arguments themselves never reach the trail.
    expect(JSON.stringify(h.audit.events)).not.toContain('prod');
  });

  it('records an approval with the approver and the reason, and the call it allows carries the same digest', async () => {
    const { h } = setup();
    const approval = await requested(h);
    h.clock.advance(1000);
    await h.gateway.decideApproval(h.who('approver-1'), approval.id, { approve: true, reason: 'change window is open' });
    const decided = h.audit.events[1];
    expect(decided).toEqual({
      event: 'approval_decided',
      ts: new Date(Date.parse(TS) + 1000).toISOString(),
      tenant: 'acme',
      principal: 'approver-1',
      tool: 'deploy',
      version: '1.0.0',
      argsDigest: argsDigest({ target: 'prod' }),
      approvedBy: 'approver-1',
      approvalReason: 'change window is open',
      detail: 'approved',
      approvalId: approval.id,
      seq: 2,
      prev: 'd1',
      digest: 'd2',
    });

    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id })).ok).toBe(true);
    const authorized = h.audit.events.find((e) => e.event === 'authorized');
    expect(authorized).toMatchObject({ argsDigest: decided?.argsDigest, approvedBy: 'approver-1', approvalReason: `approval:${approval.id}` });
    expect(h.audit.kinds()).toEqual(['approval_requested', 'approval_decided', 'authorized', 'succeeded']);
  });

  it('records a denial with the decider and the reason, and names no approver', async () => {
    const { h } = setup();
    const approval = await requested(h);
    await h.gateway.decideApproval(h.who('approver-2'), approval.id, { approve: false, reason: 'not during the freeze' });
    const decided = h.audit.events[1];
    expect(decided).toMatchObject({ event: 'approval_decided', principal: 'approver-2', detail: 'denied', approvalReason: 'not during the freeze', approvalId: approval.id });
    expect(decided).not.toHaveProperty('approvedBy');
  });

  it('marks a self-approval as such, keeping the reason after the marker', async () => {
    const { h } = setup({ selfApproval: true });
    const first = await requested(h, 'boss');
    await h.gateway.decideApproval(h.who('boss'), first.id, { approve: true });
    const second = await requested(h, 'boss', { target: 'staging' });
    await h.gateway.decideApproval(h.who('boss'), second.id, { approve: true, reason: 'hotfix' });
    const decisions = h.audit.events.filter((e) => e.event === 'approval_decided');
    expect(decisions.map((e) => [e.approvalId, e.principal, e.approvedBy, e.approvalReason])).toEqual([
      [first.id, 'boss', 'boss', 'self-approval'],
      [second.id, 'boss', 'boss', 'self-approval: hotfix'],
    ]);
  });

  it('audits a decision refused before it is attempted as denied, never as a decision', async () => {
    const { h } = setup();
    const approval = await requested(h);
    await thrown(h.gateway.decideApproval(h.who('worker-2'), approval.id, { approve: true }));
    await thrown(h.gateway.decideApproval(h.who('approver-1'), 'no-such-approval', { approve: true }));
    await thrown(h.gateway.decideApproval(h.who('boss-g'), approval.id, { approve: true }));
    h.clock.advance(TTL_MS);
    await thrown(h.gateway.decideApproval(h.who('approver-1'), approval.id, { approve: true }));
    // Each refusal is a `denied` record (DESIGN §3); none is an `approval_decided` one.
    expect(h.audit.kinds()).toEqual(['approval_requested', 'denied:PERMISSION_NOT_GRANTED', 'denied:INVALID_INPUT', 'denied:INVALID_INPUT', 'denied:INVALID_INPUT']);
  });
});

describe('failing closed when the trail cannot record an approval', () => {
  it('creates no approval when the request cannot be recorded', async () => {
    const { h } = setup();
    h.audit.failWhen = (e) => e.event === 'approval_requested';
    const result = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
    const denial = denialOf(result);
    expect(denial).toMatchObject({ gate: 'audit', code: 'AUDIT_UNAVAILABLE' });
    expect(JSON.stringify(denial)).not.toContain('/var/lib');
    expect(await h.approvals.list('acme', { limit: 10 })).toEqual([]);
    // No request record; the refusal itself is recorded where the trail can still take it.
    expect(h.audit.kinds()).toEqual(['denied:AUDIT_UNAVAILABLE']);
  });

  it('leaves the approval pending and unusable when the decision cannot be recorded', async () => {
    const { tool, h } = setup();
    const approval = await requested(h);
    h.audit.failWhen = (e) => e.event === 'approval_decided';
    const error = await thrown(h.gateway.decideApproval(h.who('approver-1'), approval.id, { approve: true }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('still pending');
    expect(error.message).not.toContain('/var/lib');
    expect((await h.approvals.get('acme', approval.id))?.status).toBe('pending');

    h.audit.failWhen = () => false;
    const named = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id }));
    expect(named).toMatchObject({ gate: 'approval', code: 'APPROVAL_REQUIRED' });
    expect(named.message).toContain('still pending');
    const implicit = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } }));
    expect(implicit.code).toBe('APPROVAL_REQUIRED');
    expect(tool.calls).toHaveLength(0);
    expect(h.audit.events.filter((e) => e.event === 'approval_decided')).toEqual([]);

    // Once the trail is back, the same decision goes through and is recorded.
    await h.gateway.decideApproval(h.who('approver-1'), approval.id, { approve: true });
    expect(h.audit.events.filter((e) => e.event === 'approval_decided')).toMatchObject([{ detail: 'approved', approvalId: approval.id }]);
  });

  it('follows a recorded decision the store did not apply with a "not applied" record', async () => {
    const { h } = setup();
    const approval = await requested(h);
    // Another approver (say in another server process) decides between this decision's record and its store write.
    let raced = false;
    h.audit.afterAppend = async (record) => {
      if (raced || record.event !== 'approval_decided') return;
      raced = true;
      await h.approvals.decide('acme', approval.id, { approve: false, by: 'approver-2', reason: 'too risky', selfApproved: false, at: h.clock.now() });
    };
    const error = await thrown(h.gateway.decideApproval(h.who('approver-1'), approval.id, { approve: true, reason: 'fine' }));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toBe(`Approval '${approval.id}' can no longer be decided (not pending).`);
    expect(await h.approvals.get('acme', approval.id)).toMatchObject({ status: 'denied', decidedBy: 'approver-2' });

    const decided = h.audit.records.filter((e) => e.event === 'approval_decided');
    expect(decided).toHaveLength(2);
    expect(decided[0]).toMatchObject({ principal: 'approver-1', approvedBy: 'approver-1', detail: 'approved', approvalId: approval.id });
    expect(decided[1]).toMatchObject({
      principal: 'approver-1',
      detail: `not applied: not pending (the decision recorded at seq ${decided[0]?.seq})`,
      approvalId: approval.id,
      argsDigest: decided[0]?.argsDigest,
    });
    // The follow-up never names an approver: the approval did not happen.
    expect(decided[1]).not.toHaveProperty('approvedBy');
  });

  it('keeps the conflict answer when even the "not applied" record cannot be written', async () => {
    const { h } = setup();
    const approval = await requested(h);
    let raced = false;
    h.audit.afterAppend = async (record) => {
      if (raced || record.event !== 'approval_decided') return;
      raced = true;
      h.audit.failWhen = () => true;
      await h.approvals.decide('acme', approval.id, { approve: true, by: 'approver-2', selfApproved: false, at: h.clock.now() });
    };
    expect((await thrown(h.gateway.decideApproval(h.who('approver-1'), approval.id, { approve: false }))).code).toBe('CONFLICT');
    expect(h.audit.kinds()).toEqual(['approval_requested', 'approval_decided']);
  });

  it('says the outcome is unknown when the store fails after the request or decision was recorded', async () => {
    const store = new MemoryApprovalStore();
    const failing = { create: true, decide: true };
    const approvals: ApprovalStore = {
      create: (a) => (failing.create ? Promise.reject(new Error('connection reset by /tmp/db.sock')) : store.create(a)),
      get: (t, id) => store.get(t, id),
      list: (t, f) => store.list(t, f),
      decide: (t, id, d) => (failing.decide ? Promise.reject(new Error('connection reset')) : store.decide(t, id, d)),
      consume: (t, id, digest, now) => store.consume(t, id, digest, now),
      release: (t, id, digest, at) => store.release(t, id, digest, at),
    };
    const { h } = setup({ approvals });

    const result = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
    expect(denialOf(result)).toMatchObject({ gate: 'approval', code: 'STATE_UNAVAILABLE' });
    expect(h.audit.events.map((e) => [e.event, e.detail?.split(' ')[0]])).toEqual([
      ['approval_requested', 'pending'],
      ['approval_requested', 'outcome'],
    ]);
    expect(h.audit.events[1]).toMatchObject({ detail: 'outcome unknown: the approval store failed (the request recorded at seq 1)', approvalId: h.audit.events[0]?.approvalId });

    failing.create = false;
    const approval = await requested(h);
    const error = await thrown(h.gateway.decideApproval(h.who('approver-1'), approval.id, { approve: true }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).not.toContain('sock');
    expect(h.audit.events.slice(-2)).toMatchObject([
      { event: 'approval_decided', detail: 'approved', approvedBy: 'approver-1', approvalId: approval.id },
      { event: 'approval_decided', detail: `outcome unknown: the approval store failed (the decision recorded at seq ${h.audit.events.length - 1})`, approvalId: approval.id },
    ]);
  });
});
