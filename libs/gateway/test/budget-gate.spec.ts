import { describe, expect, it } from 'vitest';
import { denialOf, harness, searchTool } from './harness.js';

describe('gate 3: budget', () => {
  it('charges once per executed call and refuses when the window is used up, saying when it resets', async () => {
    const tool = searchTool();
    const h = harness({ tools: [tool] });
    const thrifty = h.who('thrifty');
    expect((await h.gateway.invoke(thrifty, { tool: 'search', args: { query: 'a' } })).ok).toBe(true);
    expect((await h.gateway.invoke(thrifty, { tool: 'search', args: { query: 'b' } })).ok).toBe(true);
    const denial = denialOf(await h.gateway.invoke(thrifty, { tool: 'search', args: { query: 'c' } }));
    expect(denial).toMatchObject({ gate: 'budget', code: 'BUDGET_EXHAUSTED', message: 'Your budget of 2 calls per 60 s is used up.' });
    expect(denial.hint).toBe('It resets at 2030-01-01T12:01:00.000Z.');
    expect(tool.calls).toHaveLength(2);

    h.clock.advance(60_000);
    expect((await h.gateway.invoke(thrifty, { tool: 'search', args: { query: 'd' } })).ok).toBe(true);
  });

  it('does not charge refused calls', async () => {
    const h = harness({ tools: [searchTool()] });
    const thrifty = h.who('thrifty');
    for (let i = 0; i < 5; i++) await h.gateway.invoke(thrifty, { tool: 'search', args: {} });
    expect(await h.budgets.remaining('acme', 'thrifty', { calls: 2, windowSeconds: 60 }, h.clock.now())).toBe(2);
  });

  it('treats a principal without a budget policy as unlimited', async () => {
    const h = harness({ tools: [searchTool()] });
    for (let i = 0; i < 20; i++) expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'x' } })).ok).toBe(true);
  });

  it('fails closed when the budget store throws, without running the tool', async () => {
    const tool = searchTool();
    const h = harness({ tools: [tool] });
    h.budgets.remaining = async () => {
      throw new Error('connection refused to 10.0.0.5:5432');
    };
    const denial = denialOf(await h.gateway.invoke(h.who('thrifty'), { tool: 'search', args: { query: 'x' } }));
    expect(denial).toMatchObject({ gate: 'budget', code: 'STATE_UNAVAILABLE' });
    expect(denial.message).not.toContain('10.0.0.5');
    expect(tool.calls).toHaveLength(0);
    expect(h.audit.kinds()).toEqual(['denied:STATE_UNAVAILABLE']);
  });
});
