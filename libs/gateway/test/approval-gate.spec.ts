import { describe, expect, it } from 'vitest';
import { payloadDigest } from '../src/index.js';
import { denialOf, harness, testTool, thrown } from './harness.js';

function deployTool(risk: 'medium' | 'high' | 'critical' = 'high') {
  return testTool({
    name: 'deploy',
    risk,
    input: { type: 'object', properties: { target: { type: 'string' }, replicas: { type: 'integer', maximum: 5 } }, required: ['target'], additionalProperties: false },
    // These specs approve a clamped payload; a high-risk tool is clamped only when it opts in (ADR 0063).
    repair: { clamp: true },
  });
}

function setup(selfApproval = false) {
  const tool = deployTool();
  const h = harness({
    tools: [tool],
    tenants: {
      acme: { tools: ['*'], selfApproval, grants: [] },
      globex: { tools: ['*'], selfApproval: false, grants: [] },
    },
  });
  return { tool, h };
}

async function approved(h: ReturnType<typeof setup>['h'], requester: string, args: Record<string, unknown>, approver = 'approver-1') {
  const requested = await h.gateway.requestApproval(h.who(requester), { tool: 'deploy', args: args as never });
  if (!requested.ok) throw new Error(JSON.stringify(requested.denial));
  return h.gateway.decideApproval(h.who(approver), requested.approval.id, { approve: true, reason: 'looks fine' });
}

