import type { ToolDefinition } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { denialOf, harness, searchTool, testTool } from './harness.js';

function team(): ToolDefinition[] {
  return ['send_message', 'read_messages', 'memory_write', 'memory_query', 'bash'].map((name) => testTool({ name }));
}

describe('gate 2: allow', () => {
  it('refuses a tool outside the principal roles with the exact delegation hint', async () => {
    const h = harness({ tools: team() });
    const denial = denialOf(await h.gateway.invoke(h.who('planner-1'), { tool: 'bash', args: {} }));
    expect(denial.gate).toBe('allow');
    expect(denial.code).toBe('TOOL_NOT_ALLOWED');
    // `thrifty` and `boss` also hold it through the worker role; everyone but the caller is listed.
    expect(denial.hint).toBe(
      "You (planner-1) cannot use 'bash'. Your tools: send_message, read_messages, memory_write, memory_query. To use 'bash', delegate to: worker-1, worker-2, boss, thrifty.",
    );
    expect(denial.data).toEqual({
      tools: ['send_message', 'read_messages', 'memory_write', 'memory_query'],
      delegates: ['worker-1', 'worker-2', 'boss', 'thrifty'],
    });
  });

  it('says so when no principal of the tenant holds the tool', async () => {
    const h = harness({
      tools: team(),
      tenants: { acme: { tools: ['send_message', 'read_messages', 'memory_write', 'memory_query'], selfApproval: false, grants: [] } },
    });
    const denial = denialOf(await h.gateway.invoke(h.who('planner-1'), { tool: 'bash', args: {} }));
    expect(denial.hint).toBe(
      "You (planner-1) cannot use 'bash'. Your tools: send_message, read_messages, memory_write, memory_query. No principal of your tenant holds it.",
    );
  });

  it('never names principals of another tenant as delegates', async () => {
    const h = harness({ tools: team() });
    const denial = denialOf(await h.gateway.invoke(h.who('planner-1'), { tool: 'bash', args: {} }));
    expect(denial.hint).not.toContain('worker-g');
    expect(denial.hint).not.toContain('boss-g');
  });

  it('grants nothing through an unknown role', async () => {
    const h = harness({ tools: team() });
    const denial = denialOf(await h.gateway.invoke(h.who('ghost'), { tool: 'send_message', args: {} }));
    expect(denial.code).toBe('TOOL_NOT_ALLOWED');
    expect(denial.hint).toContain('Your tools: none.');
    expect(h.gateway.listTools(h.who('ghost'))).toEqual([]);
  });

  it('allows nothing in an unknown tenant', async () => {
    const h = harness({ tools: team() });
    const denial = denialOf(await h.gateway.invoke(h.who('lost'), { tool: 'bash', args: {} }));
    expect(denial.code).toBe('TOOL_NOT_ALLOWED');
    expect(denial.message).toContain("tenant 'nowhere' is not configured");
    expect(h.gateway.listTools(h.who('lost'))).toEqual([]);
  });

  it('intersects the tenant allowlist with the roles: a `*` role gets only what the tenant allows', async () => {
    const tools = [...team(), searchTool()];
    const h = harness({ tools, tenants: { acme: { tools: ['search', 'send_message'], selfApproval: false, grants: [] } } });
    const worker = h.who('worker-1');
    expect(h.gateway.listTools(worker).map((m) => m.name)).toEqual(['send_message', 'search']);
    expect(denialOf(await h.gateway.invoke(worker, { tool: 'bash', args: {} })).code).toBe('TOOL_NOT_ALLOWED');
    expect((await h.gateway.invoke(worker, { tool: 'search', args: { query: 'q' } })).ok).toBe(true);
  });

  it('lists exactly the tools of the union of the principal roles', () => {
    const h = harness({ tools: [...team(), searchTool(), testTool({ name: 'calculator' })] });
    expect(h.gateway.listTools(h.who('planner-1')).map((m) => m.name)).toEqual(['send_message', 'read_messages', 'memory_write', 'memory_query']);
    expect(h.gateway.listTools(h.who('approver-2')).map((m) => m.name)).toEqual(['search', 'calculator']);
    expect(h.gateway.listTools(h.who('approver-1'))).toEqual([]);
    expect(h.gateway.listTools(h.who('worker-1'))).toHaveLength(7);
  });

  it('does not let the approver or operator built-in roles grant tools', async () => {
    const h = harness({ tools: team() });
    expect(denialOf(await h.gateway.invoke(h.who('approver-1'), { tool: 'bash', args: {} })).code).toBe('TOOL_NOT_ALLOWED');
  });
});
