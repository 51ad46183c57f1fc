import type { InvokeRequest } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { calculatorTool } from '@toolgate/tool-calculator';
import { payloadDigest } from '../src/index.js';
import { denialOf, harness, ROLES, searchTool, testTool } from './harness.js';

/** A tool that fails every gate it can, depending on the request. */
function risky() {
  return testTool({
    name: 'risky',
    risk: 'high',
    permissions: [{ type: 'network', scope: '*' }],
    egress: { urlArg: 'url' },
    tier: 'inprocess',
    input: { type: 'object', properties: { url: { type: 'string' }, n: { type: 'integer' } }, required: ['url'], additionalProperties: false },
  });
}

const net = [{ type: 'network', scope: '*' }];
// Workers that hold network:* as a standing role grant (ADR 0022), for tests about later gates.
const networkWorkers = { ...ROLES, worker: { tools: ['*'], grants: net } };

describe('gate order', () => {
  it('reports the first failing gate, in the documented order', async () => {
    const tool = risky();
    const h = harness({
      tools: [tool, testTool({ name: 'remote', tier: 'container' })],
      // Self-approval allowed, so 'fetch-boss' gets past the approval gate to the egress gate.
      tenants: { acme: { tools: ['*'], selfApproval: true, grants: [] }, globex: { tools: ['*'], selfApproval: false, grants: [] } },
      // worker-1 holds no standing grant; these two hold network:* through the fetcher role (ADR 0022).
      principals: [
        { id: 'fetcher-1', tenant: 'acme', roles: ['fetcher'] },
        { id: 'fetch-boss', tenant: 'acme', roles: ['fetcher', 'approver'] },
      ],
    });
    const cases: [string, string, InvokeRequest][] = [
      ['planner-1', 'TOOL_NOT_ALLOWED', { tool: 'risky', version: '1.0.0', args: { pad: 'x'.repeat(70_000) } }],
      ['worker-1', 'VERSION_MISMATCH', { tool: 'risky', version: '9.9.9', args: {} }],
      ['worker-1', 'INPUT_TOO_LARGE', { tool: 'risky', args: { pad: 'x'.repeat(70_000) } }],
      ['worker-1', 'PERMISSION_NOT_GRANTED', { tool: 'risky', args: { n: 'not a number' } }],
      ['fetcher-1', 'INVALID_INPUT', { tool: 'risky', args: { n: 'not a number' }, grants: net }],
      ['fetcher-1', 'APPROVAL_REQUIRED', { tool: 'risky', args: { url: 'https://blocked.test/' }, grants: net }],
      ['fetch-boss', 'EGRESS_BLOCKED', { tool: 'risky', args: { url: 'https://blocked.test/' }, grants: net, selfApprove: true }],
      ['boss', 'EXECUTION_FAILED', { tool: 'remote', args: {} }],
    ];
    for (const [who, code, request] of cases) {
      expect(denialOf(await h.gateway.invoke(h.who(who), request)).code, `${who} ${JSON.stringify(request).slice(0, 80)}`).toBe(code);
    }
    expect(tool.calls).toHaveLength(0);
    // Every refusal was audited, once, with its gate and code.
    expect(h.audit.kinds()).toEqual(cases.map(([, code]) => `denied:${code}`));
    expect(h.audit.events.map((e) => e.gate)).toEqual(['allow', 'lookup', 'size', 'permissions', 'input', 'approval', 'egress', 'execute']);
  });

  it('checks the budget before size, permissions and input', async () => {
    const h = harness({ tools: [risky()] });
    await h.budgets.charge('acme', 'thrifty', { calls: 2, windowSeconds: 60 }, h.clock.now());
    await h.budgets.charge('acme', 'thrifty', { calls: 2, windowSeconds: 60 }, h.clock.now());
    expect(denialOf(await h.gateway.invoke(h.who('thrifty'), { tool: 'risky', args: { pad: 'x'.repeat(70_000) } })).code).toBe('BUDGET_EXHAUSTED');
  });

  it('never throws: a registry that throws is a STATE_UNAVAILABLE refusal, audited', async () => {
    const h = harness({ tools: [searchTool()] });
    h.registry.get = () => {
      throw new Error('boom');
    };
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'x' } });
    expect(denialOf(result)).toMatchObject({ gate: 'lookup', code: 'STATE_UNAVAILABLE' });
    expect(h.audit.kinds()).toEqual(['denied:STATE_UNAVAILABLE']);
  });

  it('never throws even when the clock does', async () => {
    const h = harness({ tools: [searchTool()] });
    h.clock.now = () => {
      throw new Error('clock gone');
    };
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'x' } });
    expect(result.ok).toBe(false);
    const explained = await h.gateway.explain(h.who('worker-1'), { tool: 'search', args: { query: 'x' } });
    expect(explained.wouldRun).toBe(false);
  });

  it('never throws on garbage requests', async () => {
    const h = harness({ tools: [searchTool()] });
    for (const request of [{}, { tool: 5 }, { tool: 'search' }, { tool: 'search', args: { query: 'x' }, grants: 'all' }, { tool: 'search', args: { query: 'x' }, approvalId: 7 }]) {
      const result = await h.gateway.invoke(h.who('worker-1'), request as never);
      expect(typeof result.ok).toBe('boolean');
    }
  });

  it('uses a fresh call id for every call and reports it in the result and the audit', async () => {
    const h = harness({ tools: [searchTool()] });
    const a = await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'x' } });
    const b = await h.gateway.invoke(h.who('worker-1'), { tool: 'nope', args: {} });
    expect(a.callId).not.toBe(b.callId);
    expect(h.audit.events.map((e) => e.callId)).toEqual([a.callId, a.callId, b.callId]);
  });
});

