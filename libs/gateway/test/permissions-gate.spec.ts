import type { InvokeRequest, TenantPolicy } from '@toolgate/contracts';
import { timeLessCpuWait } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { calculatorTool } from '@toolgate/tool-calculator';
import { denialOf, harness, ROLES, testTool, type HarnessOptions } from './harness.js';

function writer() {
  return testTool({
    name: 'file_write',
    permissions: [
      { type: 'filesystem', scope: 'workspace' },
      { type: 'env', scope: 'HOME' },
    ],
  });
}

/** Workers holding standing grants of the types `file_write` needs, so calls can narrow them. */
const broadWorkers = {
  ...ROLES,
  worker: {
    tools: ['*'],
    grants: [
      { type: 'filesystem', scope: '*' },
      { type: 'env', scope: '*' },
      { type: 'network', scope: '*' },
    ],
  },
};

describe('gate 5: permissions', () => {
  it('refuses when a permission is not granted, naming each missing one', async () => {
    const tool = writer();
    const h = harness({ tools: [tool], roles: broadWorkers });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'file_write', args: {}, grants: [{ type: 'filesystem', scope: 'workspace' }] }));
    expect(denial).toMatchObject({ gate: 'permissions', code: 'PERMISSION_NOT_GRANTED', data: { missing: [{ type: 'env', scope: 'HOME' }] } });
    expect(denial.message).toContain('env:HOME');
    expect(denial.message).not.toContain('filesystem:workspace');
    expect(tool.calls).toHaveLength(0);
  });

  it('matches the exact scope or a `*` grant of the same type, never another type', async () => {
    const h = harness({ tools: [writer()], roles: broadWorkers });
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

  // Before ADR 0022 a call's grants were added to the tenant's; now they can only narrow them.
  it("counts the tenant's standing grants for every principal of the tenant, and a call's grants narrow them too", async () => {
    const tenants = (grants: TenantPolicy['grants']) => ({ acme: { tools: ['*'], selfApproval: false, grants } });
    const h = harness({ tools: [writer()], tenants: tenants([{ type: 'filesystem', scope: 'workspace' }]) });
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'file_write', args: {}, grants: [{ type: 'env', scope: 'HOME' }] })).code).toBe('PERMISSION_NOT_GRANTED');
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'file_write', args: {} })).code).toBe('PERMISSION_NOT_GRANTED');

    const both = harness({ tools: [writer()], tenants: tenants([{ type: 'filesystem', scope: 'workspace' }, { type: 'env', scope: 'HOME' }]) });
    expect((await both.gateway.invoke(both.who('worker-1'), { tool: 'file_write', args: {} })).ok).toBe(true);
    const narrowed = denialOf(await both.gateway.invoke(both.who('worker-1'), { tool: 'file_write', args: {}, grants: [{ type: 'env', scope: 'HOME' }] }));
    expect(narrowed.data).toEqual({ missing: [{ type: 'filesystem', scope: 'workspace' }] });
  });

  it('refuses malformed grants', async () => {
    const h = harness({ tools: [writer()] });
    const grants = [null, 'filesystem', { type: 'env' }, { scope: '*' }] as never;
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'file_write', args: {}, grants })).code).toBe('PERMISSION_NOT_GRANTED');
  });
});

/** A low-risk tool that needs exec:* (as bash does), so only the permissions gate stands in the way. */
const shell = () => testTool({ name: 'shell', permissions: [{ type: 'exec', scope: '*' }] });
/** A tool that needs the network to one host. */
const api = () => testTool({ name: 'api_call', permissions: [{ type: 'network', scope: 'api.example.com' }] });
/** A high-risk tool that needs exec:*, for approvals. */
const deploy = () => testTool({ name: 'deploy', risk: 'high', permissions: [{ type: 'exec', scope: '*' }] });

const exec = { type: 'exec', scope: '*' };

