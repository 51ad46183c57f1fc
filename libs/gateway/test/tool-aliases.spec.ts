import { describe, expect, it } from 'vitest';
import { aliasOf, payloadDigest } from '../src/index.js';
import { denialOf, harness, testTool } from './harness.js';

/** An upstream tool whose registry name (80 characters) is too long for OpenAI's and Anthropic's 64. */
const LONG = `files__${'read_the_whole_'.repeat(4)}text_of_a_file_ok`;
const ALIAS = aliasOf(LONG);

function longTool(over: Parameters<typeof testTool>[0] extends infer M ? Partial<M> : never = {}) {
  return testTool({
    name: LONG,
    provenance: 'mcp:files',
    risk: 'medium',
    input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    ...over,
  });
}

describe('calling a tool by the alias an export gave it (ADR 0053)', () => {
  it('the name needs an alias, and the alias is what the openai export shows', () => {
    expect(LONG.length).toBeGreaterThan(64);
    const h = harness({ tools: [longTool()] });
    const exported = h.gateway.exportTools(h.who('worker-1'), 'openai');
    expect(exported.tools.map((t) => t.function.name)).toEqual([ALIAS]);
    expect(exported.aliases).toEqual([{ alias: ALIAS, tool: LONG }]);
  });

  it('runs the real tool, and every audit record names the real tool', async () => {
    const tool = longTool();
    const h = harness({ tools: [tool] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: ALIAS, args: { path: 'a.txt' } });
    expect(result).toMatchObject({ ok: true, output: { echo: { path: 'a.txt' } } });
    expect(tool.calls).toHaveLength(1);
    expect(h.audit.events.map((e) => [e.event, e.tool])).toEqual([
      ['authorized', LONG],
      ['succeeded', LONG],
    ]);
    expect(JSON.stringify(h.audit.events)).not.toContain(ALIAS);
  });

  it('explains a call by alias as the real tool\'s, with the real tool\'s payload digest', async () => {
    const h = harness({ tools: [longTool({ risk: 'high' })] });
    const who = h.who('worker-1');
    const explained = await h.gateway.explain(who, { tool: ALIAS, args: { path: 'a.txt' } });
    expect(explained.approvalRequired).toBe(true);
    expect(explained.payloadDigest).toBe(payloadDigest({ tenant: who.tenant, principal: who.id, tool: LONG, version: '1.0.0', args: { path: 'a.txt' } }));
  });

  it('takes an approval requested by alias through a call by alias; the approval names the real tool', async () => {
    const tool = longTool({ risk: 'high' });
    const h = harness({ tools: [tool] });
    const requested = await h.gateway.requestApproval(h.who('worker-1'), { tool: ALIAS, args: { path: 'a.txt' } });
    if (!requested.ok) throw new Error(JSON.stringify(requested.denial));
    expect(requested.approval.tool).toBe(LONG);
    await h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: ALIAS, args: { path: 'a.txt' }, approvalId: requested.approval.id });
    expect(result.ok).toBe(true);
    expect(h.audit.events.filter((e) => e.event === 'authorized')).toEqual([expect.objectContaining({ tool: LONG, approvedBy: 'approver-1' })]);
    // And the real name takes the same approval's place: it is one tool.
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: LONG, args: { path: 'a.txt' }, approvalId: requested.approval.id })).ok).toBe(false);
  });

  describe('denial messages name what the caller sent', () => {
    it.each([
      // After the lookup the call is the real tool's, and so is its record; a lookup refusal records the name as sent, as for any name.
      ['INVALID_INPUT at the input gate', {}, { path: { not: 'a string' } }, LONG],
      ['VERSION_MISMATCH at the lookup gate', { version: '9.9.9' }, { path: 'a' }, ALIAS],
    ])('%s', async (_label, extra, args, audited) => {
      const h = harness({ tools: [longTool()] });
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: ALIAS, args, ...extra }));
      expect(`${denial.message} ${denial.hint ?? ''}`).toContain(`'${ALIAS}'`);
      expect(`${denial.message} ${denial.hint ?? ''}`).not.toContain(LONG);
      expect(h.audit.events.at(-1)?.tool).toBe(audited);
    });

    it('APPROVAL_REQUIRED, whose hint tells the caller to request the approval by the name it knows', async () => {
      const h = harness({ tools: [longTool({ risk: 'high' })] });
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: ALIAS, args: { path: 'a' } }));
      expect(denial.code).toBe('APPROVAL_REQUIRED');
      expect(denial.message).toContain(`'${ALIAS}' is high risk`);
      expect(denial.hint).toContain(`tool: '${ALIAS}'`);
      expect(JSON.stringify(denial)).not.toContain(LONG);
    });

    it('a call by the real name still reads with the real name', async () => {
      const h = harness({ tools: [longTool()] });
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: LONG, args: { path: { not: 'a string' } } }));
      expect(denial.message).toContain(`'${LONG}'`);
    });
  });
});