describe('explain', () => {
  it('runs gates 1–8 and reports what would happen, spending, consuming and auditing nothing', async () => {
    const tool = risky();
    const h = harness({ tools: [tool], roles: networkWorkers, bootEgress: { enabled: true, allowAny: false, hosts: ['ok.test'] } });
    const requested = await h.gateway.requestApproval(h.who('thrifty'), { tool: 'risky', args: { url: 'https://ok.test/', n: '3' } });
    if (!requested.ok) throw new Error('refused');
    await h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });
    // The request and the decision are audited (ADR 0020); explaining adds nothing after them.
    expect(h.audit.kinds()).toEqual(['approval_requested', 'approval_decided']);

    const request = { tool: 'risky', args: { url: 'https://ok.test/', n: '3' }, grants: net, approvalId: requested.approval.id };
    const explained = await h.gateway.explain(h.who('thrifty'), request);
    expect(explained).toEqual({
      wouldRun: true,
      passed: ['authenticate', 'lookup', 'allow', 'budget', 'size', 'permissions', 'input', 'approval', 'egress'],
      repaired: [{ kind: 'coerce', path: '/n', detail: "converted 'n' from a numeric string to a number" }],
      payloadDigest: payloadDigest({ tenant: 'acme', principal: 'thrifty', tool: 'risky', version: '1.0.0', args: { url: 'https://ok.test/', n: 3 } }),
      approvalRequired: true,
    });
    expect(tool.calls).toHaveLength(0);
    expect(h.audit.kinds()).toEqual(['approval_requested', 'approval_decided']);
    expect(await h.budgets.remaining('acme', 'thrifty', { calls: 2, windowSeconds: 60 }, h.clock.now())).toBe(2);
    expect((await h.approvals.get('acme', requested.approval.id))?.status).toBe('approved');

    // And the call it explained then runs.
    expect((await h.gateway.invoke(h.who('thrifty'), request)).ok).toBe(true);
  });

  it('reports the first gate that would refuse, and the gates before it', async () => {
    const h = harness({ tools: [risky()], roles: networkWorkers });
    const explained = await h.gateway.explain(h.who('worker-1'), { tool: 'risky', args: { url: 'https://x.test/' }, grants: net });
    expect(explained).toMatchObject({
      wouldRun: false,
      passed: ['authenticate', 'lookup', 'allow', 'budget', 'size', 'permissions', 'input'],
      denial: { gate: 'approval', code: 'APPROVAL_REQUIRED' },
      approvalRequired: true,
    });
    expect(explained.payloadDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(h.audit.events).toHaveLength(0);
  });

  it('fails closed on a throwing store without auditing', async () => {
    const h = harness({ tools: [searchTool()] });
    h.budgets.remaining = async () => {
      throw new Error('down');
    };
    const explained = await h.gateway.explain(h.who('thrifty'), { tool: 'search', args: { query: 'x' } });
    expect(explained).toMatchObject({ wouldRun: false, denial: { gate: 'budget', code: 'STATE_UNAVAILABLE' } });
    expect(h.audit.events).toHaveLength(0);
  });

  it('reports a missing executor tier', async () => {
    const h = harness({ tools: [testTool({ name: 'remote', tier: 'container' })] });
    expect(await h.gateway.explain(h.who('worker-1'), { tool: 'remote', args: {} })).toMatchObject({
      wouldRun: false,
      denial: { gate: 'execute', code: 'EXECUTION_FAILED' },
    });
  });
});

describe('construction', () => {
  it('refuses non-positive limits', () => {
    expect(() => harness({ deps: { limits: { maxArgsBytes: 0 } } })).toThrow('maxArgsBytes');
  });
});

describe('with the real calculator', () => {
  it('evaluates through every gate and reports its syntax errors as caller-readable failures', async () => {
    const h = harness({ tools: [calculatorTool] });
    expect(await h.gateway.invoke(h.who('approver-2'), { tool: 'calculator', version: '1.0.0', args: { expression: '2 + 3 * 4' } })).toMatchObject({
      ok: true,
      output: { result: 14 },
    });
    const denial = denialOf(await h.gateway.invoke(h.who('approver-2'), { tool: 'calculator', args: { expression: '(1 + 2))' } }));
    expect(denial).toMatchObject({ code: 'EXECUTION_FAILED', message: "unexpected ')' at position 7", data: { reason: 'SYNTAX_ERROR' } });
    const tooLong = denialOf(await h.gateway.invoke(h.who('approver-2'), { tool: 'calculator', args: { expression: '1+'.repeat(600) + '1' } }));
    expect(tooLong).toMatchObject({ gate: 'input', code: 'INVALID_INPUT' });
    expect(h.audit.kinds()).toEqual(['authorized', 'succeeded', 'authorized', 'failed:EXECUTION_FAILED', 'denied:INVALID_INPUT']);
  });
});
