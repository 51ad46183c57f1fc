import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliasOf } from '@toolgate/gateway';
import { openObjects } from '@toolgate/testing';
import { connectMcp, healthTimes, runCli, startHarness, type Harness } from './e2e-harness.js';

const ALICE = 'alice-token-tool-exports-0123456789';
const PETE = 'pete-token-tool-exports-0123456789';
const OLGA = 'olga-token-tool-exports-0123456789';
const FIXTURES = resolve(__dirname, '../../../libs/adapters/mcp-client/test/fixtures');

// Response bodies are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

/** The upstream tool's own name (60 characters); registered as `docs__<it>`, 66: past OpenAI's and Anthropic's 64. */
const UPSTREAM_TOOL = 'fetch_the_complete_contents_of_a_remote_document_by_its_url_';
const REAL = `docs__${UPSTREAM_TOOL}`;
const ALIAS = aliasOf(REAL);

/** The vendors' rules (ADR 0053), written out so a loosened rule in the code fails here. */
const RULES = { openai: /^[a-zA-Z0-9_-]{1,64}$/, anthropic: /^[a-zA-Z0-9_-]{1,64}$/, mcp: /^[A-Za-z0-9_.-]{1,128}$/ } as const;

/**
 * Tool definitions for LLM APIs (issue 11, ADR 0053), against a running server with two real MCP
 * upstreams from the mcp-client fixtures: `docs` (the echo server, plus a tool whose registry name
 * is too long for OpenAI and Anthropic) and `raw` (hand-written schemas, one with an open nested
 * object).
 */
