import type { ApprovalStore, AuditRecord, JsonObject } from '@toolgate/contracts';
import { MemoryApprovalStore } from '@toolgate/adapter-store-memory';
import { describe, expect, it } from 'vitest';
// Internal: the desk's cap and refusal text are not exported, and the tests compare against them.
import { APPROVAL_REQUEST_REFUSED, MAX_PENDING_APPROVALS_PER_PRINCIPAL } from '../src/desks/approval-desk.js';
import { argsDigest } from '../src/index.js';
import { denialOf, harness, testTool, thrown } from './harness.js';

const TS = new Date(Date.UTC(2030, 0, 1, 12, 0, 0)).toISOString();

function setup(approvals?: ApprovalStore) {
  const deploy = testTool({
    name: 'deploy',
    risk: 'high',
    input: { type: 'object', properties: { target: { type: 'string' }, replicas: { type: 'integer', maximum: 5 } }, required: ['target'], additionalProperties: false },
  });
  const search = testTool({ name: 'search', risk: 'low', input: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false } });
  const h = harness({ tools: [deploy, search], ...(approvals ? { deps: { approvals } } : {}) });
  const ask = (who: string, tool: string, args: JsonObject, version?: string) =>
    h.gateway.requestApproval(h.who(who), { tool, args, ...(version === undefined ? {} : { version }) });
  return { h, ask };
}

const last = (records: readonly AuditRecord[]) => records[records.length - 1];

