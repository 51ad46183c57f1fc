import { describe, expect, it } from 'vitest';
import { GatewayError } from '../src/index.js';
import { harness, searchTool, testTool } from './harness.js';

describe('whoami', () => {
  it('says who the caller is, its standing grants without repeats, and how many tools it may call', async () => {
    const h = harness({
      tools: [searchTool(), testTool({ name: 'calc' })],
      roles: {
        worker: { tools: ['search'], grants: [{ type: 'network', scope: 'example.com' }] },
        searcher: { tools: ['search', 'calc'], grants: [{ type: 'network', scope: 'example.com' }, { type: 'memory', scope: '*' }] },
      },
      tenants: { acme: { tools: ['*'], selfApproval: false, grants: [{ type: 'exec', scope: 'git' }] }, globex: { tools: ['calc'], selfApproval: false, grants: [] } },
      principals: [{ id: 'both', tenant: 'acme', roles: ['worker', 'searcher', 'approver'] }],
    });
    const me = await h.gateway.whoami(h.who('both'));
    expect(me).toEqual({
      principal: { id: 'both', tenant: 'acme', roles: ['worker', 'searcher', 'approver'] },
      grants: [
        { type: 'network', scope: 'example.com' },
        { type: 'memory', scope: '*' },
        { type: 'exec', scope: 'git' },
      ],
      visibleTools: 2,
    });
    // The tenant narrows what the roles allow; an unknown tenant allows nothing.
    expect((await h.gateway.whoami(h.who('worker-g'))).visibleTools).toBe(0);
    expect((await h.gateway.whoami(h.who('lost'))).visibleTools).toBe(0);
  });

  it('reports the budget left and when the window ends, and spends nothing', async () => {
    const h = harness({ tools: [searchTool()] });
    const thrifty = h.who('thrifty');
    expect((await h.gateway.whoami(thrifty)).budget).toEqual({ calls: 2, windowSeconds: 60, remaining: 2, resetsAt: '2030-01-01T12:01:00.000Z' });
    await h.gateway.invoke(thrifty, { tool: 'search', args: { query: 'a' } });
    const audited = h.audit.records.length;
    expect((await h.gateway.whoami(thrifty)).budget?.remaining).toBe(1);
    expect((await h.gateway.whoami(thrifty)).budget?.remaining).toBe(1);
    h.clock.advance(60_000);
    expect((await h.gateway.whoami(thrifty)).budget).toMatchObject({ remaining: 2, resetsAt: '2030-01-01T12:02:00.000Z' });
    expect((await h.gateway.whoami(h.who('worker-1'))).budget).toBeUndefined();
    expect(h.audit.records).toHaveLength(audited);
  });

  it('is UNAVAILABLE, without the store\'s message, when the budget store fails', async () => {
    const h = harness();
    h.budgets.remaining = async () => {
      throw new Error('connection refused to 10.0.0.5:5432');
    };
    const failed = await h.gateway.whoami(h.who('thrifty')).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(GatewayError);
    expect((failed as GatewayError).code).toBe('UNAVAILABLE');
    expect((failed as Error).message).not.toContain('10.0.0.5');
  });
});
