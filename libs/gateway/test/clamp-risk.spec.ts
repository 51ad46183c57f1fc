import type { JsonObject, RiskLevel, ToolManifest } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { payloadDigest } from '../src/index.js';
import { denialOf, harness, testTool } from './harness.js';

// ADR 0063: a clamp changes what an approved call does (count 50 ran as 10), so high- and
// critical-risk tools are not clamped unless their manifest opts in; strings and arrays are
// never cut at any risk. `explain` reports exactly what `invoke` would.

const INPUT = {
  type: 'object',
  properties: {
    count: { type: 'integer', minimum: 1, maximum: 10 },
    ratio: { type: 'number', minimum: -1, maximum: 1 },
    label: { type: 'string', maxLength: 5 },
    tags: { type: 'array', maxItems: 3, items: { type: 'string' } },
    filter: { type: 'object', properties: { depth: { type: 'integer', maximum: 3 } }, additionalProperties: false },
    steps: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 9 } }, additionalProperties: false } },
    target: { type: 'string' },
  },
  additionalProperties: false,
} as const;

function setup(risk: RiskLevel, extra: Partial<ToolManifest> = {}) {
  const tool = testTool({ name: 'deploy', risk, input: INPUT as unknown as ToolManifest['input'], ...extra });
  const h = harness({ tools: [tool] });
  const invoke = (args: JsonObject, approvalId?: string) =>
    h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args, ...(approvalId === undefined ? {} : { approvalId }) });
  const explain = (args: JsonObject) => h.gateway.explain(h.who('worker-1'), { tool: 'deploy', args });
  /** Runs the call as a human approved it: requested, approved by approver-1, then invoked with the id. */
  const approvedRun = async (args: JsonObject) => {
    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args });
    if (!requested.ok) return { requested };
    await h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });
    return { requested, result: await invoke(args, requested.approval.id) };
  };
  const run = async (args: JsonObject) => (risk === 'high' || risk === 'critical' ? (await approvedRun(args)).result : await invoke(args));
  return { h, tool, invoke, explain, approvedRun, run };
}

/** What is clamped, where the bound is, and how the refusal names it. */
const OUT_OF_BOUNDS: readonly [string, JsonObject, string, JsonObject, string][] = [
  ['a number over maximum', { count: 50 }, '/count', { count: 10 }, "'count' must be at most 10"],
  ['a number under minimum', { count: 0 }, '/count', { count: 1 }, "'count' must be at least 1"],
  ['a negative fraction under minimum', { ratio: -1.5 }, '/ratio', { ratio: -1 }, "'ratio' must be at least -1"],
  ['a numeric string over maximum', { count: '50' }, '/count', { count: 10 }, "'count' must be at most 10"],
  ['a nested number over maximum', { filter: { depth: 9 } }, '/filter/depth', { filter: { depth: 3 } }, "'filter/depth' must be at most 3"],
  ['a number in an array item over maximum', { steps: [{ n: 4 }, { n: 99 }] }, '/steps/1/n', { steps: [{ n: 4 }, { n: 9 }] }, "'steps/1/n' must be at most 9"],
];

describe.each(['low', 'medium'] as const)('clamping a %s-risk tool (on by default)', (risk) => {
  it.each(OUT_OF_BOUNDS)('%s is moved to the bound, reported, and runs as reported', async (_class, args, path, clamped) => {
    const { tool, run, explain } = setup(risk);
    const result = await run(args);
    expect(result).toMatchObject({ ok: true, repaired: expect.arrayContaining([expect.objectContaining({ kind: 'clamp', path })]) });
    expect(tool.calls[0]?.args).toEqual(clamped);
    const explained = await explain(args);
    expect(explained).toMatchObject({ wouldRun: true });
    expect(explained.repaired).toEqual(result?.repaired);
  });

  it.each(OUT_OF_BOUNDS)("%s is refused when the manifest says repair: { clamp: false }", async (_class, args, path, _clamped, named) => {
    const { tool, invoke } = setup(risk, { repair: { clamp: false } });
    const denial = denialOf(await invoke(args));
    expect(denial).toMatchObject({ gate: 'input', code: 'INVALID_INPUT', data: { notClamped: [expect.objectContaining({ path })] } });
    expect(denial.message).toContain(`${named}: this tool's manifest turns clamping off`);
    expect(tool.calls).toHaveLength(0);
  });
});