describe('gate 7: approval', () => {
  it('requires an approval for high risk, bound to the digest of the repaired payload', async () => {
    const { tool, h } = setup();
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod', replicas: 9 } }));
    const expected = payloadDigest({ tenant: 'acme', principal: 'worker-1', tool: 'deploy', version: '1.0.0', args: { target: 'prod', replicas: 5 } });
    expect(denial).toMatchObject({ gate: 'approval', code: 'APPROVAL_REQUIRED', data: { payloadDigest: expected } });
    expect(denial.hint).toContain("approvals.request {tool: 'deploy', version: '1.0.0'");
    expect(denial.hint).toContain('same tool, version and args');
    expect(tool.calls).toHaveLength(0);
  });

  it('requires one for critical risk too, but not for medium', async () => {
    const critical = harness({ tools: [deployTool('critical')] });
    expect(denialOf(await critical.gateway.invoke(critical.who('worker-1'), { tool: 'deploy', args: { target: 'x' } })).code).toBe('APPROVAL_REQUIRED');
    const medium = harness({ tools: [deployTool('medium')] });
    expect((await medium.gateway.invoke(medium.who('worker-1'), { tool: 'deploy', args: { target: 'x' } })).ok).toBe(true);
  });

  it('records a request over the repaired arguments, pending, expiring after the TTL', async () => {
    const { h } = setup();
    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 7 } });
    if (!requested.ok) throw new Error('refused');
    expect(requested.approval).toMatchObject({
      tenant: 'acme',
      requester: 'worker-1',
      tool: 'deploy',
      version: '1.0.0',
      args: { target: '7' },
      status: 'pending',
      payloadDigest: payloadDigest({ tenant: 'acme', principal: 'worker-1', tool: 'deploy', version: '1.0.0', args: { target: '7' } }),
      expiresAt: h.clock.now() + 15 * 60 * 1000,
    });
  });

  it('runs once with the approval, audits who approved it, and refuses a replay', async () => {
    const { tool, h } = setup();
    const approval = await approved(h, 'worker-1', { target: 'prod' });
    const first = await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id });
    expect(first.ok).toBe(true);
    const authorized = h.audit.events.find((e) => e.event === 'authorized');
    expect(authorized).toMatchObject({ approvedBy: 'approver-1', approvalReason: `approval:${approval.id}` });
    expect((await h.approvals.get('acme', approval.id))?.status).toBe('consumed');

    const replay = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id }));
    expect(replay.code).toBe('APPROVAL_REQUIRED');
    expect(replay.message).toContain('already used');
    const again = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } }));
    expect(again.code).toBe('APPROVAL_REQUIRED');
    expect(tool.calls).toHaveLength(1);
  });

  it('finds an approved, unused approval of this caller by digest when no id is given', async () => {
    const { tool, h } = setup();
    await approved(h, 'worker-1', { target: 'prod' });
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } })).ok).toBe(true);
    expect(tool.calls).toHaveLength(1);
  });

  it('lets two concurrent calls use one approval at most once', async () => {
    const { tool, h } = setup();
    const approval = await approved(h, 'worker-1', { target: 'prod' });
    const request = { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id };
    const results = await Promise.all([h.gateway.invoke(h.who('worker-1'), request), h.gateway.invoke(h.who('worker-1'), request)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(denialOf(results.find((r) => !r.ok) as never).code).toBe('APPROVAL_REQUIRED');
    expect(tool.calls).toHaveLength(1);
  });

  it('refuses arguments altered after approval', async () => {
    const { tool, h } = setup();
    const approval = await approved(h, 'worker-1', { target: 'staging' });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id }));
    expect(denial).toMatchObject({ code: 'APPROVAL_PAYLOAD_MISMATCH', data: { approvedDigest: approval.payloadDigest } });
    expect(tool.calls).toHaveLength(0);
    expect((await h.approvals.get('acme', approval.id))?.status).toBe('approved');
  });

  it('refuses an approval granted to another principal', async () => {
    const { h } = setup();
    const approval = await approved(h, 'worker-1', { target: 'prod' });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-2'), { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id }));
    expect(denial.code).toBe('APPROVAL_PAYLOAD_MISMATCH');
    expect(denial.message).toContain('another principal');
  });

  it('says a pending approval is still pending, and a denied one was denied', async () => {
    const { h } = setup();
    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
    if (!requested.ok) throw new Error('refused');
    const id = requested.approval.id;
    const pending = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: id }));
    expect(pending).toMatchObject({ code: 'APPROVAL_REQUIRED', message: `Approval '${id}' is still pending.` });
    const implicit = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } }));
    expect(implicit.message).toContain(`your approval request '${id}' is still pending`);

    await h.gateway.decideApproval(h.who('approver-1'), id, { approve: false, reason: 'not on a Friday' });
    const denied = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: id }));
    expect(denied).toMatchObject({ code: 'APPROVAL_DENIED', message: `Approval '${id}' was denied by approver-1: not on a Friday.` });
  });

  it('refuses an expired approval', async () => {
    const { tool, h } = setup();
    const approval = await approved(h, 'worker-1', { target: 'prod' });
    h.clock.advance(15 * 60 * 1000);
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: approval.id }));
    expect(denial.code).toBe('APPROVAL_EXPIRED');
    // Without the id, an expired approval is simply not usable.
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } })).code).toBe('APPROVAL_REQUIRED');
    expect(tool.calls).toHaveLength(0);
  });

  describe('an expired pending request (liveness: never name what can no longer be decided)', () => {
    const TTL = 15 * 60 * 1000;

    it('names only an unexpired pending request for the digest, skipping expired ones newer or older', async () => {
      const { tool, h } = setup();
      const first = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
      if (!first.ok) throw new Error('refused');
      h.clock.advance(TTL);
      // Exactly at expiresAt the request is expired: the call is asked to request a new one, not to wait.
      const after = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } }));
      expect(after.code).toBe('APPROVAL_REQUIRED');
      expect(after.data?.['approvalId']).toBeUndefined();
      expect(after.message).not.toContain('still pending');
      expect(after.hint).toContain('approvals.request');

      const second = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
      if (!second.ok) throw new Error('refused');
      expect(second.approval.id).not.toBe(first.approval.id);
      const named = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } }));
      expect(named.data?.['approvalId']).toBe(second.approval.id);
      h.clock.advance(TTL + 1);
      expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } })).data?.['approvalId']).toBeUndefined();
      expect(tool.calls).toHaveLength(0);
    });

    it('finds the open request behind newer expired ones of the same digest', async () => {
      const { h } = setup();
      // Written straight to the store: newer requests that expired first, as after a shorter TTL was configured.
      const digest = payloadDigest({ tenant: 'acme', principal: 'worker-1', tool: 'deploy', version: '1.0.0', args: { target: 'prod' } });
      const base = { tenant: 'acme', requester: 'worker-1', tool: 'deploy', version: '1.0.0', args: { target: 'prod' }, payloadDigest: digest };
      const now = h.clock.now();
      await h.approvals.create({ ...base, id: 'open-one', createdAt: now - 1000, expiresAt: now + TTL });
      for (let i = 0; i < 3; i++) await h.approvals.create({ ...base, id: `stale-${i}`, createdAt: now - 500 + i, expiresAt: now - 400 + i });
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } }));
      expect(denial.data?.['approvalId']).toBe('open-one');
    });

    it('says a named pending request that expired is expired, not still pending', async () => {
      const { tool, h } = setup();
      const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
      if (!requested.ok) throw new Error('refused');
      h.clock.advance(TTL);
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: requested.approval.id }));
      expect(denial.code).toBe('APPROVAL_EXPIRED');
      expect(denial.message).toContain('without a decision');
      expect(denial.hint).toContain('approvals.request');
      expect(tool.calls).toHaveLength(0);
    });
  });

  it('does not accept an approval from another tenant, nor let another tenant decide one', async () => {
    const { tool, h } = setup();
    const foreign = await approved(h, 'worker-g', { target: 'prod' }, 'boss-g');
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, approvalId: foreign.id }));
    expect(denial.code).toBe('APPROVAL_REQUIRED');
    expect(denial.message).toContain('in your tenant');
    expect(tool.calls).toHaveLength(0);

    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
    if (!requested.ok) throw new Error('refused');
    expect((await thrown(h.gateway.decideApproval(h.who('boss-g'), requested.approval.id, { approve: true }))).code).toBe('NOT_FOUND');
    expect((await h.approvals.get('acme', requested.approval.id))?.status).toBe('pending');
  });

  it('refuses a requester deciding its own request unless the tenant allows self-approval', async () => {
    const strict = setup(false);
    const mine = await strict.h.gateway.requestApproval(strict.h.who('boss'), { tool: 'deploy', args: { target: 'prod' } });
    if (!mine.ok) throw new Error('refused');
    const error = await thrown(strict.h.gateway.decideApproval(strict.h.who('boss'), mine.approval.id, { approve: true }));
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toContain('does not allow self-approval');

    const lenient = setup(true);
    const own = await lenient.h.gateway.requestApproval(lenient.h.who('boss'), { tool: 'deploy', args: { target: 'prod' } });
    if (!own.ok) throw new Error('refused');
    const decided = await lenient.h.gateway.decideApproval(lenient.h.who('boss'), own.approval.id, { approve: true });
    expect(decided).toMatchObject({ status: 'approved', decidedBy: 'boss', selfApproved: true });
    expect((await lenient.h.gateway.invoke(lenient.h.who('boss'), { tool: 'deploy', args: { target: 'prod' } })).ok).toBe(true);
  });

  it('ignores selfApprove, even from an approver, when the tenant does not allow self-approval', async () => {
    const { tool, h } = setup(false);
    const boss = denialOf(await h.gateway.invoke(h.who('boss'), { tool: 'deploy', args: { target: 'prod' }, selfApprove: true }));
    expect(boss.code).toBe('APPROVAL_REQUIRED');
    expect(boss.message).toContain("'selfApprove' is ignored: your tenant does not allow self-approval");
    expect(tool.calls).toHaveLength(0);
  });

  it('counts selfApprove only for a caller holding the approver role, audited as a self-approval', async () => {
    const { tool, h } = setup(true);
    const worker = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' }, selfApprove: true }));
    expect(worker.code).toBe('APPROVAL_REQUIRED');
    expect(worker.message).toContain("'selfApprove' counts only for a caller holding the approver role");
    expect(tool.calls).toHaveLength(0);

    expect((await h.gateway.invoke(h.who('boss'), { tool: 'deploy', args: { target: 'prod' }, selfApprove: true })).ok).toBe(true);
    const authorized = h.audit.events.filter((e) => e.event === 'authorized');
    expect(authorized).toHaveLength(1);
    expect(authorized[0]).toMatchObject({ principal: 'boss', approvedBy: 'boss', approvalReason: 'self-approval' });
  });

  it('lets only approvers decide, once, before expiry', async () => {
    const { h } = setup();
    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
    if (!requested.ok) throw new Error('refused');
    const id = requested.approval.id;
    expect((await thrown(h.gateway.decideApproval(h.who('worker-2'), id, { approve: true }))).code).toBe('FORBIDDEN');
    expect((await thrown(h.gateway.decideApproval(h.who('approver-1'), 'nope', { approve: true }))).code).toBe('NOT_FOUND');
    await h.gateway.decideApproval(h.who('approver-1'), id, { approve: true });
    expect((await thrown(h.gateway.decideApproval(h.who('approver-2'), id, { approve: false }))).code).toBe('CONFLICT');

    const late = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'qa' } });
    if (!late.ok) throw new Error('refused');
    h.clock.advance(15 * 60 * 1000 + 1);
    const expired = await thrown(h.gateway.decideApproval(h.who('approver-1'), late.approval.id, { approve: true }));
    expect(expired.code).toBe('CONFLICT');
    expect(expired.message).toContain('expired');
  });

  it('validates the decision', async () => {
    const { h } = setup();
    expect((await thrown(h.gateway.decideApproval(h.who('approver-1'), 'x', { approve: 'yes' as never }))).code).toBe('INVALID');
    expect((await thrown(h.gateway.decideApproval(h.who('approver-1'), 'x', { approve: true, reason: 'r'.repeat(501) }))).code).toBe('INVALID');
  });

  it('refuses approval requests for tools the caller may not use, bad input, or tools that need none', async () => {
    const tool = deployTool();
    const h = harness({ tools: [tool, testTool({ name: 'calculator' })] });
    const notAllowed = await h.gateway.requestApproval(h.who('planner-1'), { tool: 'deploy', args: { target: 'prod' } });
    expect(notAllowed.ok ? undefined : notAllowed.denial.code).toBe('TOOL_NOT_ALLOWED');
    const invalid = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod', color: 'red', size: 1 } });
    expect(invalid.ok ? undefined : invalid.denial.code).toBe('INVALID_INPUT');
    const lowRisk = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'calculator', args: {} });
    expect(lowRisk.ok ? undefined : lowRisk.denial.message).toBe("'calculator' is low risk and needs no approval.");
    expect(await h.approvals.list('acme', { limit: 10 })).toHaveLength(0);
  });

  it('lists the tenant approvals to approvers and operators, and only their own to others', async () => {
    const { h } = setup();
    await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'a' } });
    await h.gateway.requestApproval(h.who('worker-2'), { tool: 'deploy', args: { target: 'b' } });
    await h.gateway.requestApproval(h.who('worker-g'), { tool: 'deploy', args: { target: 'c' } });
    expect((await h.gateway.listApprovals(h.who('approver-1'))).map((r) => r.requester).sort()).toEqual(['worker-1', 'worker-2']);
    expect((await h.gateway.listApprovals(h.who('worker-1'))).map((r) => r.requester)).toEqual(['worker-1']);
    expect((await h.gateway.listApprovals(h.who('boss-g'))).map((r) => r.requester)).toEqual(['worker-g']);
    expect(await h.gateway.listApprovals(h.who('approver-1'), { status: 'approved' })).toEqual([]);
    expect(await h.gateway.listApprovals(h.who('approver-1'), { limit: 1 })).toHaveLength(1);
    expect((await thrown(h.gateway.listApprovals(h.who('approver-1'), { limit: 0 }))).code).toBe('INVALID');
  });

  it('fails closed when the approval store throws, without running the tool', async () => {
    const { tool, h } = setup();
    h.approvals.list = async () => {
      throw new Error('db down');
    };
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } }));
    expect(denial).toMatchObject({ gate: 'approval', code: 'STATE_UNAVAILABLE' });
    expect(tool.calls).toHaveLength(0);
    expect((await thrown(h.gateway.listApprovals(h.who('approver-1')))).code).toBe('UNAVAILABLE');
    h.approvals.create = async () => {
      throw new Error('db down');
    };
    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
    expect(requested.ok ? undefined : requested.denial.code).toBe('STATE_UNAVAILABLE');
  });
});
