import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

// Response bodies are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

/** The third-party client: MCP Inspector's CLI (a dev dependency), as a user runs it from node_modules/.bin. */
const INSPECTOR = fileURLToPath(new URL('../../../node_modules/.bin/mcp-inspector-cli', import.meta.url));
/** No single run of the client may take longer than this; it is killed with its children after. */
const RUN_BOUND_MS = 60_000;

const ALICE = 'alice-token-mcp-inspector-0123456789ab';
const PETE = 'pete-token-mcp-inspector-0123456789ab';
const OLGA = 'olga-token-mcp-inspector-0123456789ab';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the inspector CLI once, from `cwd` (a folder whose parent holds the `package.json` it
 * reads its client identity from), with its whole process group killed at the bound.
 */
function inspect(cwd: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(INSPECTOR, ['--cli', ...args], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      reject(new Error(`mcp-inspector-cli ${args.join(' ')} did not finish within ${RUN_BOUND_MS} ms; stderr: ${stderr.slice(-500)}`));
    }, RUN_BOUND_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The JSON document the inspector prints on stdout for a successful method. */
function printed(run: Run): any {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

describe('a third-party MCP client (MCP Inspector CLI) against /mcp over HTTP with a bearer header', { timeout: 4 * RUN_BOUND_MS }, () => {
  let h: Harness;
  let base: string;
  let cwd: string;
  let url: string;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'toolgate-mcp-inspector-'));
    // The inspector reads `../package.json` from its working directory for its client name and version.
    await writeFile(join(base, 'package.json'), JSON.stringify({ name: 'x', version: '0.0.0' }));
    cwd = join(base, 'run');
    await mkdir(cwd);
    h = await startHarness(
      {},
      {
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'pete', token: PETE, tenant: 'acme', roles: ['planner'] },
            { id: 'olga', token: OLGA, tenant: 'acme', roles: ['operator'] },
          ],
          roles: { worker: ['*'], planner: ['calculator', 'read_file'], operator: [] },
          tenants: { acme: { tools: ['*'], grants: [{ type: 'filesystem', scope: 'workspace' }] } },
        },
      },
    );
    url = `${h.server.url}/mcp`;
  });
  afterAll(async () => {
    await h?.stop();
    await rm(base, { recursive: true, force: true });
  });

  const as = (token: string) => ['--transport', 'http', '--header', `Authorization: Bearer ${token}`];
  const audit = async (): Promise<any[]> => (await h.call('/api/v1/audit?limit=1000', { token: OLGA })).body;
  const restNames = async (token: string): Promise<string[]> => ((await h.call('/api/v1/tools', { token })).body.tools as any[]).map((t) => t.name).sort();

  for (const [who, token] of [
    ['alice (worker, every tool)', ALICE],
    ['pete (planner)', PETE],
  ] as const) {
    it(`tools/list shows ${who} exactly the tools REST shows them, with closed schemas, titles and risk hints`, async () => {
      const listed = printed(await inspect(cwd, [url, ...as(token), '--method', 'tools/list']));
      const names = (listed.tools as any[]).map((t) => t.name).sort();
      expect(names).toEqual(await restNames(token));
      for (const tool of listed.tools as any[]) {
        expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
        expect(typeof tool.title).toBe('string');
        expect(Object.keys(tool.annotations).sort()).toEqual(['destructiveHint', 'openWorldHint', 'readOnlyHint', 'title']);
      }
    });
  }

  it('role filtering reaches the third-party client: a planner is shown no bash', async () => {
    const listed = printed(await inspect(cwd, [url, ...as(PETE), '--method', 'tools/list']));
    const names = (listed.tools as any[]).map((t) => t.name);
    expect(names).toContain('calculator');
    expect(names).not.toContain('bash');
  });

  it('tools/call of the calculator returns the result, and the call is audited', async () => {
    const before = (await audit()).length;
    const result = printed(await inspect(cwd, [url, ...as(ALICE), '--method', 'tools/call', '--tool-name', 'calculator', '--tool-arg', 'expression=2+3*4']));
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toEqual({ result: 14 });
    expect(JSON.parse(result.content[0].text)).toEqual({ result: 14 });
    const records = (await audit()).slice(before).filter((r) => r.tool === 'calculator' && r.principal === 'alice');
    expect(records.length).toBeGreaterThan(0);
  });

  it("a denied call is a tool result with isError and the gate's text, the delegation hint included", async () => {
    const result = printed(await inspect(cwd, [url, ...as(PETE), '--method', 'tools/call', '--tool-name', 'bash', '--tool-arg', 'command=id']));
    expect(result.isError).toBe(true);
    const text: string = result.content[0].text;
    expect(text).toMatch(/allow gate/);
    expect(text).toContain('TOOL_NOT_ALLOWED');
    // The delegation hint names who holds the tool, so the agent can hand the task on.
    expect(text).toContain('delegate the task to one of: alice');
    expect(result.structuredContent.denial).toMatchObject({ gate: 'allow', code: 'TOOL_NOT_ALLOWED' });
  });

  describe('missing or wrong token', () => {
    const spellings: [string, string[]][] = [
      ['no Authorization header', ['--transport', 'http']],
      ['a wrong bearer token', as('not-a-token-of-anyone-0000000000')],
      ['the Basic scheme with a real token', ['--transport', 'http', '--header', `Authorization: Basic ${Buffer.from(`alice:${ALICE}`).toString('base64')}`]],
      ['a real token under another header', ['--transport', 'http', '--header', `X-Api-Key: ${ALICE}`]],
    ];
    for (const [name, args] of spellings) {
      it(`${name}: the client fails with the server's 401 text, lists nothing, and nothing is audited`, async () => {
        const before = (await audit()).length;
        const run = await inspect(cwd, [url, ...args, '--method', 'tools/list']);
        expect(run.code).not.toBe(0);
        expect(run.stdout).not.toContain('"tools"');
        expect(run.stderr).toMatch(/missing bearer token|invalid bearer token/);
        expect((await audit()).length).toBe(before);
      });
    }
  });
});