/** Roles with standing grants, principals holding them, and one tenant that grants exec:* to all its principals. */
function grantsHarness(options: HarnessOptions = {}) {
  const tools = [shell(), api(), deploy(), calculatorTool];
  return {
    tools,
    ...harness({
      tools,
      roles: {
        ...ROLES,
        runner: { tools: ['*'], grants: [exec] },
        api: { tools: ['*'], grants: [{ type: 'network', scope: 'api.example.com' }] },
        netall: { tools: ['*'], grants: [{ type: 'network', scope: '*' }] },
        // The map may name a built-in role; its grants must count for nothing.
        approver: { tools: [], grants: [exec] },
        operator: { tools: [], grants: [exec] },
      },
      principals: [
        { id: 'runner-g', tenant: 'globex', roles: ['runner'] },
        { id: 'api-1', tenant: 'acme', roles: ['api'] },
        { id: 'net-1', tenant: 'acme', roles: ['netall'] },
        { id: 'mixed', tenant: 'acme', roles: ['worker', 'no-such-role', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'] },
      ],
      tenants: {
        acme: { tools: ['*'], selfApproval: true, grants: [] },
        globex: { tools: ['*'], selfApproval: false, grants: [] },
        initech: { tools: ['*'], selfApproval: false, grants: [exec] },
      },
      ...options,
    }),
  };
}

type H = ReturnType<typeof grantsHarness>;

/** Asserts a refusal at gate 5 that ran nothing and left only its own denial in the audit. */
async function expectRefused(h: H, who: string, request: InvokeRequest, message: RegExp) {
  const before = h.audit.events.length;
  const ran = () => h.tools.map((t) => ('calls' in t ? (t.calls as unknown[]).length : 0));
  const runsBefore = ran();
  const denial = denialOf(await h.gateway.invoke(h.who(who), request));
  // The label is the request's position, not its grants: reading hostile grants could run their getters.
  expect(denial, `${who} #${h.audit.events.length}`).toMatchObject({ gate: 'permissions', code: 'PERMISSION_NOT_GRANTED' });
  expect(denial.message).toMatch(message);
  expect(ran()).toEqual(runsBefore);
  expect(h.audit.events.slice(before).map((e) => `${e.event}:${e.gate}:${e.code}`)).toEqual(['denied:permissions:PERMISSION_NOT_GRANTED']);
  return denial;
}

describe('self-issued grants', () => {
  it('refuses exec:* sent by a principal that holds no standing grant, in every spelling', async () => {
    const h = grantsHarness();
    const spellings: unknown[][] = [
      [exec],
      [exec, exec],
      [{ scope: '*', type: 'exec' }],
      [exec, { type: 'network', scope: '*' }],
      [{ type: 'exec', scope: 'mcp:files' }],
      [{ type: 'exec', scope: 'bash' }],
    ];
    for (const grants of spellings) {
      const denial = await expectRefused(h, 'worker-1', { tool: 'shell', args: {}, grants: grants as never }, /can only narrow the standing grants.*never widen/);
      expect(denial.data?.['notHeld']).toBeDefined();
    }
    // Self-approval does not change it either.
    await expectRefused(h, 'boss', { tool: 'deploy', args: {}, grants: [exec], selfApprove: true }, /never widen/);
  });

  it('refuses a scope wider than the standing one, or merely beside it', async () => {
    const h = grantsHarness();
    for (const scope of ['*', '*.example.com', 'API.EXAMPLE.COM', 'api.example.com.', 'api.example.com ', ' api.example.com', 'example.com', 'api.example.com:443', 'api.example.com/*', 'api.example.co']) {
      await expectRefused(h, 'api-1', { tool: 'api_call', args: {}, grants: [{ type: 'network', scope }] }, /never widen/);
    }
    expect((await h.gateway.invoke(h.who('api-1'), { tool: 'api_call', args: {} })).ok).toBe(true);
    expect((await h.gateway.invoke(h.who('api-1'), { tool: 'api_call', args: {}, grants: [{ type: 'network', scope: 'api.example.com' }] })).ok).toBe(true);
  });

  it('refuses a grant of another type than the standing one', async () => {
    const h = grantsHarness();
    for (const type of ['exec', 'Network', 'NETWORK', 'network ', 'network\u0000', 'filesystem', '*', 'net']) {
      await expectRefused(h, 'net-1', { tool: 'shell', args: {}, grants: [{ type, scope: '*' }] }, /never widen/);
    }
    await expectRefused(h, 'net-1', { tool: 'shell', args: {} }, /holds no standing grant for: exec:\*/);
  });

  it('refuses malformed grants rather than ignoring them, even where the standing grants would cover the tool', async () => {
    const h = grantsHarness();
    let getterReads = 0;
    const getter = {
      get type() {
        getterReads++;
        return getterReads === 1 ? 'network' : 'exec';
      },
      scope: '*',
    };
    const symbolKeyed = { type: 'network', scope: '*', [Symbol('extra')]: true };
    const hidden = Object.defineProperty({ type: 'network', scope: '*' }, 'extra', { value: 1, enumerable: false });
    const malformed: unknown[] = [
      'all',
      null,
      {},
      { type: 'network', scope: '*' },
      [null],
      ['network:*'],
      [['network', '*']],
      [{ type: 'network' }],
      [{ scope: '*' }],
      [{ type: 'network', scope: '*', extra: true }],
      [{ type: 1, scope: '*' }],
      [{ type: 'network', scope: ['*'] }],
      [{ type: 'network', scope: '' }],
      [{ type: '', scope: '*' }],
      [{ type: 'network', scope: 'x'.repeat(257) }],
      [{ type: 'network', scope: '*' }, null],
      [Object.create({ type: 'network', scope: '*' })],
      [getter],
      [symbolKeyed],
      [hidden],
      [new (class Grant {
        type = 'network';
        scope = '*';
      })()],
    ];
    for (const grants of malformed) {
      await expectRefused(h, 'net-1', { tool: 'api_call', args: {}, grants: grants as never }, /grants are malformed/);
    }
    expect(getterReads).toBe(0);
    // Without grants the same principal may call the tool: the refusals were about the grants.
    expect((await h.gateway.invoke(h.who('net-1'), { tool: 'api_call', args: {} })).ok).toBe(true);
  });

  it('is not fooled by __proto__ or constructor, in grants or in role names', async () => {
    const h = grantsHarness();
    for (const text of [
      '[{"type":"network","scope":"*","__proto__":{"type":"exec","scope":"*"}}]',
      '[{"__proto__":{"type":"exec","scope":"*"}}]',
      '[{"type":"exec","__proto__":{"scope":"*"}}]',
      '[{"constructor":{"type":"exec","scope":"*"},"type":"exec","scope":"*"}]',
    ]) {
      await expectRefused(h, 'net-1', { tool: 'shell', args: {}, grants: JSON.parse(text) }, /grants are malformed/);
    }
    for (const type of ['__proto__', 'constructor', 'prototype', 'hasOwnProperty']) {
      await expectRefused(h, 'net-1', { tool: 'shell', args: {}, grants: [{ type, scope: '*' }] }, /never widen/);
    }
    // Roles named after Object.prototype members are unknown roles: they hold nothing.
    const denial = await expectRefused(h, 'mixed', { tool: 'shell', args: {} }, /holds no standing grant/);
    expect(denial.hint).toContain("this principal's roles: worker, no-such-role, __proto__, constructor");
    expect(({} as Record<string, unknown>)['type']).toBeUndefined();
    expect(({} as Record<string, unknown>)['scope']).toBeUndefined();
  });

  it('refuses more than 32 grants at once, duplicates or not, without scanning a huge list', async () => {
    const h = grantsHarness();
    const net = { type: 'network', scope: '*' };
    expect((await h.gateway.invoke(h.who('net-1'), { tool: 'api_call', args: {}, grants: Array.from({ length: 32 }, () => net) })).ok).toBe(true);
    await expectRefused(h, 'net-1', { tool: 'api_call', args: {}, grants: Array.from({ length: 33 }, () => net) }, /at most 32 grants, not 33/);

    const huge = Array.from({ length: 1_000_000 }, () => net);
    // Warm up the other caller's tool (its schemas compile on first use), then race the two.
    expect((await h.gateway.invoke(h.who('worker-2'), { tool: 'calculator', args: { expression: '1' } })).ok).toBe(true);
    const {
      value: [refused, other],
      ms,
    } = await timeLessCpuWait(() =>
      Promise.all([
        h.gateway.invoke(h.who('net-1'), { tool: 'api_call', args: {}, grants: huge }),
        h.gateway.invoke(h.who('worker-2'), { tool: 'calculator', args: { expression: '2+3*4' } }),
      ]),
    );
    expect(ms).toBeLessThan(100);
    expect(denialOf(refused).message).toContain('at most 32 grants, not 1000000');
    expect(other).toMatchObject({ ok: true, output: { result: 14 } });
  });

  it('gives the same answer on explain, which runs and records nothing', async () => {
    const h = grantsHarness();
    const widened = await h.gateway.explain(h.who('worker-1'), { tool: 'shell', args: {}, grants: [exec] });
    expect(widened).toMatchObject({ wouldRun: false, passed: ['authenticate', 'lookup', 'allow', 'budget', 'size'], denial: { gate: 'permissions', code: 'PERMISSION_NOT_GRANTED' } });
    expect(widened.denial?.message).toMatch(/never widen/);
    const invoked = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'shell', args: {}, grants: [exec] }));
    expect(widened.denial).toEqual(invoked);

    const malformed = await h.gateway.explain(h.who('net-1'), { tool: 'api_call', args: {}, grants: [{ type: 'network', scope: '*', x: 1 }] as never });
    expect(malformed.denial?.message).toMatch(/malformed/);
    const narrowedAway = await h.gateway.explain(h.who('net-1'), { tool: 'api_call', args: {}, grants: [{ type: 'network', scope: 'api.other.test' }] });
    expect(narrowedAway).toMatchObject({ wouldRun: false, denial: { code: 'PERMISSION_NOT_GRANTED', data: { missing: [{ type: 'network', scope: 'api.example.com' }] } } });
    expect((await h.gateway.explain(h.who('net-1'), { tool: 'api_call', args: {}, grants: [{ type: 'network', scope: 'api.example.com' }] })).wouldRun).toBe(true);
    expect(h.audit.events.filter((e) => e.event !== 'denied')).toEqual([]);
  });

  it('does not let an approval, or grants sent with its request, stand in for a standing grant', async () => {
    const h = grantsHarness();
    // Approval requests do not pass gate 5, so worker-1 can get one; it must not help.
    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args: {}, grants: [exec] } as never);
    if (!requested.ok) throw new Error(`refused: ${requested.denial.code}`);
    expect(JSON.stringify(requested.approval)).not.toContain('exec');
    await h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });

    const approvalId = requested.approval.id;
    await expectRefused(h, 'worker-1', { tool: 'deploy', args: {}, approvalId }, /holds no standing grant for: exec:\*/);
    await expectRefused(h, 'worker-1', { tool: 'deploy', args: {}, approvalId, grants: [exec] }, /never widen/);
    const explained = await h.gateway.explain(h.who('worker-1'), { tool: 'deploy', args: {}, approvalId, grants: [exec] });
    expect(explained.denial?.code).toBe('PERMISSION_NOT_GRANTED');
    // Refused before the commit point, so the approval is still there to use.
    expect((await h.approvals.get('acme', approvalId))?.status).toBe('approved');
  });

  it('gives unknown roles and the built-in approver and operator roles no grants, whatever the roles map says', async () => {
    const h = grantsHarness();
    // boss holds worker, approver and operator; the map gives approver and operator exec:*.
    const denial = await expectRefused(h, 'boss', { tool: 'shell', args: {} }, /holds no standing grant for: exec:\*/);
    expect(denial.hint).toContain('roles.worker.grants');
    expect(denial.hint).not.toContain('roles.approver');
    await expectRefused(h, 'boss', { tool: 'shell', args: {}, grants: [exec] }, /never widen/);
    await expectRefused(h, 'mixed', { tool: 'shell', args: {}, grants: [exec] }, /never widen/);
  });

  it("never lends one tenant's role or tenant grants to another tenant's principal", async () => {
    const h = grantsHarness({
      principals: [
        { id: 'runner-g', tenant: 'globex', roles: ['runner'] },
        { id: 'worker-i', tenant: 'initech', roles: ['worker'] },
      ],
    });
    // runner-g (globex) holds exec:* through its role, initech grants it to every principal.
    expect((await h.gateway.invoke(h.who('runner-g'), { tool: 'shell', args: {} })).ok).toBe(true);
    expect((await h.gateway.invoke(h.who('worker-i'), { tool: 'shell', args: {}, grants: [exec] })).ok).toBe(true);
    // Others with the same tools but neither the role nor the tenant get nothing from them.
    await expectRefused(h, 'worker-1', { tool: 'shell', args: {}, grants: [exec] }, /never widen/);
    await expectRefused(h, 'worker-g', { tool: 'shell', args: {}, grants: [exec] }, /never widen/);
    await expectRefused(h, 'worker-2', { tool: 'shell', args: {} }, /holds no standing grant/);
  });
});