describe('existence leak: an alias never reaches or reveals a tool the caller cannot see', () => {
  it('answers an invisible tool\'s alias exactly as an unknown name, and audits the name as sent', async () => {
    const tool = longTool();
    const h = harness({ tools: [tool, testTool({ name: 'send_message' })] });
    const planner = h.who('planner-1');
    const forAlias = denialOf(await h.gateway.invoke(planner, { tool: ALIAS, args: { path: 'a' } }));
    const unknown = aliasOf('files__no_such_tool_at_all_with_a_name_long_enough_to_need_an_alias_x');
    const forUnknown = denialOf(await h.gateway.invoke(planner, { tool: unknown, args: { path: 'a' } }));
    expect(forAlias).toEqual({ ...forUnknown, message: `There is no tool named '${ALIAS}'.` });
    expect(forAlias).toMatchObject({ gate: 'lookup', code: 'TOOL_NOT_FOUND' });
    expect(tool.calls).toHaveLength(0);
    expect(h.audit.events.map((e) => e.tool)).toEqual([ALIAS, unknown]);
    expect(JSON.stringify(h.audit.events)).not.toContain(LONG);
    // Nor is it offered: the planner's export does not hold it.
    expect(h.gateway.exportTools(planner, 'openai').tools.map((t) => t.function.name)).toEqual(['send_message']);
  });

  it('in every operation that looks a tool up: explain and approval requests', async () => {
    const h = harness({ tools: [longTool({ risk: 'high' })] });
    const planner = h.who('planner-1');
    expect((await h.gateway.explain(planner, { tool: ALIAS, args: { path: 'a' } })).denial).toMatchObject({ code: 'TOOL_NOT_FOUND', message: `There is no tool named '${ALIAS}'.` });
    const requested = await h.gateway.requestApproval(planner, { tool: ALIAS, args: { path: 'a' } });
    expect(requested).toMatchObject({ ok: false, denial: { code: 'TOOL_NOT_FOUND' } });
  });

  it('across tenants: another tenant\'s tool is no tool to this one', async () => {
    const tool = longTool();
    const h = harness({
      tools: [tool],
      tenants: { acme: { tools: [LONG], selfApproval: false, grants: [] }, globex: { tools: ['calculator'], selfApproval: false, grants: [] } },
    });
    expect(denialOf(await h.gateway.invoke(h.who('worker-g'), { tool: ALIAS, args: { path: 'a' } })).code).toBe('TOOL_NOT_FOUND');
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: ALIAS, args: { path: 'a' } })).ok).toBe(true);
  });
});

describe('a real name always wins over an alias', () => {
  it('runs the tool whose real name the alias is, and the export withholds the tool the alias was for', async () => {
    const aliased = longTool();
    const squatter = testTool({ name: ALIAS, provenance: 'mcp:files', risk: 'medium' });
    const h = harness({ tools: [aliased, squatter] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: ALIAS, args: {} });
    expect(result.ok).toBe(true);
    expect(squatter.calls).toHaveLength(1);
    expect(aliased.calls).toHaveLength(0);
    const exported = h.gateway.exportTools(h.who('worker-1'), 'openai');
    expect(exported.tools.map((t) => t.function.name)).toEqual([ALIAS]);
    expect(exported.aliases).toEqual([]);
    expect(exported.withheld).toEqual([{ tool: LONG, reason: `its alias '${ALIAS}' is the name of another tool` }]);
  });

  it('even when the caller cannot see the real one: it is refused as that tool, never run as the aliased one', async () => {
    const aliased = longTool();
    const squatter = testTool({ name: ALIAS, provenance: 'mcp:files', risk: 'medium' });
    const h = harness({ tools: [aliased, squatter], roles: { planner: [LONG] } });
    const denial = denialOf(await h.gateway.invoke(h.who('planner-1'), { tool: ALIAS, args: { path: 'a' } }));
    expect(denial.code).toBe('TOOL_NOT_ALLOWED');
    expect(aliased.calls).toHaveLength(0);
    // The planner's export does not offer the alias that would reach the other tool.
    expect(h.gateway.exportTools(h.who('planner-1'), 'openai')).toMatchObject({ tools: [], aliases: [], withheld: [{ tool: LONG }] });
  });
});

describe('registry name caps: what may need an alias', () => {
  it('admits an MCP tool name up to MCP\'s 128 characters and refuses a longer one; a first-party name stays within 64', () => {
    const at128 = `files__${'Ab-9_'.repeat(24)}x`;
    expect(at128).toHaveLength(128);
    expect(() => harness({ tools: [testTool({ name: at128, provenance: 'mcp:files', risk: 'medium' })] })).not.toThrow();
    expect(() => harness({ tools: [testTool({ name: `${at128}y`, provenance: 'mcp:files', risk: 'medium' })] })).toThrow(/at most 128 characters/);
    expect(() => harness({ tools: [testTool({ name: 'a'.repeat(65) })] })).toThrow(/at most 64 characters/);
  });

  it('every name the registry admits is a valid MCP name as it is, so /mcp never needs an alias', () => {
    const at128 = `files__${'Ab-9_'.repeat(24)}x`;
    const h = harness({ tools: [testTool({ name: at128, provenance: 'mcp:files', risk: 'medium' }), testTool({ name: `z${'_a'.repeat(31)}_` })] });
    const mcp = h.gateway.exportTools(h.who('worker-1'), 'mcp');
    expect(mcp.tools.map((t) => t.name)).toEqual(h.gateway.listTools(h.who('worker-1')).map((m) => m.name));
    expect(mcp.aliases).toEqual([]);
    expect(h.gateway.exportTools(h.who('worker-1'), 'anthropic').aliases.map((a) => a.tool)).toEqual([at128]);
  });
});
