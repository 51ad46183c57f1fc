import { copyFile, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable, healthTimes, runCli, startHarness, type Harness } from './e2e-harness.js';
import {
  ALICE,
  approve,
  BASE64_RUN,
  CAROL,
  CHART_SERVER,
  CHART_VERSION,
  directCell,
  invoke,
  invokeApproved,
  MODULES,
  nodeReadOnlyPaths,
  officialServer,
  pngOf,
  renderTable,
  TABLE_CALLS,
  TABLE_EXTRA_CALLS,
  toolgateCell,
  type TableRow,
  type TableServer,
} from './mcp-official-servers-fixtures.js';

// Response bodies are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

const unavailable = await bwrapUnavailable('mcp-official-servers.e2e');
/** How long `/healthz` may take while a server answers a huge result, less the time the box kept the server off a CPU. */
const HEALTH_BOUND_MS = 100;

/** The deadline of one call of server-everything: long enough for the table's calls, short enough to watch one pass. */
const EVERYTHING_TIMEOUT_MS = 4000;

/** Until `check` holds, polling every 50 ms, or fails naming `what` after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The four official MCP servers (issue 12), installed as dev dependencies and run from
 * node_modules through the real server, as a user runs them: filesystem, memory and
 * sequential-thinking at tier `bwrap` with `readOnlyPaths` naming node_modules, everything at
 * `unisolated`, and a suite server reporting version `0.8.x` at `bwrap`. Every defect of the
 * issue is tried as an agent sees it, over REST and the CLI. Each server starts once.
 */
