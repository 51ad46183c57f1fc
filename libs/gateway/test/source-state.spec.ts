import type { ToolSource, ToolSourceState } from '@toolgate/contracts';
import { timeLessCpuWait } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { denialOf, harness, testTool } from './harness.js';
import { declaredTool, ScriptedSource } from './scripted-source.js';

/** Server `files` (approval-requiring tools, so a refusal before the approval gate shows) beside server `notes`, pins loaded. */
async function twoSources() {
  const h = harness({ tools: [testTool({ name: 'calculator' })] });
  const files = new ScriptedSource('files', [declaredTool('read'), declaredTool('write')], 'high');
  const notes = new ScriptedSource('notes', [declaredTool('add')]);
  h.registry.addSource(files);
  h.registry.addSource(notes);
  await h.gateway.loadPins();
  const listed = () => h.gateway.listTools(h.who('worker-1')).map((m) => m.name);
  return { ...h, files, notes, listed };
}

describe('source state: only an up source’s tools are offered (issue 12, defect 6)', () => {
  it.each<[ToolSourceState, number, string]>([
    ['restarting', 3, "MCP server 'files' is restarting (attempt 3), so 'files__read' cannot be called now."],
    ['starting', 0, "MCP server 'files' is starting, so 'files__read' cannot be called now."],
    ['failed', 5, "MCP server 'files' has failed and is not being restarted, so 'files__read' cannot be called now."],
    ['stopped', 1, "MCP server 'files' is stopped, so 'files__read' cannot be called now."],
  ])('stops offering a source that is %s, refuses its tools at lookup naming the state, and never reaches the approval gate', async (state, attempt, message) => {
    const h = await twoSources();
    expect(h.listed()).toEqual(['calculator', 'files__read', 'files__write', 'notes__add']);
    h.files.state = state;
    h.files.attempt = attempt;
    expect(h.listed()).toEqual(['calculator', 'notes__add']);
    expect(JSON.stringify(h.gateway.exportTools(h.who('worker-1'), 'mcp'))).not.toContain('files__');
    const denial = denialOf(await h.gateway.invoke(h.who('boss'), { tool: 'files__read', args: { path: 'a' } }));
    expect(denial).toEqual({
      gate: 'lookup',
      code: 'SOURCE_UNAVAILABLE',
      message,
      hint: 'Try again later: its tools are offered again once it is up (tools.list shows them).',
      data: { source: 'files', state, attempt },
    });
    expect(h.audit.events.at(-1)).toMatchObject({ event: 'denied', gate: 'lookup', code: 'SOURCE_UNAVAILABLE', tool: 'files__read', principal: 'boss' });
    expect(h.audit.events.some((e) => e.event === 'approval_requested')).toBe(false);
    expect(await h.gateway.explain(h.who('boss'), { tool: 'files__read', args: { path: 'a' } })).toMatchObject({
      wouldRun: false,
      passed: ['authenticate'],
      approvalRequired: false,
      denial: { code: 'SOURCE_UNAVAILABLE' },
    });
    expect(await h.gateway.requestApproval(h.who('boss'), { tool: 'files__read', args: { path: 'a' } })).toMatchObject({ ok: false, denial: { code: 'SOURCE_UNAVAILABLE' } });
    expect(await h.approvals.list('acme', { limit: 100 })).toEqual([]);
    expect(h.files.calls).toEqual([]);
    // The other source and the first-party tools are untouched.
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'notes__add', args: { path: 'a' } })).ok).toBe(true);
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'calculator', args: {} })).ok).toBe(true);
  });

  it('offers the tools again once the source is up, without a new pin', async () => {
    const h = await twoSources();
    const pinsBefore = await h.pins.list();
    h.files.state = 'restarting';
    expect(h.listed()).not.toContain('files__read');
    h.files.state = 'up';
    expect(h.listed()).toContain('files__read');
    expect(await h.pins.list()).toEqual(pinsBefore);
  });

  it('refuses a name in the namespace of a source that is down even if it never listed it', async () => {
    const h = await twoSources();
    h.files.state = 'restarting';
    h.files.list([]);
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'files__new_tool', args: {} }))).toMatchObject({ code: 'SOURCE_UNAVAILABLE', data: { source: 'files' } });
    // Another namespace's unknown name is simply unknown.
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'notes__nope', args: {} })).code).toBe('TOOL_NOT_FOUND');
  });

  describe('a source whose status cannot be read is treated as failed', () => {
    const broken = (status: () => unknown): ToolSource => ({ name: 'odd', tools: () => new ScriptedSource('odd', [declaredTool('x')]).tools(), status: status as ToolSource['status'] });
    it.each<[string, () => unknown]>([
      ['throws', () => { throw new Error('status at /srv/odd failed'); }],
      ['answers nothing', () => undefined],
      ['answers an unknown state', () => ({ state: 'up ', transport: 'stdio', attempt: 0, accepted: 1, rejected: 0, since: 0 })],
      ['answers a string', () => 'up'],
    ])('when its status() %s', async (_what, status) => {
      const h = harness();
      h.registry.addSource(broken(status));
      await h.gateway.loadPins();
      expect(h.gateway.listTools(h.who('worker-1'))).toEqual([]);
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'odd__x', args: {} }));
      expect(denial).toMatchObject({ code: 'SOURCE_UNAVAILABLE', data: { source: 'odd', state: 'failed' } });
      expect(JSON.stringify(denial)).not.toContain('/srv');
      expect(h.gateway.toolSources()).toEqual([expect.objectContaining({ name: 'odd', state: 'failed' })]);
    });
  });

  it('reports every source with its status and held count, and a source without status() as up', async () => {
    const h = await twoSources();
    h.registry.addSource({ name: 'plain', tools: () => [] });
    h.files.state = 'restarting';
    h.files.attempt = 2;
    h.files.since = 1234;
    h.notes.list([declaredTool('add', { description: 'Changed.' })]);
    expect(h.gateway.toolSources()).toEqual([
      { name: 'files', state: 'restarting', transport: 'stdio', attempt: 2, accepted: 2, rejected: 0, since: 1234, held: 0 },
      { name: 'notes', state: 'up', transport: 'stdio', attempt: 0, accepted: 1, rejected: 0, since: 0, held: 1 },
      { name: 'plain', state: 'up', transport: 'stdio', attempt: 0, accepted: 0, rejected: 0, since: expect.any(Number), held: 0 },
    ]);
  });

  it('answers other callers while a source is down (a refusal costs no wait)', async () => {
    const h = await twoSources();
    h.files.state = 'restarting';
    const { ms } = await timeLessCpuWait(async () => {
      const refusals = await Promise.all(Array.from({ length: 50 }, () => h.gateway.invoke(h.who('worker-1'), { tool: 'files__read', args: {} })));
      expect(refusals.every((r) => !r.ok && r.denial.code === 'SOURCE_UNAVAILABLE')).toBe(true);
      expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'notes__add', args: {} })).ok).toBe(true);
    });
    expect(ms).toBeLessThan(1000);
  });
});
