import { describe, expect, it } from 'vitest';
import { denialOf, harness, testTool } from './harness.js';

function writer() {
  return testTool({
    name: 'file_write',
    permissions: [
      { type: 'filesystem', scope: 'workspace' },
      { type: 'env', scope: 'HOME' },
    ],
  });
}

describe('gate 5: permissions', () => {
  it('refuses when a permission is not granted, naming each missing one', async () => {
    const tool = writer();
    const h = harness({ tools: [tool] });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'file_write', args: {}, grants: [{ type: 'filesystem', scope: 'workspace' }] }));
    expect(denial).toMatchObject({ gate: 'permissions', code: 'PERMISSION_NOT_GRANTED', data: { missing: [{ type: 'env', scope: 'HOME' }] } });
    expect(denial.message).toContain('env:HOME');
    expect(denial.message).not.toContain('filesystem:workspace');
    expect(tool.calls).toHaveLength(0);
  });

  it('matches the exact scope or a `*` grant of the same type, never another type', async () => {
    const h = harness({ tools: [writer()] });
    const ok = await h.gateway.invoke(h.who('worker-1'), {
      tool: 'file_write',
      args: {},
      grants: [
        { type: 'filesystem', scope: '*' },
        { type: 'env', scope: 'HOME' },
      ],
    });
    expect(ok.ok).toBe(true);
    const wrongScope = await h.gateway.invoke(h.who('worker-1'), {
      tool: 'file_write',
      args: {},
      grants: [
        { type: 'filesystem', scope: 'read' },
        { type: 'network', scope: '*' },
        { type: 'env', scope: 'HOME' },
      ],
    });
    expect(denialOf(wrongScope).data).toEqual({ missing: [{ type: 'filesystem', scope: 'workspace' }] });
  });

  it('adds the tenant standing grants to the call grants', async () => {
    const h = harness({
      tools: [writer()],
      tenants: { acme: { tools: ['*'], selfApproval: false, grants: [{ type: 'filesystem', scope: 'workspace' }] } },
    });
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'file_write', args: {}, grants: [{ type: 'env', scope: 'HOME' }] })).ok).toBe(true);
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'file_write', args: {} })).code).toBe('PERMISSION_NOT_GRANTED');
  });

  it('ignores malformed grants', async () => {
    const h = harness({ tools: [writer()] });
    const grants = [null, 'filesystem', { type: 'env' }, { scope: '*' }] as never;
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'file_write', args: {}, grants })).code).toBe('PERMISSION_NOT_GRANTED');
  });
});
