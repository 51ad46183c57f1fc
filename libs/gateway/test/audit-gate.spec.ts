import { describe, expect, it } from 'vitest';
import { argsDigest } from '../src/index.js';
import { denialOf, harness, searchTool, testTool } from './harness.js';

function deploy() {
  return testTool({ name: 'deploy', risk: 'high', input: { type: 'object', properties: { target: { type: 'string' } }, additionalProperties: false } });
}

describe('gate 9: audit "authorized", charge, consume', () => {
  it('records "authorized" before running and the outcome after, never the raw arguments', async () => {
    const h = harness({ tools: [searchTool()] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'top secret plans', max_results: '3' } });
    expect(result.ok).toBe(true);
    expect(h.audit.kinds()).toEqual(['authorized', 'succeeded']);
    const [authorized, succeeded] = h.audit.events;
    const digest = argsDigest({ query: 'top secret plans', max_results: 3 });
    for (const event of [authorized, succeeded]) {
      expect(event).toMatchObject({ callId: result.callId, tenant: 'acme', principal: 'worker-1', tool: 'search', version: '1.0.0', argsDigest: digest });
      expect(event?.durationMs).toBeGreaterThanOrEqual(0);
      expect(event?.repaired).toEqual(["converted 'max_results' from a numeric string to a number"]);
    }
    expect(JSON.stringify(h.audit.events)).not.toContain('top secret');
    expect(authorized?.ts).toBe('2030-01-01T12:00:00.000Z');
  });

  it('does not run, charge or consume when "authorized" cannot be recorded', async () => {
    const tool = deploy();
    const h = harness({ tools: [tool] });
    h.audit.failWhen = (e) => e.event === 'authorized';
    const denial = denialOf(await h.gateway.invoke(h.who('thrifty'), { tool: 'deploy', args: { target: 'x' }, selfApprove: false }));
    expect(denial.code).toBe('APPROVAL_REQUIRED'); // precondition: refused before the audit gate

    const requested = await h.gateway.requestApproval(h.who('thrifty'), { tool: 'deploy', args: { target: 'x' } });
    if (!requested.ok) throw new Error('refused');
    await h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });
    const refused = denialOf(await h.gateway.invoke(h.who('thrifty'), { tool: 'deploy', args: { target: 'x' }, approvalId: requested.approval.id }));
    expect(refused).toMatchObject({ gate: 'audit', code: 'AUDIT_UNAVAILABLE' });
    expect(refused.message).not.toContain('/var/lib');
    expect(tool.calls).toHaveLength(0);
    expect(await h.budgets.remaining('acme', 'thrifty', { calls: 2, windowSeconds: 60 }, h.clock.now())).toBe(2);
    expect((await h.approvals.get('acme', requested.approval.id))?.status).toBe('approved');
    expect(h.audit.kinds().at(-1)).toBe('denied:AUDIT_UNAVAILABLE');
  });

  it('withholds the output when the outcome cannot be recorded, though the tool ran', async () => {
    const tool = searchTool();
    const h = harness({ tools: [tool] });
    h.audit.failWhen = (e) => e.event === 'succeeded';
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'x' } });
    const denial = denialOf(result);
    expect(denial).toMatchObject({ gate: 'audit', code: 'OUTCOME_UNAUDITED' });
    expect(result).not.toHaveProperty('output');
    expect(tool.calls).toHaveLength(1);
    expect(h.audit.kinds()).toEqual(['authorized', 'denied:OUTCOME_UNAUDITED']);
  });

  it('returns a denial unchanged when even auditing the denial fails, and never throws', async () => {
    const h = harness({ tools: [searchTool()] });
    h.audit.failWhen = () => true;
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: {} }));
    expect(denial.code).toBe('INVALID_INPUT');
    expect(h.audit.events).toHaveLength(0);
  });

  it('refuses when the atomic charge finds the window used up (a concurrent call won the race)', async () => {
    const tool = searchTool();
    const h = harness({ tools: [tool] });
    h.budgets.charge = async () => false;
    const denial = denialOf(await h.gateway.invoke(h.who('thrifty'), { tool: 'search', args: { query: 'x' } }));
    expect(denial).toMatchObject({ gate: 'budget', code: 'BUDGET_EXHAUSTED' });
    expect(tool.calls).toHaveLength(0);
    expect(h.audit.kinds()).toEqual(['authorized', 'denied:BUDGET_EXHAUSTED']);
  });

  it('never lets concurrent calls overspend a budget', async () => {
    const tool = searchTool();
    const h = harness({ tools: [tool] });
    const results = await Promise.all(Array.from({ length: 6 }, () => h.gateway.invoke(h.who('thrifty'), { tool: 'search', args: { query: 'x' } })));
    expect(results.filter((r) => r.ok)).toHaveLength(2);
    expect(tool.calls).toHaveLength(2);
  });

  it('fails closed when charging or consuming throws, without running the tool', async () => {
    const tool = deploy();
    const h = harness({ tools: [tool, searchTool()] });
    h.budgets.charge = async () => {
      throw new Error('pool exhausted');
    };
    expect(denialOf(await h.gateway.invoke(h.who('thrifty'), { tool: 'search', args: { query: 'x' } }))).toMatchObject({ gate: 'budget', code: 'STATE_UNAVAILABLE' });

    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'x' } });
    if (!requested.ok) throw new Error('refused');
    await h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });
    h.approvals.consume = async () => {
      throw new Error('deadlock detected');
    };
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args: { target: 'x' } }));
    expect(denial).toMatchObject({ gate: 'approval', code: 'STATE_UNAVAILABLE' });
    expect(tool.calls).toHaveLength(0);
    expect(h.audit.kinds().slice(-2)).toEqual(['authorized', 'denied:STATE_UNAVAILABLE']);
  });
});