describe.each(['high', 'critical'] as const)('clamping a %s-risk tool (off unless the manifest opts in)', (risk) => {
  it.each(OUT_OF_BOUNDS)('%s is refused INVALID_INPUT naming the bound, and nothing is requested, audited as run, or run', async (_class, args, path, _clamped, named) => {
    const { h, tool, invoke, explain, approvedRun } = setup(risk);
    const denial = denialOf(await invoke(args));
    expect(denial).toMatchObject({ gate: 'input', code: 'INVALID_INPUT' });
    expect(denial.message).toContain(`${named}: Toolgate does not clamp the arguments of ${risk}-risk tools`);
    expect(denial.data?.['notClamped']).toEqual([expect.objectContaining({ path })]);
    expect(denial.data?.['attemptedRepairs']).not.toEqual(expect.arrayContaining([expect.stringMatching(/lowered|raised/)]));
    // No value the caller sent is echoed in the refusal.
    expect(denial.message).not.toMatch(/\b(50|99)\b/);
    // explain says exactly what invoke said.
    const explained = await explain(args);
    expect(explained).toMatchObject({ wouldRun: false, denial });
    expect(explained.repaired).toBeUndefined();
    // An approval of the out-of-bounds arguments cannot even be requested.
    const { requested } = await approvedRun(args);
    expect(requested).toMatchObject({ ok: false, denial: { gate: 'input', code: 'INVALID_INPUT' } });
    expect(await h.gateway.listApprovals(h.who('approver-1'), {})).toEqual([]);
    expect(tool.calls).toHaveLength(0);
    expect(h.audit.kinds()).not.toContain('authorized');
  });

  it.each(OUT_OF_BOUNDS)('%s is clamped when the manifest says repair: { clamp: true }, and the approver is shown the clamped value', async (_class, args, path, clamped) => {
    const { h, tool, explain, approvedRun } = setup(risk, { repair: { clamp: true } });
    const explained = await explain(args);
    expect(explained.repaired).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'clamp', path })]));
    const { requested, result } = await approvedRun(args);
    expect(requested.ok && requested.approval.args).toEqual(clamped);
    expect(result).toMatchObject({ ok: true, repaired: explained.repaired });
    expect(tool.calls[0]?.args).toEqual(clamped);
    expect(h.audit.records.find((r) => r.event === 'approval_requested')?.repaired).toEqual(explained.repaired?.map((r) => r.detail));
  });

  it.each([
    ['the string "true"', 'true'],
    ['the number 1', 1],
    ['an object', { on: true }],
    ['null', null],
  ])('a manifest that opts in with %s instead of true is not clamped', async (_how, clamp) => {
    const { tool, invoke } = setup(risk, { repair: { clamp } as unknown as ToolManifest['repair'] });
    expect(denialOf(await invoke({ count: 50 })).message).toContain('Toolgate does not clamp');
    expect(tool.calls).toHaveLength(0);
  });

  it('a repair policy given as true, or inherited from the prototype, is not an opt-in', async () => {
    for (const repair of [true, Object.create({ clamp: true }) as object]) {
      const { tool, invoke } = setup(risk, { repair: repair as ToolManifest['repair'] });
      expect(denialOf(await invoke({ count: 50 })).message).toContain('Toolgate does not clamp');
      expect(tool.calls).toHaveLength(0);
    }
  });

  it('names every bound that was not clamped, and still applies the value-keeping repairs', async () => {
    const { invoke } = setup(risk);
    const denial = denialOf(await invoke({ count: '50', filter: { depth: 9 }, tags: 'one' }));
    expect(denial.message).toContain("'count' must be at most 10; 'filter/depth' must be at most 3: Toolgate does not clamp");
    expect(denial.data?.['attemptedRepairs']).toEqual(["converted 'count' from a numeric string to a number", "wrapped 'tags' in an array"]);
  });

  it('still renames a mislabelled argument and coerces a value without changing it (ADR 0063)', async () => {
    const tool = testTool({
      name: 'deploy',
      risk,
      input: { type: 'object', properties: { target: { type: 'string' }, count: { type: 'integer', maximum: 10 }, dry: { type: 'boolean' } }, required: ['target'], additionalProperties: false },
    });
    const h = harness({ tools: [tool] });
    const args = { host: 'prod', count: '7', dry: 'false' };
    const explained = await h.gateway.explain(h.who('worker-1'), { tool: 'deploy', args });
    expect(explained.repaired?.map((r) => r.kind)).toEqual(['rename', 'coerce', 'coerce']);
    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: 'deploy', args });
    expect(requested.ok && requested.approval.args).toEqual({ target: 'prod', count: 7, dry: false });
    if (!requested.ok) return;
    await h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'deploy', args, approvalId: requested.approval.id });
    expect(result).toMatchObject({ ok: true, repaired: explained.repaired });
    expect(tool.calls[0]?.args).toEqual({ target: 'prod', count: 7, dry: false });
  });
});