describe('narrowing standing grants', () => {
  it('refuses a call that narrows its standing network:* to a scope the tool does not need, and runs one narrowed to the needed scope', async () => {
    const h = grantsHarness();
    const denial = await expectRefused(h, 'net-1', { tool: 'api_call', args: {}, grants: [{ type: 'network', scope: 'api.other.test' }] }, /this call's grants do not cover: network:api\.example\.com/);
    expect(denial.hint).toContain("this call's grants narrowed them away");
    expect(denial.data).toEqual({ missing: [{ type: 'network', scope: 'api.example.com' }] });
    await expectRefused(h, 'net-1', { tool: 'api_call', args: {}, grants: [] }, /do not cover/);

    const ok = await h.gateway.invoke(h.who('net-1'), { tool: 'api_call', args: {}, grants: [{ type: 'network', scope: 'api.example.com' }] });
    expect(ok.ok).toBe(true);
  });

  it('audits which standing grants covered the permissions on the authorized and outcome records', async () => {
    const h = grantsHarness();
    await h.gateway.invoke(h.who('net-1'), { tool: 'api_call', args: {}, grants: [{ type: 'network', scope: 'api.example.com' }] });
    await h.gateway.invoke(h.who('api-1'), { tool: 'api_call', args: {} });
    await h.gateway.invoke(h.who('runner-g'), { tool: 'shell', args: {} });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'calculator', args: { expression: '1+1' } });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'shell', args: {} });
    expect(h.audit.events.map((e) => [e.principal, e.event, e.grants])).toEqual([
      ['net-1', 'authorized', ['network:*']],
      ['net-1', 'succeeded', ['network:*']],
      ['api-1', 'authorized', ['network:api.example.com']],
      ['api-1', 'succeeded', ['network:api.example.com']],
      ['runner-g', 'authorized', ['exec:*']],
      ['runner-g', 'succeeded', ['exec:*']],
      // A tool that needs nothing used no grant; a refusal carries none.
      ['worker-1', 'authorized', undefined],
      ['worker-1', 'succeeded', undefined],
      ['worker-1', 'denied', undefined],
    ]);
  });

  it('names the principals-file setting an operator would change, without secrets or host paths', async () => {
    const h = grantsHarness();
    const denial = await expectRefused(h, 'worker-1', { tool: 'shell', args: {} }, /'shell' needs permissions worker-1 holds no standing grant for: exec:\*/);
    expect(denial.hint).toBe(
      `An operator can add {"type":"exec","scope":"*"} to roles.worker.grants (or tenants.acme.grants) in the principals file; this principal's roles: worker.`,
    );
    expect(denial.data).toEqual({ missing: [exec] });
    expect(`${denial.message} ${denial.hint}`).not.toContain(h.workspaceRoot);
  });
});