describe('tool exports and calls by alias, end to end', { timeout: 120_000 }, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      {},
      {
        mcpServers: {
          servers: [
            // risk "low": the operator's trust, so the tools run without an approval.
            { name: 'docs', command: process.execPath, args: [resolve(FIXTURES, 'echo-server.mjs')], env: { FIXTURE_EXTRA_TOOL: UPSTREAM_TOOL }, tier: 'unisolated', risk: 'low' },
            { name: 'raw', command: process.execPath, args: [resolve(FIXTURES, 'raw-server.mjs')], env: {}, tier: 'unisolated', risk: 'low' },
          ],
        },
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'pete', token: PETE, tenant: 'acme', roles: ['planner'] },
            { id: 'olga', token: OLGA, tenant: 'acme', roles: ['operator'] },
          ],
          roles: { worker: ['*'], planner: ['calculator', 'read_file'], operator: [] },
          tenants: { acme: { tools: ['*'], grants: [{ type: 'exec', scope: 'mcp:docs' }, { type: 'exec', scope: 'mcp:raw' }, { type: 'filesystem', scope: 'workspace' }] } },
        },
      },
    );
    // Discovery runs after the start; wait until both upstreams' tools are listed.
    const listed = async () => ((await h.call('/api/v1/tools', { token: ALICE })).body.tools as { name: string }[]).map((t) => t.name);
    for (let i = 0; i < 200; i++) {
      const names = await listed();
      if (names.includes(REAL) && names.includes('raw__read_file')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(async () => h?.stop());

  const manifests = async (token: string): Promise<any[]> => (await h.call('/api/v1/tools', { token })).body.tools;
  const exported = async (format: string, token = ALICE) => h.call(`/api/v1/tools?format=${format}`, { token });
  const audit = async (): Promise<any[]> => (await h.call('/api/v1/audit?limit=1000', { token: OLGA })).body;

  async function mcpList(token: string): Promise<any[]> {
    const client = new Client({ name: 'exports-e2e', version: '1.0.0' });
    await connectMcp(h, token, client);
    const tools: any[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    await client.close();
    return tools;
  }

  it('registers the upstream tool under its full name, which is too long for OpenAI and Anthropic', async () => {
    expect(REAL.length).toBe(66);
    expect((await manifests(ALICE)).map((m) => m.name)).toContain(REAL);
  });

  it.each(['openai', 'anthropic'] as const)('%s: every visible tool, named by the vendor\'s rule, the long one by its alias, with the mapping beside the array', async (format) => {
    const { status, body } = await exported(format);
    expect(status).toBe(200);
    const names: string[] = body.tools.map((t: any) => (format === 'openai' ? t.function.name : t.name));
    for (const name of names) expect(name).toMatch(RULES[format]);
    expect(body.aliases).toEqual([{ alias: ALIAS, tool: REAL }]);
    expect(body.withheld).toEqual([]);
    const real = (await manifests(ALICE)).map((m) => m.name);
    expect(names).toEqual(real.map((n) => (n === REAL ? ALIAS : n)));
    // The array is ready to paste: only the vendor's own fields.
    for (const tool of body.tools) expect(Object.keys(tool).sort()).toEqual(format === 'openai' ? ['function', 'type'] : ['description', 'input_schema', 'name']);
  });

  it('closes every object of every exported schema, the upstream\'s open nested object too', async () => {
    const raw = (await manifests(ALICE)).find((m) => m.name === 'raw__read_file');
    // The manifest keeps the server's nested rules (the gateway closes only the top level).
    expect(openObjects(raw.input)).toEqual(['#/properties/options']);
    for (const format of ['openai', 'anthropic', 'mcp'] as const) {
      const { body } = await exported(format);
      for (const tool of body.tools) {
        const schema = format === 'openai' ? tool.function.parameters : format === 'anthropic' ? tool.input_schema : tool.inputSchema;
        expect(openObjects(schema), `${format} ${JSON.stringify(tool).slice(0, 80)}`).toEqual([]);
        expect(schema.type).toBe('object');
      }
    }
  });

  it('mcp: exactly what /mcp tools/list serves that principal, page by page', async () => {
    for (const token of [ALICE, PETE]) {
      const { body } = await exported('mcp', token);
      const served = await mcpList(token);
      const byName = (a: any, b: any) => (a.name < b.name ? -1 : 1);
      expect([...body.tools].sort(byName)).toEqual([...served].sort(byName));
      for (const tool of body.tools) expect(tool.name).toMatch(RULES.mcp);
    }
  });

  it('shows a planner its tools only: no bash, no upstream tool, no alias', async () => {
    for (const format of ['openai', 'anthropic', 'mcp'] as const) {
      const { body } = await exported(format, PETE);
      const names = body.tools.map((t: any) => (format === 'openai' ? t.function.name : t.name)).sort();
      expect(names).toEqual(['calculator', 'read_file']);
      expect(body.aliases).toEqual([]);
    }
  });

  it('calls the tool by its alias over REST, tRPC and MCP; the audit names the real tool every time', async () => {
    const before = (await audit()).length;
    const rest = await h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool: ALIAS, args: { text: 'via rest' } } });
    expect(rest.body).toMatchObject({ ok: true });
    expect(JSON.stringify(rest.body.output)).toContain('via rest');
    const trpc = await h.call('/trpc/tools.invoke', { method: 'POST', token: ALICE, json: { tool: ALIAS, args: { text: 'via trpc' } } });
    expect(trpc.body.result.data).toMatchObject({ ok: true });
    const client = new Client({ name: 'exports-e2e', version: '1.0.0' });
    await connectMcp(h, ALICE, client);
    const mcp = await client.callTool({ name: ALIAS, arguments: { text: 'via mcp' } });
    await client.close();
    expect(mcp.isError).toBeFalsy();
    expect(JSON.stringify(mcp.content)).toContain('via mcp');
    const records = (await audit()).slice(before).filter((r) => r.principal === 'alice');
    expect(records.map((r) => [r.event, r.tool])).toEqual([
      ['authorized', REAL],
      ['succeeded', REAL],
      ['authorized', REAL],
      ['succeeded', REAL],
      ['authorized', REAL],
      ['succeeded', REAL],
    ]);
  });

  it('answers the alias of a tool the caller cannot see as TOOL_NOT_FOUND on every face, as for any unknown name', async () => {
    const rest = await h.call('/api/v1/tools/invoke', { method: 'POST', token: PETE, json: { tool: ALIAS, args: { text: 'x' } } });
    expect(rest.body.denial).toEqual({
      gate: 'lookup',
      code: 'TOOL_NOT_FOUND',
      message: `There is no tool named '${ALIAS}'.`,
      hint: 'Call tools.list to see the tools you may use.',
      data: { suggestions: [] },
    });
    const trpc = await h.call('/trpc/tools.invoke', { method: 'POST', token: PETE, json: { tool: ALIAS, args: { text: 'x' } } });
    expect(trpc.body.result.data.denial).toEqual(rest.body.denial);
    const client = new Client({ name: 'exports-e2e', version: '1.0.0' });
    await connectMcp(h, PETE, client);
    const mcp = await client.callTool({ name: ALIAS, arguments: { text: 'x' } });
    await client.close();
    expect(mcp.isError).toBe(true);
    expect(mcp.structuredContent).toMatchObject({ ok: false, denial: { code: 'TOOL_NOT_FOUND' } });
    const denied = (await audit()).filter((r) => r.principal === 'pete' && r.event === 'denied');
    expect(denied.map((r) => r.tool)).toEqual([ALIAS, ALIAS, ALIAS]);
  });

  describe('a flood of alias-shaped names (each costs a walk over the caller\'s tools)', () => {
    it('refuses every one as TOOL_NOT_FOUND while /healthz keeps answering within 100 ms', async () => {
      const spellings = (i: number) => [
        `docs__${'q'.repeat(40)}_${i.toString(16).padStart(12, '0')}`,
        `${ALIAS.slice(0, -12)}${i.toString(16).padStart(12, '0')}`,
        ALIAS,
      ];
      let done = false;
      const probing = healthTimes(h, () => done, { minSamples: 5 });
      // Waves of 15 at once: the point is the lookup's cost, not how many sockets a box queues.
      const names = Array.from({ length: 100 }, (_, i) => spellings(i)).flat();
      const answers: { status: number; body: any }[] = [];
      for (let at = 0; at < names.length; at += 15) {
        const wave = names.slice(at, at + 15).map((tool) => h.call('/api/v1/tools/invoke', { method: 'POST', token: PETE, json: { tool, args: {} } }));
        answers.push(...(await Promise.all(wave)));
      }
      done = true;
      expect(answers).toHaveLength(300);
      const times = await probing;
      expect(answers.every((a) => a.status === 200 && a.body.denial?.code === 'TOOL_NOT_FOUND')).toBe(true);
      expect(Math.max(...times)).toBeLessThan(100);
    });
  });

  it('refuses an unknown format with a 400 naming the accepted ones, and keeps serving', async () => {
    for (const format of ['gemini', 'OPENAI', '', '%00', 'openai%20']) {
      const { status, body } = await exported(format);
      expect(status).toBe(400);
      expect(body.error.message).toContain('format: must be one of toolgate, openai, anthropic, mcp');
    }
    const times = await healthTimes(h, () => true, { minSamples: 3 });
    expect(Math.max(...times)).toBeLessThan(100);
  });

  describe('the CLI: toolgate tools list --format', () => {
    const toolgate = (args: string[], token = ALICE) => runCli(h, args, token);

    it('prints only the array on stdout, ready to paste, and what the alias stands for on stderr', async () => {
      const res = await toolgate(['tools', 'list', '--format', 'openai']);
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout)).toEqual((await exported('openai')).body.tools);
      expect(res.stderr).toBe(`toolgate: '${ALIAS}' stands for '${REAL}' (its name breaks this format's naming rule); a call by either name reaches it\n`);
    });

    it('prints the whole export with --json, and the planner\'s without notes', async () => {
      const res = await toolgate(['--json', 'tools', 'list', '--format', 'anthropic']);
      expect(JSON.parse(res.stdout)).toEqual((await exported('anthropic')).body);
      const pete = await toolgate(['tools', 'list', '--format', 'mcp'], PETE);
      expect(JSON.parse(pete.stdout).map((t: any) => t.name).sort()).toEqual(['calculator', 'read_file']);
      expect(pete.stderr).toBe('');
    });

    it('calls by the alias it printed', async () => {
      const res = await toolgate(['--json', 'tools', 'invoke', ALIAS, '--args', '{"text":"via cli"}']);
      expect(res.code).toBe(0);
      expect(res.stdout).toContain('via cli');
      expect((await audit()).at(-1)).toMatchObject({ event: 'succeeded', tool: REAL, principal: 'alice' });
    });
  });
});
