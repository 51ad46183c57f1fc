import { describe, expect, it } from 'vitest';
import { APPROVAL_FILES_NOTE } from '../src/index.js';
import { harness, testTool, thrown } from './harness.js';

function setup() {
  const tool = testTool({
    name: 'deploy',
    risk: 'high',
    input: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'], additionalProperties: false },
  });
  const h = harness({ tools: [tool], principals: [{ id: 'ops-1', tenant: 'acme', roles: ['operator'] }] });
  return h;
}

async function requested(h: ReturnType<typeof setup>, requester: string, target: string): Promise<string> {
  const result = await h.gateway.requestApproval(h.who(requester), { tool: 'deploy', args: { target } });
  if (!result.ok) throw new Error(JSON.stringify(result.denial));
  return result.approval.id;
}

describe('approvals: get one by id', () => {
  it('shows an approver, an operator and the requester the same view that list shows', async () => {
    const h = setup();
    const id = await requested(h, 'worker-1', 'prod');
    const listed = (await h.gateway.listApprovals(h.who('approver-1'))).find((a) => a.id === id);
    expect(listed).toBeDefined();
    for (const who of ['approver-1', 'ops-1', 'boss', 'worker-1']) {
      expect(await h.gateway.getApproval(h.who(who), id)).toEqual(listed);
    }
    expect(await h.gateway.getApproval(h.who('worker-1'), id)).toMatchObject({ id, tool: 'deploy', version: '1.0.0', requester: 'worker-1', status: 'pending', note: APPROVAL_FILES_NOTE });
  });

  it('shows the decision once an approval is decided', async () => {
    const h = setup();
    const id = await requested(h, 'worker-1', 'prod');
    await h.gateway.decideApproval(h.who('approver-1'), id, { approve: false, reason: 'not today' });
    expect(await h.gateway.getApproval(h.who('worker-1'), id)).toMatchObject({ status: 'denied', decidedBy: 'approver-1', reason: 'not today' });
  });

  it('points out hidden characters beside the exact arguments', async () => {
    const h = setup();
    const id = await requested(h, 'worker-1', 'prod\u202Eved');
    const view = await h.gateway.getApproval(h.who('approver-1'), id);
    expect(view?.args).toEqual({ target: 'prod\u202Eved' });
    expect(view?.hidden).toEqual(['U+202E at args.target:4']);
    expect(view?.argsDisplay).toEqual({ target: 'prod\\u{202E}ved' });
  });

  it('unknown ids are undefined, and reading records nothing in the trail', async () => {
    const h = setup();
    await requested(h, 'worker-1', 'prod');
    const before = h.audit.events.length;
    expect(await h.gateway.getApproval(h.who('approver-1'), 'no-such-id')).toBeUndefined();
    expect(h.audit.events.length).toBe(before);
  });
});

describe('approvals: get across visibility boundaries', () => {
  it("another tenant's id is undefined, to its approvers and operators too", async () => {
    const h = setup();
    const acme = await requested(h, 'worker-1', 'prod');
    const globex = await requested(h, 'worker-g', 'prod');
    expect(await h.gateway.getApproval(h.who('boss-g'), acme)).toBeUndefined();
    expect(await h.gateway.getApproval(h.who('worker-g'), acme)).toBeUndefined();
    expect(await h.gateway.getApproval(h.who('boss'), globex)).toBeUndefined();
    expect(await h.gateway.getApproval(h.who('approver-1'), globex)).toBeUndefined();
    expect(await h.gateway.getApproval(h.who('boss-g'), globex)).toMatchObject({ tenant: 'globex', requester: 'worker-g' });
  });

  it("a requester does not see another requester's approval, the same as an unknown id", async () => {
    const h = setup();
    const id = await requested(h, 'worker-1', 'prod');
    expect(await h.gateway.getApproval(h.who('worker-2'), id)).toBeUndefined();
    expect(await h.gateway.getApproval(h.who('planner-1'), id)).toBeUndefined();
  });

  it('a record the store returns from another tenant is still not shown (the second lock)', async () => {
    const h = setup();
    const id = await requested(h, 'worker-g', 'prod');
    const leaky = h.approvals.get.bind(h.approvals);
    // A store whose tenant scoping is broken: it answers any tenant with the record.
    h.approvals.get = async (_tenant, wanted) => leaky('globex', wanted);
    expect(await h.gateway.getApproval(h.who('boss'), id)).toBeUndefined();
  });
});

describe('approvals: get with hostile ids', () => {
  it('ids shaped as path traversal, encoded slashes, markup or NUL are just unknown ids', async () => {
    const h = setup();
    const id = await requested(h, 'worker-1', 'prod');
    for (const hostile of ['../' + id, `${id}/../${id}`, '..%2F' + id, `%2e%2e%2f${id}`, `${id}\u0000`, `<script>alert(1)</script>`, ` ${id}`, id.toUpperCase()]) {
      expect(await h.gateway.getApproval(h.who('approver-1'), hostile)).toBeUndefined();
    }
  });

  it('refuses an empty, oversized or non-string id with INVALID before the store is asked', async () => {
    const h = setup();
    let asked = 0;
    const real = h.approvals.get.bind(h.approvals);
    h.approvals.get = async (tenant, id) => {
      asked++;
      return real(tenant, id);
    };
    for (const bad of ['', 'x'.repeat(129), 42, null, undefined, { id: 'x' }, ['x']]) {
      const error = await thrown(h.gateway.getApproval(h.who('approver-1'), bad as never));
      expect(error.code).toBe('INVALID');
      expect(error.message).toBe('id must be a string of 1 to 128 characters');
    }
    expect(asked).toBe(0);
    expect(await h.gateway.getApproval(h.who('approver-1'), 'x'.repeat(128))).toBeUndefined();
    expect(asked).toBe(1);
  });

  it('fails closed as UNAVAILABLE when the store throws, without its message', async () => {
    const h = setup();
    const id = await requested(h, 'worker-1', 'prod');
    h.approvals.get = async () => {
      throw new Error('connect ECONNREFUSED /var/lib/toolgate/approvals.db');
    };
    const error = await thrown(h.gateway.getApproval(h.who('approver-1'), id));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).not.toContain('/var/lib');
  });
});
