import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SubprocessExecutor } from '@toolgate/adapter-executor-subprocess';
import { McpToolSource } from '@toolgate/adapter-mcp-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denialOf, harness } from './harness.js';

// ADR 0062 with a real MCP source: the official memory server, started by the real stdio client at
// tier 1, killed between the commit (its approval consumed) and the handler, and kept down until
// the test lets it back. The source then refuses before writing `tools/call`, and the approval is
// given back; once the server is up again the same approval runs the call, once.

const MEMORY_SERVER = fileURLToPath(new URL('../../../node_modules/@modelcontextprotocol/server-memory/dist/index.js', import.meta.url));

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('an MCP source that restarts between the commit and the call (official memory server)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-release-mcp-'));
  const launcher = join(dir, 'launch.mjs');
  const logs: string[] = [];
  const executor = new SubprocessExecutor();
  let source: McpToolSource;

  beforeAll(async () => {
    // A launcher the test can take away, so a restart fails until it is put back.
    writeFileSync(launcher, `import ${JSON.stringify(pathToFileURL(MEMORY_SERVER).href)};\n`);
    source = await McpToolSource.start(
      { name: 'memory', command: process.execPath, args: [launcher], env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }, tier: 'unisolated', risk: 'high', permissions: [] },
      executor.processes,
      { workspaceRoot: dir, log: (line) => logs.push(line), backoff: { initialMs: 50, maxMs: 200 }, stopGraceMs: 200 },
    );
  }, 30_000);
  afterAll(async () => {
    await source?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the approval back, says so, and the same approval runs the call once the server is back', async () => {
    const h = harness({ tools: [...source.tools()], executors: [executor], principals: [{ id: 'agent', tenant: 'acme', roles: ['worker'] }] });
    const tool = 'memory__read_graph';
    const requested = await h.gateway.requestApproval(h.who('agent'), { tool, args: {} });
    if (!requested.ok) throw new Error(JSON.stringify(requested.denial));
    const approval = await h.gateway.decideApproval(h.who('approver-1'), requested.approval.id, { approve: true });

    const pid = Number(/\(pid (\d+)\)/.exec(logs.findLast((l) => l.includes("MCP server 'memory' is up")) ?? '')?.[1]);
    expect(pid).toBeGreaterThan(0);
    let killed = false;
    h.audit.afterAppend = async (record) => {
      if (record.event !== 'authorized' || killed) return;
      killed = true;
      renameSync(launcher, `${launcher}.away`);
      process.kill(pid, 'SIGKILL');
      await until('the source to notice its server is gone', () => source.status().state !== 'up');
    };

    const denial = denialOf(await h.gateway.invoke(h.who('agent'), { tool, args: {}, approvalId: approval.id }));
    expect(denial).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED', data: { reason: 'MCP_SERVER_RESTARTING', reached: false, approvalId: approval.id, approvalReleased: true } });
    expect(denial.message).toMatch(/^MCP server 'memory' is restarting/);
    expect(denial.message).toContain(`The call did not reach the tool. Approval '${approval.id}' was not used and still allows one call.`);
    expect((await h.approvals.get('acme', approval.id))?.status).toBe('approved');
    expect(h.audit.records.at(-1)).toMatchObject({ event: 'failed', detail: expect.stringContaining(`Approval '${approval.id}' was not used`) });

    renameSync(`${launcher}.away`, launcher);
    await until('the memory server to be up again', () => source.status().state === 'up');
    const ran = await h.gateway.invoke(h.who('agent'), { tool, args: {}, approvalId: approval.id });
    expect(ran).toMatchObject({ ok: true });
    expect(denialOf(await h.gateway.invoke(h.who('agent'), { tool, args: {}, approvalId: approval.id }))).toMatchObject({ code: 'APPROVAL_REQUIRED' });
  }, 60_000);
});