/** DESIGN §3: "Every denial is audited with its gate and code", approval requests and decisions too. */
describe('unaudited approval refusals', () => {
  it.each([
    ['an unknown tool', 'worker-1', 'no-such-tool', { target: 'prod' }, undefined, 'lookup', 'TOOL_NOT_FOUND'],
    ['a version the gateway does not have', 'worker-1', 'deploy', { target: 'prod' }, '9.9.9', 'lookup', 'VERSION_MISMATCH'],
    ['a tool the role does not hold', 'planner-1', 'deploy', { target: 'prod' }, undefined, 'allow', 'TOOL_NOT_ALLOWED'],
    ['arguments missing a required member', 'worker-1', 'deploy', { replicas: 1 }, undefined, 'input', 'INVALID_INPUT'],
    ['an unknown argument', 'worker-1', 'deploy', { target: 'prod', sneaky: true }, undefined, 'input', 'INVALID_INPUT'],
  ] as const)('records a request refused for %s as denied, without a digest, and answers with its callId', async (_name, who, tool, args, version, gate, code) => {
    const { h, ask } = setup();
    const result = await ask(who, tool, args as JsonObject, version);
    expect(denialOf(result)).toMatchObject({ gate, code });
    const callId = (result as { callId?: string }).callId;
    expect(callId).toEqual(expect.any(String));
    expect(h.audit.records).toHaveLength(1);
    const record = h.audit.records[0]!;
    expect(record).toMatchObject({ event: 'denied', ts: TS, callId, tenant: 'acme', principal: who, gate, code, detail: APPROVAL_REQUEST_REFUSED });
    // The arguments were not accepted, so there is no digest of them (and never the arguments).
    expect(record.argsDigest).toBeUndefined();
    expect(JSON.stringify(record)).not.toContain('prod');
    expect(await h.approvals.list('acme', { limit: 10 })).toEqual([]);
  });

  it('records a request for a tool that needs no approval with the digest of its accepted arguments', async () => {
    const { h, ask } = setup();
    const result = await ask('worker-1', 'search', { q: 'x' });
    expect(denialOf(result)).toMatchObject({ gate: 'approval', code: 'INVALID_INPUT' });
    expect(h.audit.records).toEqual([
      expect.objectContaining({ event: 'denied', callId: (result as { callId?: string }).callId, tool: 'search', version: '1.0.0', gate: 'approval', code: 'INVALID_INPUT', argsDigest: argsDigest({ q: 'x' }), detail: APPROVAL_REQUEST_REFUSED }),
    ]);
  });

  it('records a request over the pending cap with the digest of the request', async () => {
    const { h, ask } = setup();
    for (let i = 0; i < MAX_PENDING_APPROVALS_PER_PRINCIPAL; i++) expect((await ask('worker-1', 'deploy', { target: `t${i}` })).ok).toBe(true);
    const result = await ask('worker-1', 'deploy', { target: 'one-more' });
    expect(denialOf(result)).toMatchObject({ gate: 'approval', code: 'BUDGET_EXHAUSTED' });
    expect(last(h.audit.records)).toMatchObject({ event: 'denied', gate: 'approval', code: 'BUDGET_EXHAUSTED', argsDigest: argsDigest({ target: 'one-more' }), callId: (result as { callId?: string }).callId });
    expect(h.audit.kinds().filter((k) => k === 'approval_requested')).toHaveLength(MAX_PENDING_APPROVALS_PER_PRINCIPAL);
  });

  it('records a request refused because the approval store is down, and creates nothing', async () => {
    const store = new MemoryApprovalStore();
    store.list = async () => {
      throw new Error('connection refused to /var/run/store.sock');
    };
    const { h, ask } = setup(store);
    const result = await ask('worker-1', 'deploy', { target: 'prod' });
    expect(denialOf(result)).toMatchObject({ code: 'STATE_UNAVAILABLE' });
    expect(h.audit.kinds()).toEqual(['denied:STATE_UNAVAILABLE']);
    expect(JSON.stringify(h.audit.records)).not.toContain('/var/run');
  });

  it('still refuses (fails closed) when the refusal itself cannot be recorded', async () => {
    const { h, ask } = setup();
    h.audit.failWhen = () => true;
    const result = await ask('worker-1', 'deploy', { replicas: 1 });
    expect(denialOf(result)).toMatchObject({ gate: 'input', code: 'INVALID_INPUT' });
    expect(h.audit.records).toEqual([]);
    expect(await h.approvals.list('acme', { limit: 10 })).toEqual([]);
  });

  it('keeps tools.explain free of records', async () => {
    const { h } = setup();
    await h.gateway.explain(h.who('planner-1'), { tool: 'deploy', args: { target: 'prod' } });
    await h.gateway.explain(h.who('worker-1'), { tool: 'no-such-tool', args: {} });
    expect(h.audit.records).toEqual([]);
  });

  describe('refused decisions', () => {
    const pending = async (h: ReturnType<typeof setup>['h']) => {
      const result = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: { target: 'prod' } });
      if (!result.ok) throw new Error('request refused');
      return result.approval;
    };

    it.each([
      ['a principal without the approver role', 'worker-2', 'FORBIDDEN', 'PERMISSION_NOT_GRANTED'],
      ['the requester where self-approval is off', 'boss', 'FORBIDDEN', 'PERMISSION_NOT_GRANTED'],
      ['an approver of another tenant', 'boss-g', 'NOT_FOUND', 'INVALID_INPUT'],
    ] as const)('records a decision by %s as denied at the approval gate, and decides nothing', async (_name, who, apiCode, code) => {
      const { h } = setup();
      const approval = await h.gateway
        .requestApproval(h.who(who === 'boss' ? 'boss' : 'worker-1'), { tool: 'deploy', args: { target: 'prod' } })
        .then((r) => (r.ok ? r.approval : Promise.reject(new Error('request refused'))));
      const error = await thrown(h.gateway.decideApproval(h.who(who), approval.id, { approve: true }));
      expect(error.code).toBe(apiCode);
      const tenant = h.who(who).tenant;
      expect(last(h.audit.records)).toEqual(
        expect.objectContaining({ event: 'denied', tenant, principal: who, gate: 'approval', code, approvalId: approval.id, detail: expect.stringMatching(new RegExp(`^approval decision refused: ${apiCode}: `)) }),
      );
      expect(h.audit.kinds().filter((k) => k === 'approval_decided')).toEqual([]);
      expect((await h.approvals.get('acme', approval.id))?.status).toBe('pending');
      if (tenant !== 'acme') {
        // Nothing of the other tenant's approval (its tool, its digest) reaches this tenant's record.
        expect(JSON.stringify(last(h.audit.records))).not.toContain('deploy');
        expect(last(h.audit.records)!.argsDigest).toBeUndefined();
      }
    });

    it.each([
      ['an id that names nothing', 'no-such-approval', 'no-such-approval'],
      ['an overlong id', 'x'.repeat(5000), 'x'.repeat(128)],
      ['an id carrying a token', 'Bearer sk-live-0123456789abcdef0123456789abcdef', undefined],
      // Cut at 64 characters the credential no longer matches a rule: it must be redacted first.
      ['an id whose URL credential crosses the cut', `https://${'0123456789abcdef0123456789abcdef'.repeat(2)}@github.com`, undefined],
      ['an id whose token starts before the cut', `${'x'.repeat(40)} ghp_0123456789abcdef0123456789abcdef0123`, undefined],
    ] as const)('records a decision of %s, bounded', async (_name, id, recorded) => {
      const { h } = setup();
      await pending(h);
      const error = await thrown(h.gateway.decideApproval(h.who('approver-1'), id, { approve: false }));
      expect(error.code).toBe('NOT_FOUND');
      const record = last(h.audit.records)!;
      expect(record).toMatchObject({ event: 'denied', gate: 'approval', code: 'INVALID_INPUT' });
      if (recorded) expect(record.approvalId).toBe(recorded);
      expect(record.detail!.length).toBeLessThanOrEqual(400);
      expect(JSON.stringify(record)).not.toContain('0123456789abcdef');
    });

    it('still refuses (fails closed) when the refusal cannot be recorded', async () => {
      const { h } = setup();
      const approval = await pending(h);
      h.audit.failWhen = (e) => e.event === 'denied';
      expect((await thrown(h.gateway.decideApproval(h.who('worker-2'), approval.id, { approve: true }))).code).toBe('FORBIDDEN');
      expect((await h.approvals.get('acme', approval.id))?.status).toBe('pending');
    });
  });
});