describe.skipIf(unavailable !== undefined)('the official MCP servers through Toolgate', { timeout: 120_000 }, () => {
  let h: Harness;
  let base: string;
  let workspaces: string;
  /** The host directory the bwrap filesystem server sees as /workspace. */
  let filesDir: string;
  /** A read-only path of the memory server besides node_modules: moved away, it holds the server's restarts back. */
  let memoryExtra: string;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'toolgate-official-'));
    workspaces = join(base, 'workspaces');
    filesDir = join(workspaces, '_mcp', 'files');
    const chartDir = join(base, 'chart');
    await mkdir(chartDir, { recursive: true });
    await writeFile(join(chartDir, 'chart-server.mjs'), CHART_SERVER);
    await mkdir(filesDir, { recursive: true });
    memoryExtra = join(base, 'memory-extra');
    await mkdir(memoryExtra, { recursive: true });
    // About 3 MB of text: server-filesystem answers it as text and again as structuredContent (defect 2).
    await writeFile(join(filesDir, 'big.txt'), 'All work and no play makes Jack a dull boy.\n'.repeat(72_000));
    await writeFile(join(filesDir, 'small.txt'), 'hello from the workspace\n');
    await writeFile(join(filesDir, 'picture.png'), pngOf(300 * 1024));
    await writeFile(join(filesDir, 'edit-me.txt'), 'one\n');
    const readOnlyPaths = nodeReadOnlyPaths();
    h = await startHarness(
      { TOOLGATE_WORKSPACE_ROOT: workspaces },
      {
        mcpServers: {
          servers: [
            // Unverified code: the default risk (high), so every call needs an approval.
            { name: 'files', command: 'node', args: [officialServer('server-filesystem'), '/workspace'], tier: 'bwrap', readOnlyPaths },
            { name: 'memory', command: 'node', args: [officialServer('server-memory')], env: { MEMORY_FILE_PATH: '/workspace/memory.jsonl' }, tier: 'bwrap', readOnlyPaths: [...readOnlyPaths, memoryExtra] },
            { name: 'thinking', command: 'node', args: [officialServer('server-sequential-thinking')], env: { DISABLE_THOUGHT_LOGGING: 'true' }, tier: 'bwrap', risk: 'low', readOnlyPaths },
            // At unisolated the key means nothing: accepted, checked and logged as such.
            { name: 'everything', command: process.execPath, args: [officialServer('server-everything'), 'stdio'], tier: 'unisolated', risk: 'low', timeoutMs: EVERYTHING_TIMEOUT_MS, readOnlyPaths: [MODULES] },
            { name: 'chart', command: 'node', args: [join(chartDir, 'chart-server.mjs')], env: { CHART_VERSION }, tier: 'bwrap', risk: 'low', readOnlyPaths: [chartDir] },
          ],
        },
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'carol', token: CAROL, tenant: 'acme', roles: ['approver', 'operator'] },
          ],
          roles: { worker: ['*'] },
          tenants: {
            acme: {
              tools: ['*'],
              selfApproval: false,
              grants: ['files', 'memory', 'thinking', 'everything', 'chart'].map((name) => ({ type: 'exec', scope: `mcp:${name}` })),
            },
          },
        },
      },
    );
  });
  afterAll(async () => {
    if (process.env['DUMP_LOGS']) console.log(h?.logs.join('\n'));
    await h?.stop();
    await rm(base, { recursive: true, force: true });
  });

  const tools = async (): Promise<any[]> => (await h.call('/api/v1/tools', { token: ALICE })).body.tools;
  const tool = async (name: string): Promise<any> => (await tools()).find((t) => t.name === name);

  describe('defect 9: an installed server at tier 2', () => {
    it('runs the official servers from node_modules inside the sandbox, with node_modules mounted read-only', async () => {
      for (const name of ['files', 'memory', 'thinking']) {
        const paths = name === 'memory' ? [...nodeReadOnlyPaths(), memoryExtra] : nodeReadOnlyPaths();
        expect(h.logs).toContain(`info MCP server '${name}' may read, read-only: ${paths.join(', ')}`);
        expect(h.logs.some((l) => l.startsWith(`info mcp ${name}: MCP server '${name}' is up (pid `))).toBe(true);
      }
      const listed = await invoke(h, 'files__list_allowed_directories', {}, { approvalId: await approve(h, 'files__list_allowed_directories', {}) });
      expect(listed).toMatchObject({ ok: true });
      expect(JSON.stringify(listed.output)).toContain('/workspace');
    });

    it('lets the sandboxed server write only its workspace, which is the host directory Toolgate gave it', async () => {
      const args = { path: '/workspace/note.txt', content: 'written in the sandbox' };
      const wrote = await invoke(h, 'files__write_file', args, { approvalId: await approve(h, 'files__write_file', args) });
      expect(wrote).toMatchObject({ ok: true });
      expect(await readFile(join(filesDir, 'note.txt'), 'utf8')).toBe('written in the sandbox');
      // The memory server keeps its graph where MEMORY_FILE_PATH says: its own workspace, not node_modules.
      const entity = { entities: [{ name: 'toolgate', entityType: 'gateway', observations: ['fail-closed'] }] };
      expect(await invoke(h, 'memory__create_entities', entity, { approvalId: await approve(h, 'memory__create_entities', entity) })).toMatchObject({ ok: true });
      expect(await readFile(join(workspaces, '_mcp', 'memory', 'memory.jsonl'), 'utf8')).toContain('"toolgate"');
    });

    it('logs that readOnlyPaths mean nothing at unisolated', () => {
      expect(h.logs).toContain(
        "warn MCP server 'everything': its readOnlyPaths mean nothing at tier 'unisolated', where it can read the whole host as Toolgate's user; they are mounted only at tier 'bwrap'",
      );
    });

    describe("read-only paths that reach Toolgate's own files: the start fails naming the server, the entry and why", () => {
      const refusedBase = () => join(base, 'refused');
      it.each([
        ['the data dir', (b: string) => join(b, 'data'), "it is Toolgate's data dir (TOOLGATE_DATA_DIR)"],
        ['a directory holding the data dir', (b: string) => b, "it contains Toolgate's data dir (TOOLGATE_DATA_DIR)"],
        ["a tenant's workspace", (b: string) => join(b, 'workspaces', 'acme'), "it lies inside Toolgate's workspace root (TOOLGATE_WORKSPACE_ROOT)"],
        ['the principals file', (b: string) => join(b, 'etc', 'principals.json'), 'it is the principals file (TOOLGATE_PRINCIPALS_FILE)'],
        ["a remote server's credential file", (b: string) => join(b, 'etc', 'docs-token'), "it is MCP server 'docs''s credential file (headers.authorization)"],
        ['a link to the data dir', (b: string) => join(b, 'link-to-data'), `it resolves through a symbolic link to`],
      ])('refuses %s', async (_what, pathOf, why) => {
        const b = refusedBase();
        await mkdir(join(b, 'data'), { recursive: true });
        await mkdir(join(b, 'workspaces', 'acme'), { recursive: true });
        await mkdir(join(b, 'etc'), { recursive: true });
        await writeFile(join(b, 'etc', 'principals.json'), JSON.stringify({ principals: [{ id: 'alice', token: ALICE, tenant: 'acme', roles: [] }], roles: {}, tenants: { acme: { tools: [] } } }));
        await writeFile(join(b, 'etc', 'docs-token'), 'not-a-real-token');
        await symlink(join(b, 'data'), join(b, 'link-to-data')).catch(() => undefined);
        const path = pathOf(b);
        const started = startHarness(
          { TOOLGATE_DATA_DIR: join(b, 'data'), TOOLGATE_WORKSPACE_ROOT: join(b, 'workspaces'), TOOLGATE_PRINCIPALS_FILE: join(b, 'etc', 'principals.json') },
          {
            mcpServers: {
              servers: [
                { name: 'files', command: 'node', args: [officialServer('server-filesystem'), '/workspace'], tier: 'bwrap', readOnlyPaths: [MODULES, path] },
                { name: 'docs', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: { file: join(b, 'etc', 'docs-token'), prefix: 'Bearer ' } } },
              ],
            },
          },
        );
        await expect(started).rejects.toThrow(`MCP server 'files': readOnlyPaths[1] ${JSON.stringify(path)} is refused: ${why}`);
      });
    });
  });

  describe('defect 1: a server version that is not semver', () => {
    it(`registers every tool of a server reporting ${CHART_VERSION} under a valid version derived from it, and counts what was accepted`, async () => {
      const chart = (await tools()).filter((t) => t.name.startsWith('chart__'));
      expect(chart.map((t) => [t.name, t.version])).toEqual([
        ['chart__generate_bar_chart', '0.8.0+0.8.x'],
        ['chart__generate_pie_chart', '0.8.0+0.8.x'],
      ]);
      expect(h.logs).toContain("info MCP server 'chart' started with 2 tool(s) accepted and 0 rejected");
      const ran = await invoke(h, 'chart__generate_bar_chart', { values: [1, 2, 3] }, { version: '0.8.0+0.8.x' });
      expect(ran).toMatchObject({ ok: true, output: { content: [{ type: 'text', text: 'generate_bar_chart of 3 values' }] } });
    });
  });

  describe('defect 2: a result over the message cap', () => {
    it('answers a 3 MB read_text_file with OUTPUT_TOO_LARGE, keeps the server up and /healthz prompt, and serves the next call', async () => {
      const upBefore = h.logs.filter((l) => l.includes("MCP server 'files' is up")).length;
      const args = { path: '/workspace/big.txt' };
      const approvalId = await approve(h, 'files__read_text_file', args);
      let done = false;
      const big = invoke(h, 'files__read_text_file', args, { approvalId }).finally(() => (done = true));
      const times = await healthTimes(h, () => done);
      const answer = await big;
      expect(answer.ok, JSON.stringify(answer)).toBe(false);
      expect(answer.denial.code, JSON.stringify(answer.denial)).toBe('OUTPUT_TOO_LARGE');
      expect(Math.max(...times)).toBeLessThan(HEALTH_BOUND_MS);
      expect(h.logs.some((l) => l.includes("MCP server 'files'") && l.includes('stopped unexpectedly'))).toBe(false);
      const small = await invoke(h, 'files__read_text_file', { path: '/workspace/small.txt' }, { approvalId: await approve(h, 'files__read_text_file', { path: '/workspace/small.txt' }) });
      expect(small).toMatchObject({ ok: true });
      expect(JSON.stringify(small.output)).toContain('hello from the workspace');
      expect(h.logs.filter((l) => l.includes("MCP server 'files' is up")).length).toBe(upBefore);
    });
  });

  describe('defect 4: tools the client cannot call', () => {
    it('leaves simulate-research-query (taskSupport "required") out of the list and says why in the log', async () => {
      const names = (await tools()).map((t) => t.name);
      expect(names).toContain('everything__echo');
      expect(names).not.toContain('everything__simulate_research_query');
      expect(h.logs.some((l) => l.includes("MCP server 'everything'") && l.includes('"simulate-research-query"') && /task/i.test(l))).toBe(true);
      // Not offered, so an agent that names it anyway is told it does not exist, never the SDK's error blaming the server.
      const called = await invoke(h, 'everything__simulate_research_query', { topic: 'gateways' });
      expect(called.denial).toMatchObject({ gate: 'lookup', code: 'TOOL_NOT_FOUND' });
    });
  });

  describe('defect 5: binary data in structuredContent', () => {
    it('gives no base64 of read_media_file in either field, and says what was left out', async () => {
      const args = { path: '/workspace/picture.png' };
      const answer = await invoke(h, 'files__read_media_file', args, { approvalId: await approve(h, 'files__read_media_file', args) });
      expect(answer).toMatchObject({ ok: true });
      const text = JSON.stringify(answer.output);
      expect(text).not.toMatch(BASE64_RUN);
      expect(text.length).toBeLessThan(4096);
      expect(text).toContain('image/png');
    });
  });

  describe('defect 6: health shows each source', () => {
    it('lists every source with its state and counts in /healthz', async () => {
      const { status, body } = await h.call('/healthz');
      expect(status).toBe(200);
      const sources = Object.fromEntries((body.sources as any[]).map((s) => [s.name, s]));
      for (const name of ['files', 'memory', 'thinking', 'everything', 'chart']) expect(sources[name]).toMatchObject({ state: 'up', transport: 'stdio' });
      expect(sources['chart']).toMatchObject({ accepted: 2, rejected: 0 });
      expect(sources['everything'].rejected).toBeGreaterThanOrEqual(1);
      // A public report: counts and states, no command or path.
      expect(JSON.stringify(body)).not.toContain(MODULES);
      // The tool list says the same, so an agent missing a tool can see why.
      const listed = (await h.call('/api/v1/tools', { token: ALICE })).body;
      expect(listed.sources.map((s: any) => [s.name, s.state])).toEqual(expect.arrayContaining(['files', 'memory', 'thinking', 'everything', 'chart'].map((n) => [n, 'up'])));
    });
  });

  describe('defect 7: long descriptions', () => {
    it("passes sequential-thinking's whole parameter guide, as the server wrote it, flattened to one line", async () => {
      const client = new Client({ name: 'direct', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [officialServer('server-sequential-thinking')], env: { PATH: '/usr/bin:/bin' }, stderr: 'ignore' }));
      try {
        const direct = (await client.listTools()).tools.find((t) => t.name === 'sequentialthinking')!;
        expect(direct.description!.length).toBeGreaterThan(2000);
        const shown = await tool('thinking__sequentialthinking');
        // Flattened as docs/mcp.md says: every run of white space (line breaks too) is one space.
        expect(shown.description).toBe(direct.description!.replace(/\s+/g, ' ').trim());
        expect(shown.description).not.toContain('cut by Toolgate');
      } finally {
        await client.close();
      }
    });
  });

  describe('defect 8: notifications', () => {
    it("re-reads server-everything's tools on tools/list_changed", async () => {
      // server-everything announces its conditional tools as soon as it is initialised; the re-read follows after a short delay.
      await until('the re-listing after tools/list_changed', () => h.logs.some((l) => l.includes("MCP server 'everything' re-listed its tools (tools/list_changed)")));
      const line = h.logs.find((l) => l.includes("MCP server 'everything' re-listed its tools (tools/list_changed)"))!;
      expect(line).toMatch(/: 15 accepted, 1 rejected; tools: everything__echo, /);
    });

    it("puts server-everything's log messages in the operator log at their level", async () => {
      const started = await invoke(h, 'everything__toggle_simulated_logging', {});
      expect(started).toMatchObject({ ok: true });
      try {
        await until('a log message of server-everything', () => h.logs.some((l) => l.includes("MCP server 'everything' log (")));
        const line = h.logs.find((l) => l.includes("MCP server 'everything' log ("))!;
        expect(line).toMatch(/^(info|warn|error) mcp everything: MCP server 'everything' log \((debug|info|notice|warning|error|critical|alert|emergency)/);
        expect(line).toMatch(/-level message|level-message/);
      } finally {
        await invoke(h, 'everything__toggle_simulated_logging', {});
      }
    });
  });

  describe('a call past its deadline (docs/mcp.md, "TIMEOUT")', () => {
    it("is answered TIMEOUT at the execute gate by the executor's deadline, and the server serves the next call", async () => {
      const began = performance.now();
      const answer = await invoke(h, 'everything__trigger_long_running_operation', { duration: 30, steps: 3 });
      const took = performance.now() - began;
      expect(answer.ok).toBe(false);
      expect(answer.denial).toMatchObject({ gate: 'execute', code: 'TIMEOUT', message: `The tool did not finish within its ${EVERYTHING_TIMEOUT_MS} ms deadline.` });
      expect(took).toBeGreaterThanOrEqual(EVERYTHING_TIMEOUT_MS - 50);
      expect(took).toBeLessThan(EVERYTHING_TIMEOUT_MS + 3000);
      expect(await invoke(h, 'everything__echo', { message: 'still here' })).toMatchObject({ ok: true });
    });
  });

  describe('defect 10: repairs shown', () => {
    it('says that count 50 ran as 10, in the result and in the CLI', async () => {
      const answer = await invoke(h, 'everything__get_resource_links', { count: 50 });
      expect(answer.ok).toBe(true);
      expect(answer.repaired).toEqual([expect.objectContaining({ kind: 'clamp', path: '/count' })]);
      expect(answer.output.content.filter((c: any) => c.type !== 'text')).toHaveLength(10);
      const cli = await runCli(h, ['tools', 'invoke', 'everything__get_resource_links', '--args', JSON.stringify({ count: 50 })], ALICE);
      expect(cli.code).toBe(0);
      expect(cli.stdout.split('\n').filter((l) => l.startsWith('repaired: '))).toEqual([expect.stringMatching(/^repaired: clamp \/count: .*10/)]);
    });
  });

  describe('defect 3: an approval is used only by a call handed to the tool', () => {
    it('keeps the approval of a call made while the server restarts, and runs the call with it once the server is back', async () => {
      const pidLine = [...h.logs].reverse().find((l) => l.includes("MCP server 'memory' is up (pid "))!;
      const pid = Number(/\(pid (\d+)\)/.exec(pidLine)![1]);
      // Kept in the server's workspace, so the entity outlives the server's process.
      const entity = { entities: [{ name: 'restart-proof', entityType: 'test', observations: ['fail-closed'] }] };
      expect(await invoke(h, 'memory__create_entities', entity, { approvalId: await approve(h, 'memory__create_entities', entity) })).toMatchObject({ ok: true });
      const args = { names: ['restart-proof'] };
      const approvalId = await approve(h, 'memory__open_nodes', args);
      const upBefore = h.logs.filter((l) => l.includes("MCP server 'memory' is up")).length;
      // One of its read-only paths gone, the server cannot come back (the runner refuses to start
      // it without the path), so the test decides how long it restarts; the running process keeps its mount.
      await rename(memoryExtra, `${memoryExtra}.away`);
      let movedBack = false;
      try {
        process.kill(pid, 'SIGKILL');
        await until('a restart refused for the missing read-only path', () =>
          // Checked again before the restart (the start-time check, then the runner's): either refusal names the path.
          h.logs.some((l) => l.includes("MCP server 'memory': restart attempt 1 failed") && l.includes(JSON.stringify(memoryExtra)) && l.includes('does not exist on this host')),
        );
        // Down, its tools are not offered, and health says where it is (defect 6).
        const [listedWhileDown, healthWhileDown] = await Promise.all([tool('memory__open_nodes'), h.call('/healthz')]);
        const refused = await invoke(h, 'memory__open_nodes', args, { approvalId });
        expect(listedWhileDown).toBeUndefined();
        expect(healthWhileDown.body.sources.find((s: any) => s.name === 'memory')).toMatchObject({ state: 'restarting' });
        expect(refused.ok).toBe(false);
        expect(refused.denial).toMatchObject({ gate: 'lookup', code: 'SOURCE_UNAVAILABLE', data: { source: 'memory', state: 'restarting' } });
        expect(refused.denial.message).toMatch(/^MCP server 'memory' is restarting \(attempt \d+\), so 'memory__open_nodes' cannot be called now\.$/);
        const approval = (await h.call(`/api/v1/approvals/${approvalId}`, { token: CAROL })).body;
        expect(approval.status).toBe('approved');
        expect(approval.consumedAt ?? null).toBeNull();
        await rename(`${memoryExtra}.away`, memoryExtra);
        movedBack = true;
      } finally {
        if (!movedBack) await rename(`${memoryExtra}.away`, memoryExtra);
      }
      await until('the memory server to come back', () => h.logs.filter((l) => l.includes("MCP server 'memory' is up")).length > upBefore);
      await until('the memory source to be up', async () => (await tool('memory__open_nodes')) !== undefined);
      const ran = await invoke(h, 'memory__open_nodes', args, { approvalId });
      expect(ran).toMatchObject({ ok: true });
      expect(JSON.stringify(ran.output)).toContain('fail-closed');
      const replay = await invoke(h, 'memory__open_nodes', args, { approvalId });
      expect(replay.ok).toBe(false);
      expect(replay.denial.gate).toBe('approval');
    });
  });
  describe('the table of docs/mcp-official-servers.md', () => {
    /** A client of the server itself, declaring (and answering) what Toolgate declares to it. */
    async function direct(command: string, args: string[], env: Record<string, string> = {}): Promise<Client> {
      const client = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: { elicitation: { form: {}, url: {} }, sampling: {} } });
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
      client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'fixed', role: 'assistant', content: { type: 'text', text: 'hello' } }));
      await client.connect(new StdioClientTransport({ command, args, env: { PATH: '/usr/bin:/bin', ...env }, stderr: 'ignore' }));
      return client;
    }

    it('is what a direct client and Toolgate give now, for every tool of the four servers', async () => {
      const directDir = join(base, 'direct-files');
      await mkdir(directDir, { recursive: true });
      for (const file of ['small.txt', 'big.txt', 'picture.png', 'edit-me.txt']) await copyFile(join(filesDir, file), join(directDir, file));
      const clients: Record<TableServer, Client> = {
        everything: await direct(process.execPath, [officialServer('server-everything'), 'stdio']),
        files: await direct(process.execPath, [officialServer('server-filesystem'), directDir]),
        memory: await direct(process.execPath, [officialServer('server-memory')], { MEMORY_FILE_PATH: join(base, 'direct-memory.jsonl') }),
        thinking: await direct(process.execPath, [officialServer('server-sequential-thinking')], { DISABLE_THOUGHT_LOGGING: 'true' }),
      };
      try {
        const listed = await tools();
        const rows: TableRow[] = [];
        const versions = {} as Record<TableServer, string>;
        for (const server of Object.keys(TABLE_CALLS) as TableServer[]) {
          const client = clients[server];
          versions[server] = client.getServerVersion()?.version ?? '?';
          const offered = (await client.listTools()).tools.map((t) => t.name);
          // Every tool the server offers has a row: a new tool in an upgrade fails the suite until it is added.
          expect(Object.keys(TABLE_CALLS[server]).sort()).toEqual([...offered].sort());
          const calls = [
            ...Object.entries(TABLE_CALLS[server]).map(([name, args]) => ({ name, label: name, args })),
            ...TABLE_EXTRA_CALLS.filter((c) => c.server === server).map((c) => ({ name: c.tool, label: c.label, args: c.args })),
          ];
          for (const { name, label, args: argsFor } of calls) {
            const directOutcome = await client.callTool({ name, arguments: argsFor(directDir) }, undefined, { timeout: 20_000 }).then(
              (result) => ({ result }),
              (error: unknown) => ({ error }),
            );
            const toolgateName = `${server}__${name.replace(/-/g, '_').toLowerCase()}`;
            const manifest = listed.find((t) => t.name === toolgateName);
            let cell: string;
            if (manifest === undefined) {
              const reason = h.logs.find((l) => l.includes(`MCP server '${server}': tool "${name}" is not registered: `));
              cell = toolgateCell(undefined, reason?.split(' is not registered: ')[1] ?? 'no reason logged');
            } else {
              cell = toolgateCell(await invokeApproved(h, toolgateName, argsFor('/workspace'), manifest.risk === 'high' || manifest.risk === 'critical'));
            }
            rows.push({ server, tool: label, direct: directCell(directOutcome), toolgate: cell });
            // A toggle stays on until toggled again: turn it off on both sides.
            if (name.startsWith('toggle-')) {
              await client.callTool({ name, arguments: {} });
              if (manifest) await invoke(h, toolgateName, {});
            }
          }
        }
        const table = renderTable(rows, versions);
        const path = join(MODULES, '..', 'docs', 'mcp-official-servers.md');
        if (process.env['TOOLGATE_WRITE_MCP_TABLE'] === '1') await writeFile(path, table);
        expect(await readFile(path, 'utf8').catch(() => '(missing)')).toBe(table);
      } finally {
        await Promise.all(Object.values(clients).map((c) => c.close()));
      }
    });
  });
});
