import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import type { TenantWorkspaces } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { denialOf, harness, testTool } from './harness.js';

/**
 * The real fs adapter, with a fault planted in front of it on demand: the gateway must fail
 * closed whatever the port does, and use the sync fast path once a workspace is known.
 */
class FaultyWorkspaces implements TenantWorkspaces {
  readonly inner = new FsTenantWorkspaces(mkdtempSync(join(tmpdir(), 'toolgate-gw-port-')));
  prepared = 0;
  constructor(private readonly fault: 'none' | 'prepare rejects' | 'created throws' | 'prepare throws synchronously' = 'none') {}

  created(tenant: string): string | undefined {
    if (this.fault === 'created throws') throw new Error('EIO: /srv/secret/workspaces is gone');
    return this.inner.created(tenant);
  }

  prepare(tenant: string): Promise<string> {
    this.prepared++;
    if (this.fault === 'prepare throws synchronously') throw new Error('EACCES: /srv/secret/workspaces');
    if (this.fault === 'prepare rejects') return Promise.reject(new Error('ENOSPC: no space left on /srv/secret/workspaces'));
    return this.inner.prepare(tenant);
  }
}

describe('tenant workspaces through the port', () => {
  for (const fault of ['prepare rejects', 'prepare throws synchronously', 'created throws'] as const) {
    it(`fails closed when ${fault}: the tool does not run, and the port's text (a host path) is not shown`, async () => {
      const tool = testTool({ name: 'where' });
      const h = harness({ tools: [tool], deps: { workspaces: new FaultyWorkspaces(fault) } });
      const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'where', args: {} });
      const denial = denialOf(result);
      expect(denial).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED' });
      expect(JSON.stringify(result)).not.toContain('/srv/secret');
      expect(tool.calls).toHaveLength(0);
      // The refusal is audited: a call that was authorized but not run shows it.
      expect(h.audit.kinds()).toEqual(['authorized', 'denied:EXECUTION_FAILED']);
    });
  }

  it('prepares a workspace once and then takes the sync fast path for the same tenant', async () => {
    const workspaces = new FaultyWorkspaces();
    const tool = testTool({ name: 'where' }, (_args, ctx) => ({ root: ctx.workspaceRoot }));
    const h = harness({ tools: [tool], deps: { workspaces } });
    const first = await h.gateway.invoke(h.who('worker-1'), { tool: 'where', args: {} });
    const second = await h.gateway.invoke(h.who('worker-1'), { tool: 'where', args: {} });
    expect(first).toMatchObject({ ok: true });
    expect(second).toMatchObject({ ok: true, output: (first as { output: unknown }).output });
    expect(workspaces.prepared).toBe(1);
  });

  it('keeps one tenant failing from stopping another: each tenant is prepared on its own', async () => {
    const workspaces = new FaultyWorkspaces();
    const tool = testTool({ name: 'where' }, (_args, ctx) => ({ root: ctx.workspaceRoot }));
    const h = harness({
      tools: [tool],
      tenants: { acme: { tools: ['*'], selfApproval: false, grants: [] }, '.hidden': { tools: ['*'], selfApproval: false, grants: [] } },
      deps: { workspaces },
    });
    const refused = denialOf(await h.gateway.invoke({ id: 'x', tenant: '.hidden', roles: ['worker'] }, { tool: 'where', args: {} }));
    expect(refused).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED' });
    expect(await h.gateway.invoke(h.who('worker-1'), { tool: 'where', args: {} })).toMatchObject({ ok: true });
  });
});