describe.each(['low', 'medium', 'high', 'critical'] as const)('strings and arrays beyond their bounds at %s risk are never cut', (risk) => {
  it.each([
    ['a string over maxLength', { label: 'toolong' }, "'label' must NOT have more than 5 characters"],
    ['an array over maxItems', { tags: ['a', 'b', 'c', 'd'] }, "'tags' must NOT have more than 3 items"],
    ['an array over maxItems beside a valid string', { tags: ['a', 'b', 'c', 'd', 'e'], label: 'abc' }, "'tags' must NOT have more than 3 items"],
  ])('%s is refused naming the bound, even with repair: { clamp: true }', async (_class, args, named) => {
    for (const extra of [{}, { repair: { clamp: true } }]) {
      const { tool, invoke, explain } = setup(risk, extra);
      const denial = denialOf(await invoke(args));
      expect(denial).toMatchObject({ gate: 'input', code: 'INVALID_INPUT' });
      expect(denial.message).toContain(named);
      expect(denial.data?.['notClamped']).toBeUndefined();
      expect((await explain(args)).denial).toEqual(denial);
      expect(tool.calls).toHaveLength(0);
    }
  });
});

describe('an approval of the un-clamped arguments never runs a clamped call', () => {
  /** An approved record bound to the arguments exactly as sent (count 50), as no gate would create it. */
  async function approvedAsSent(h: ReturnType<typeof setup>['h'], args: JsonObject) {
    const digest = payloadDigest({ tenant: 'acme', principal: 'worker-1', tool: 'deploy', version: '1.0.0', args });
    const at = h.clock.now();
    await h.approvals.create({ id: 'as-sent', tenant: 'acme', requester: 'worker-1', tool: 'deploy', version: '1.0.0', args, payloadDigest: digest, createdAt: at, expiresAt: at + 600_000 });
    const decided = await h.approvals.decide('acme', 'as-sent', { approve: true, by: 'approver-1', selfApproved: false, at: at + 1 });
    expect(decided.ok).toBe(true);
    return 'as-sent';
  }

  it.each(['high', 'critical'] as const)('at %s risk without the opt-in: refused at the input gate, the approval untouched', async (risk) => {
    const { h, tool, invoke } = setup(risk);
    const id = await approvedAsSent(h, { count: 50 });
    expect(denialOf(await invoke({ count: 50 }, id))).toMatchObject({ gate: 'input', code: 'INVALID_INPUT' });
    expect((await h.approvals.get('acme', id))?.status).toBe('approved');
    expect(tool.calls).toHaveLength(0);
  });

  it.each(['high', 'critical'] as const)('at %s risk with the opt-in: the clamped call does not match the approval of count 50', async (risk) => {
    const { h, tool, invoke } = setup(risk, { repair: { clamp: true } });
    const id = await approvedAsSent(h, { count: 50 });
    expect(denialOf(await invoke({ count: 50 }, id))).toMatchObject({ gate: 'approval', code: 'APPROVAL_PAYLOAD_MISMATCH' });
    expect((await h.approvals.get('acme', id))?.status).toBe('approved');
    expect(tool.calls).toHaveLength(0);
  });

  it('an approval of count 5 is not used by a call of count 50 at high risk', async () => {
    const { h, tool, invoke, approvedRun } = setup('high');
    const { requested } = await approvedRun({ count: 5 });
    expect(requested.ok).toBe(true);
    const approvals = await h.gateway.listApprovals(h.who('approver-1'), {});
    const id = approvals[0]?.id as string;
    expect(denialOf(await invoke({ count: 50 }, id))).toMatchObject({ gate: 'input', code: 'INVALID_INPUT' });
    // The call of count 5 it approved ran once; the approval is spent by it, not by the refused call.
    expect(tool.calls.map((c) => c.args)).toEqual([{ count: 5 }]);
  });
});
