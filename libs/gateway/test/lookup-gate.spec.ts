import { describe, expect, it } from 'vitest';
import { denialOf, harness, searchTool, testTool } from './harness.js';

describe('gate 1: lookup', () => {
  it('refuses an unknown tool, suggesting close names the caller may use', async () => {
    const h = harness({ tools: [searchTool(), testTool({ name: 'calculator' })] });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'serch', args: {} }));
    expect(denial).toMatchObject({ gate: 'lookup', code: 'TOOL_NOT_FOUND', message: "There is no tool named 'serch'." });
    expect(denial.hint).toBe('Did you mean: search?');
    expect(denial.data).toEqual({ suggestions: ['search'] });
  });

  it('suggests nothing it would not let the caller use', async () => {
    const h = harness({ tools: [testTool({ name: 'bash' }), testTool({ name: 'send_message' })] });
    const denial = denialOf(await h.gateway.invoke(h.who('planner-1'), { tool: 'bsh', args: {} }));
    expect(denial.code).toBe('TOOL_NOT_FOUND');
    expect(denial.hint).toBe('Call tools.list to see the tools you may use.');
  });

  it('refuses a version other than the pinned one, naming the pinned version', async () => {
    const tool = searchTool();
    const h = harness({ tools: [tool] });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'search', version: '2.0.0', args: { query: 'x' } }));
    expect(denial).toMatchObject({ gate: 'lookup', code: 'VERSION_MISMATCH', data: { version: '1.0.0' } });
    expect(denial.hint).toContain("version '1.0.0'");
    expect(tool.calls).toHaveLength(0);
  });

  it('accepts the pinned version and a call without a version', async () => {
    const h = harness({ tools: [searchTool()] });
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'search', version: '1.0.0', args: { query: 'x' } })).ok).toBe(true);
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'x' } })).ok).toBe(true);
  });

  it('audits the refusal with its gate and code and the name as sent', async () => {
    const h = harness({ tools: [] });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'nope', args: { secret: 'hunter2' } });
    expect(h.audit.events).toHaveLength(1);
    expect(h.audit.events[0]).toMatchObject({ event: 'denied', gate: 'lookup', code: 'TOOL_NOT_FOUND', tool: 'nope', principal: 'worker-1', tenant: 'acme' });
    expect(JSON.stringify(h.audit.events)).not.toContain('hunter2');
  });
});