describe('audit reads', () => {
  it('shows operators their whole tenant, others only their own records, never another tenant', async () => {
    const h = harness({ tools: [searchTool()] });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'a' } });
    await h.gateway.invoke(h.who('worker-2'), { tool: 'search', args: { query: 'b' } });
    await h.gateway.invoke(h.who('worker-g'), { tool: 'search', args: { query: 'c' } });
    const principalsOf = (records: readonly { principal?: string }[]) => [...new Set(records.map((r) => r.principal))].sort();
    expect(principalsOf(await h.gateway.auditTail(h.who('boss'), { limit: 100 }))).toEqual(['worker-1', 'worker-2']);
    expect(principalsOf(await h.gateway.auditTail(h.who('worker-1'), { limit: 100 }))).toEqual(['worker-1']);
    expect(principalsOf(await h.gateway.auditTail(h.who('boss-g'), { limit: 100 }))).toEqual(['worker-g']);
    expect(await h.gateway.auditTail(h.who('boss'), { limit: 100, afterSeq: 3 })).toHaveLength(1);
  });

  it('filters out foreign records even if the sink returns them', async () => {
    const h = harness({ tools: [searchTool()] });
    await h.gateway.invoke(h.who('worker-g'), { tool: 'search', args: { query: 'c' } });
    h.audit.tail = async () => h.audit.records;
    expect(await h.gateway.auditTail(h.who('boss'), { limit: 100 })).toEqual([]);
  });

  it('validates the query and lets only operators verify', async () => {
    const h = harness();
    await expect(h.gateway.auditTail(h.who('boss'), { limit: 0 })).rejects.toMatchObject({ code: 'INVALID' });
    await expect(h.gateway.auditTail(h.who('boss'), { limit: 10, afterSeq: -1 })).rejects.toMatchObject({ code: 'INVALID' });
    await expect(h.gateway.auditVerify(h.who('worker-1'))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(h.gateway.auditVerify(h.who('boss'))).resolves.toMatchObject({ ok: true });
    h.audit.verify = async () => {
      throw new Error('segment /data/audit/0001 unreadable');
    };
    await expect(h.gateway.auditVerify(h.who('boss'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});

describe('cross-tenant disclosure through audit.verify', () => {
  it("tells a tenant's operator whether the trail holds, and no count of anyone's records", async () => {
    const h = harness({ tools: [searchTool()] });
    for (let i = 0; i < 3; i++) await h.gateway.invoke(h.who('worker-g'), { tool: 'search', args: { query: `globex ${i}` } });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'acme' } });
    expect(h.audit.records.length).toBeGreaterThan(4);
    for (const [operator, tenant] of [['boss', 'acme'], ['boss-g', 'globex']] as const) {
      const report = await h.gateway.auditVerify(h.who(operator));
      expect(report).toEqual({ ok: true, tenant });
      expect(JSON.stringify(report)).not.toMatch(/\d/);
    }
  });

  it.each([
    ['a fault naming segment, seq and record', { ok: false, records: 5230, segments: 4, fault: { segment: 'audit-00000004.log', seq: 5231, record: 12, reason: 'frame 5231 (tenant globex, tool deploy) digest mismatch' } }],
    ['a fault with only a reason', { ok: false, records: 9, segments: 1, fault: { reason: 'the trail ends at seq 9 but this writer committed seq 12: records were removed' } }],
    ['a fault without any detail', { ok: false, records: 0, segments: 0 }],
  ])('answers %s with what to do, not where it is', async (_name, broken) => {
    const h = harness();
    h.audit.verify = async () => broken;
    const report = await h.gateway.auditVerify(h.who('boss'));
    expect(report).toEqual({
      ok: false,
      tenant: 'acme',
      fault: { reason: 'the audit trail does not verify; the host operator can find the first bad record with `toolgate audit verify` on the data dir' },
    });
    expect(JSON.stringify(report)).not.toMatch(/globex|deploy|\d/);
  });

  it('fails closed on a sink that answers something that is not a report', async () => {
    const h = harness();
    h.audit.verify = async () => undefined as never;
    await expect(h.gateway.auditVerify(h.who('boss'))).resolves.toMatchObject({ ok: false });
    h.audit.verify = async () => ({ ok: 'yes' }) as never;
    await expect(h.gateway.auditVerify(h.who('boss'))).resolves.toMatchObject({ ok: false });
  });

  it('still refuses everyone who is not an operator, in every tenant', async () => {
    const h = harness();
    for (const who of ['worker-1', 'approver-1', 'worker-g', 'planner-1']) {
      await expect(h.gateway.auditVerify(h.who(who))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    }
  });
});
