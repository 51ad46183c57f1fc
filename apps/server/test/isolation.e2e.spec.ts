import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { livingProcesses, sleepMarker } from '@toolgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Log } from '../src/logger.js';
import { StartupError } from '../src/startup-error.js';
import { startServer } from '../src/server.js';
import { bwrapUnavailable, startHarness, timedLessCpuWait, type Harness } from './e2e-harness.js';

// Decided once, as in the bwrap executor's spec: a missing sandbox skips with its reason, but
// under CI=true it fails, because these are the tests that hold the default tier's isolation.
const unavailable = await bwrapUnavailable('isolation e2e');

const HMAC_KEY = `hmac-${'0123456789abcdef'.repeat(3)}-isolation`;
const ALICE = 'alice-token-isolation-0123456789';
const BOB = 'bob-token-isolation-0123456789ab';
const OTHER_SECRET = 'tenant-beta-private-0123456789';
const GRANTS = [
  { type: 'exec', scope: '*' },
  { type: 'filesystem', scope: 'workspace' },
];
const principals = {
  principals: [
    { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker', 'operator', 'approver'] },
    { id: 'bob', token: BOB, tenant: 'beta', roles: ['worker', 'operator', 'approver'] },
  ],
  roles: { worker: ['*'] },
  tenants: {
    acme: { tools: ['*'], selfApproval: true, grants: GRANTS },
    beta: { tools: ['*'], selfApproval: true, grants: GRANTS },
  },
};

/**
 * A minimal MCP server over stdio (newline-delimited JSON-RPC) with no dependencies, so it runs
 * inside the sandbox where the repository's node_modules are not mounted. Its one tool reports
 * what a hostile server could learn: its environment, its init's, and each given path's content.
 */
const SPY_SERVER = String.raw`
import { readFileSync, readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
const attempt = (f) => { try { return f(); } catch (e) { return 'ERR ' + (e.code ?? e.message); } };
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'spy', version: '1.0.0' } } });
  else if (m.method === 'tools/list') send({ id: m.id, result: { tools: [{ name: 'probe', description: 'Reports what it can see.', inputSchema: { type: 'object', properties: { paths: { type: 'array', items: { type: 'string' } }, pid: { type: 'number' } }, required: ['paths', 'pid'], additionalProperties: false } }] } });
  else if (m.method === 'tools/call') {
    const { paths, pid } = m.params.arguments;
    const environs = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map((p) => attempt(() => readFileSync('/proc/' + p + '/environ', 'utf8')));
    const report = {
      env: process.env,
      environs,
      reads: Object.fromEntries(paths.map((p) => [p, attempt(() => readFileSync(p, 'utf8').slice(0, 200))])),
      signal: attempt(() => (process.kill(pid, 0), 'SIGNALLED')),
    };
    send({ id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(report) }] } });
  } else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'no such method' } });
});
`;

describe.skipIf(unavailable !== undefined)('process isolation at the default tier (bwrap), end to end', () => {
  let base: string;
  let dataDir: string;
  let principalsFile: string;
  let h: Harness;

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-isolation-')));
    dataDir = join(base, 'data');
    principalsFile = join(dataDir, 'principals.json');
    // The default layout: workspaces inside the data dir, one level below state, audit and keys.
    await mkdir(join(dataDir, 'workspaces', '_mcp', 'spy'), { recursive: true, mode: 0o755 });
    await writeFile(join(dataDir, 'workspaces', '_mcp', 'spy', 'spy-server.mjs'), SPY_SERVER);
    await writeFile(principalsFile, JSON.stringify(principals), { mode: 0o600 });
    // The key sits in the gateway's own environment too: nothing may copy it into a child.
    process.env['TOOLGATE_AUDIT_HMAC_KEY'] = HMAC_KEY;
    h = await startHarness(
      { TOOLGATE_DATA_DIR: dataDir, TOOLGATE_PRINCIPALS_FILE: principalsFile, TOOLGATE_AUDIT_HMAC_KEY: HMAC_KEY },
      { mcpServers: { servers: [{ name: 'spy', command: 'node', args: ['spy-server.mjs'], env: {}, tier: 'bwrap' }] } },
    );
  });
  afterAll(async () => {
    delete process.env['TOOLGATE_AUDIT_HMAC_KEY'];
    await h?.stop();
    await rm(base, { recursive: true, force: true });
  });

  const invoke = (tool: string, args: object, token = ALICE) =>
    h.call('/api/v1/tools/invoke', { method: 'POST', token, json: { tool, args, grants: GRANTS, approved: true } });
  const bash = async (command: string, token = ALICE) => {
    const res = await invoke('bash', { command }, token);
    expect(res.body).toMatchObject({ ok: true });
    return res.body.output as { exit_code: number; stdout: string; stderr: string };
  };
  const everything = (o: { stdout: string; stderr: string }) => o.stdout + o.stderr;

  it('offers bash and git at the bwrap tier without TOOLGATE_SHELL_TIER, and tightens the data dir to 0700', async () => {
    const { body } = await h.call('/api/v1/tools', { token: ALICE });
    const names = body.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(expect.arrayContaining(['bash', 'git', 'spy__probe']));
    expect(body.tools.find((t: { name: string }) => t.name === 'bash').description).toContain('sandbox that sees only the workspace');
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    expect(h.logs.some((l) => l.includes(`data dir ${dataDir} was mode 755; set to 700`))).toBe(true);
    expect(h.logs.some((l) => /NOT offered|UNISOLATED/.test(l))).toBe(false);
  });

  describe('environment theft', () => {
    it("finds neither the HMAC key nor a token in any environment the shell can read", async () => {
      const out = await bash(
        [
          'cat /proc/self/environ | tr "\\0" "\\n"',
          'cat /proc/$PPID/environ /proc/1/environ 2>&1 | tr "\\0" "\\n"',
          `cat /proc/${process.pid}/environ 2>&1`,
          'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done 2>/dev/null',
          'env',
        ].join('\n'),
      );
      expect(everything(out)).not.toContain(HMAC_KEY);
      expect(everything(out)).not.toContain(ALICE);
      expect(everything(out)).not.toContain('TOOLGATE_');
      expect(out.stdout).toContain('HOME=/workspace');
    });
  });

  describe('data dir access', () => {
    it('inherits no descriptor of the gateway: no state.db, audit segment, principals file or socket', async () => {
      const out = await bash('for fd in /proc/self/fd/* /proc/1/fd/*; do echo "$fd -> $(readlink "$fd")"; done');
      const targets = out.stdout.trim().split('\n').map((line) => line.slice(line.indexOf(' -> ') + 4));
      expect(targets.length).toBeGreaterThanOrEqual(6);
      // Only stdio plumbing: a file opened by the gateway would show as its host path.
      for (const target of targets) expect(target).toMatch(/^(\/dev\/null|pipe:\[\d+\]|socket:\[\d+\]|anon_inode:\[eventfd\]|)$/);
      expect(out.stdout).not.toContain(dataDir);
    });
    it('cannot read or write the data dir, principals, state.db or the audit segments by any path', async () => {
      const segments = await readdir(join(dataDir, 'audit'));
      expect(segments.length).toBeGreaterThan(0);
      const targets = [
        dataDir,
        principalsFile,
        join(dataDir, 'state.db'),
        join(dataDir, 'audit'),
        ...segments.map((s) => join(dataDir, 'audit', s)),
        '../principals.json',
        '../../principals.json',
        '../../state.db',
        '/workspace/../principals.json',
        '../../audit',
      ];
      const before = await readFile(principalsFile, 'utf8');
      const out = await bash(
        [
          ...targets.map((t) => `cat '${t}' 2>/dev/null && echo "READ ${t}"; ls '${t}' 2>/dev/null && echo "LISTED ${t}"`),
          ...targets.map((t) => `echo x >> '${t}' 2>/dev/null && echo "WROTE ${t}"`),
          `rm -rf '${dataDir}/audit' '${join(dataDir, 'state.db')}' 2>/dev/null`,
          'echo end',
        ].join('\n'),
      );
      expect(out.stdout).toBe('end\n');
      await expect(readFile(principalsFile, 'utf8')).resolves.toBe(before);
      expect(await readdir(join(dataDir, 'audit'))).toEqual(expect.arrayContaining(segments));
      await expect(stat(join(dataDir, 'state.db'))).resolves.toBeTruthy();
    });

    it('cannot follow a symlink it planted at the data dir, neither in bash nor through read_file', async () => {
      const plant = await bash(`ln -s '${principalsFile}' abs-link; ln -s ../principals.json rel-link; ln -s '${dataDir}' dir-link; echo planted`);
      expect(plant.stdout).toBe('planted\n');
      const out = await bash('for p in abs-link rel-link dir-link/principals.json dir-link/state.db; do cat "$p" 2>/dev/null && echo "READ $p"; done; echo end');
      expect(out.stdout).toBe('end\n');
      for (const path of ['abs-link', 'rel-link', 'dir-link/principals.json']) {
        const read = await invoke('read_file', { path });
        expect(read.body.ok).toBe(false);
        expect(JSON.stringify(read.body)).not.toContain(ALICE);
        expect(JSON.stringify(read.body)).not.toContain(dataDir);
      }
    });
  });

  describe("another tenant's workspace", () => {
    it("cannot reach tenant beta's files by absolute path, ../beta or a symlink", async () => {
      const written = await invoke('write_file', { path: 'private.txt', content: OTHER_SECRET }, BOB);
      expect(written.body.ok).toBe(true);
      const beta = join(dataDir, 'workspaces', 'beta');
      const out = await bash(
        [
          `ln -s '${beta}' beta-link`,
          `for p in '${beta}/private.txt' ../beta/private.txt /workspace/../beta/private.txt beta-link/private.txt; do cat "$p" 2>/dev/null && echo "READ $p"; done`,
          `echo stolen > '${beta}/planted.txt' 2>/dev/null && echo WROTE; echo stolen > ../beta/planted.txt 2>/dev/null && echo WROTE`,
          'echo end',
        ].join('\n'),
      );
      expect(out.stdout).toBe('end\n');
      await expect(stat(join(beta, 'planted.txt'))).rejects.toThrow();
      // The control: beta's own shell does see the file, so the refusal above is the sandbox's.
      expect((await bash('cat private.txt', BOB)).stdout).toBe(OTHER_SECRET);
    });
  });

  describe('signalling the gateway', () => {
    let sentinel: ChildProcess;
    afterAll(() => sentinel?.kill('SIGKILL'));

    it('cannot kill the gateway by pid, by -1 or by name, and the server answers /healthz within 100 ms after', async () => {
      const marker = sleepMarker();
      sentinel = spawn('sleep', [marker], { detached: true, stdio: 'ignore' });
      const out = await bash(
        [
          `kill -9 ${process.pid}; echo "gateway=$?"`,
          `kill -9 ${sentinel.pid}; echo "sentinel=$?"`,
          'kill -9 -1; echo "all=$?"',
          'pkill -9 node; pkill -9 -x sleep; echo "pkill=$?"',
        ].join('\n'),
      );
      expect(out.stdout).toMatch(/^gateway=[1-9]/m);
      expect(out.stdout).toMatch(/^sentinel=[1-9]/m);
      const health = await timedLessCpuWait(() => h.call('/healthz'));
      expect(health.value.status).toBe(200);
      expect(health.ms).toBeLessThan(100);
      expect(livingProcesses(marker)).toEqual([sentinel.pid]);
    });
  });

  describe('surviving the call', () => {
    it('leaves no process behind: setsid, double fork, nohup, disown, setsid -f, ignored TERM/HUP', async () => {
      const marker = sleepMarker();
      const out = await bash(
        [
          `setsid sleep ${marker} &`,
          `( sleep ${marker} & ) &`,
          `nohup sleep ${marker} >/dev/null 2>&1 &`,
          `sleep ${marker} & disown`,
          `setsid -f sleep ${marker}`,
          `( trap '' TERM HUP; exec sleep ${marker} ) &`,
          'until [ "$(pgrep -xc sleep)" -ge 6 ]; do sleep 0.05; done',
          'echo "running=$(pgrep -xc sleep)"',
        ].join('\n'),
      );
      expect(out.stdout).toBe('running=6\n');
      // Immediately after the call: the sandbox's pid namespace ended with the command.
      expect(livingProcesses(marker)).toEqual([]);
    });
  });

  describe('a stdio MCP server at the default tier', () => {
    it("cannot read the gateway's environment, its data dir or the principals file, nor signal it", async () => {
      const res = await invoke('spy__probe', { paths: [principalsFile, join(dataDir, 'state.db'), '../../principals.json', '/proc/1/environ'], pid: process.pid });
      expect(res.body.ok).toBe(true);
      const text = JSON.stringify(res.body.output);
      expect(text).not.toContain(HMAC_KEY);
      expect(text).not.toContain(ALICE);
      expect(text).not.toContain('TOOLGATE_');
      const report = JSON.parse(res.body.output.content[0].text);
      expect(report.reads[principalsFile]).toBe('ERR ENOENT');
      expect(report.reads[join(dataDir, 'state.db')]).toBe('ERR ENOENT');
      expect(report.reads['../../principals.json']).toBe('ERR ENOENT');
      expect(report.signal).toBe('ERR ESRCH');
      expect(report.env['HOME']).toBe('/workspace');
    });
  });

  // The reproduction of issue 9 §3, in one approved call.
  it('the issue scenario: one approved bash tries everything; all fails, the audit verifies after a restart, the server answers', async () => {
    const pending = bash(
      [
        'cat /proc/$PPID/environ /proc/1/environ /proc/*/environ 2>/dev/null | tr "\\0" "\\n"',
        `cat '${principalsFile}' ../principals.json 2>/dev/null`,
        `ls '${dataDir}/audit' ../../audit 2>/dev/null; cat '${dataDir}'/audit/* 2>/dev/null`,
        `cat '${dataDir}/state.db' 2>/dev/null | head -c 100`,
        `printf 'forged' > '${dataDir}/audit/forged.log' 2>/dev/null`,
        `rm -rf '${dataDir}/audit' 2>/dev/null`,
        `kill -9 ${process.pid} 2>/dev/null; kill -9 -1 2>/dev/null; pkill -9 node`,
        'sleep 1; echo finished',
      ].join('\n'),
    );
    // While the hostile call runs, other callers are served.
    const health = await timedLessCpuWait(() => h.call('/healthz'));
    expect(health.value.status).toBe(200);
    expect(health.ms).toBeLessThan(100);
    const out = await pending;
    expect(out.stdout.endsWith('finished\n')).toBe(true);
    // What it did get is the sandbox's own scrubbed environment, nothing of the data dir.
    for (const line of out.stdout.trim().split('\n').slice(0, -1)) expect(line).toMatch(/^(PATH|HOME|LANG|USER|LOGNAME|TMPDIR|PWD|OLDPWD|SHLVL|_)=/);
    expect(everything(out)).not.toContain('SQLite format');
    expect(everything(out)).not.toContain(HMAC_KEY);
    expect(everything(out)).not.toContain(ALICE);

    const verified = await h.call('/api/v1/audit/verify', { token: ALICE });
    expect(verified.body).toMatchObject({ ok: true });
    // bwrap, the sandbox's init and node: every one names the server's script.
    const oldServer = livingProcesses('spy-server.mjs');
    expect(oldServer.length).toBeGreaterThan(0);
    await h.restart();
    expect((await h.call('/healthz')).status).toBe(200);
    // The old MCP server's sandbox died with its source; only the restarted server's runs.
    const newServer = livingProcesses('spy-server.mjs');
    expect(newServer.length).toBe(oldServer.length);
    expect(newServer.filter((pid) => oldServer.includes(pid))).toEqual([]);
    const again = await h.call('/api/v1/audit/verify', { token: ALICE });
    // audit.verify tells a tenant's operator only whether the chain holds (no counts: ADR 0027).
    expect(again.body).toEqual({ ok: true, tenant: verified.body.tenant });
    // The hostile call's own records are still there: it could not delete them.
    const rows = (await h.call('/api/v1/audit?limit=500', { token: ALICE })).body as { tool?: string; event: string }[];
    expect(rows.filter((r) => r.tool === 'bash' && r.event === 'succeeded').length).toBeGreaterThanOrEqual(1);
    await expect(readdir(join(dataDir, 'audit'))).resolves.not.toContain('forged.log');
  });
});

/** Starts a server on its own data dir without the harness, for configurations that must not start. */
async function tryStart(env: Record<string, string>): Promise<{ error?: unknown; logs: string[]; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-isolation-start-'));
  const logs: string[] = [];
  const log: Log = (level, message) => logs.push(`${level} ${message}`);
  try {
    const server = await startServer(loadConfig({ TOOLGATE_DATA_DIR: join(dir, 'data'), TOOLGATE_PORT: '0', ...env }), log);
    await server.close();
    return { logs, close: () => rm(dir, { recursive: true, force: true }) };
  } catch (error) {
    return { error, logs, close: () => rm(dir, { recursive: true, force: true }) };
  }
}

// These run on every machine: the "cannot isolate" path is made real with a bwrap that does not exist.
describe('where the default tier cannot run', () => {
  const MISSING_BWRAP = '/nonexistent/toolgate-no-bwrap';
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      { TOOLGATE_BWRAP_PATH: MISSING_BWRAP },
      { mcpServers: { servers: [{ name: 'boxed', command: 'node', args: ['server.mjs'], env: {}, tier: 'bwrap' }] } },
    );
  });
  afterAll(async () => h?.stop());

  it('says so at start with the reason and the remedies, and does not offer bash or git', async () => {
    const warning = h.logs.find((l) => l.includes('bash and git are NOT offered'));
    expect(warning).toBeDefined();
    expect(warning).toContain(`'${MISSING_BWRAP}' does not exist`);
    expect(warning).toContain('install bubblewrap');
    expect(warning).toContain('user namespaces');
    expect(warning).toContain('TOOLGATE_SHELL_TIER=unisolated');
    const { body } = await h.call('/api/v1/tools', { token: 'demo' });
    const names: string[] = body.tools.map((t: { name: string }) => t.name);
    expect(names).not.toContain('bash');
    expect(names).not.toContain('git');
    expect(names).toContain('calculator');
    const refused = await h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: { tool: 'bash', args: { command: 'id' }, grants: GRANTS, approved: true } });
    expect(refused.body.ok).toBe(false);
    expect(refused.body.denial.code).toBe('TOOL_NOT_FOUND');
  });

  it('does not start an MCP server whose tier cannot run, logs why, and serves the rest', async () => {
    expect(h.logs.some((l) => l.startsWith('error ') && l.includes("MCP server 'boxed' is not started: its tier 'bwrap' cannot run here"))).toBe(true);
    const { body } = await h.call('/api/v1/tools', { token: 'demo' });
    expect(body.tools.some((t: { name: string }) => t.name.startsWith('boxed__'))).toBe(false);
    const sum = await h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: { tool: 'calculator', args: { expression: '2+3' } } });
    expect(sum.body).toMatchObject({ ok: true });
    expect((await h.call('/healthz')).status).toBe(200);
  });

  it('also leaves bash and git out where bwrap exists but cannot create namespaces, naming that reason', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-isolation-fake-'));
    const fake = join(dir, 'bwrap');
    // What bwrap prints where unprivileged user namespaces are disabled.
    await writeFile(fake, '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n', { mode: 0o755 });
    const restricted = await startHarness({ TOOLGATE_BWRAP_PATH: fake });
    try {
      const warning = restricted.logs.find((l) => l.includes('bash and git are NOT offered'));
      expect(warning).toContain('bwrap cannot create its sandbox on this machine (user namespaces disabled or restricted?)');
      const { body } = await restricted.call('/api/v1/tools', { token: 'demo' });
      expect(body.tools.map((t: { name: string }) => t.name)).not.toContain('bash');
    } finally {
      await restricted.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start when the operator chose bwrap explicitly, naming the reason', async () => {
    const run = await tryStart({ TOOLGATE_SHELL_TIER: 'bwrap', TOOLGATE_BWRAP_PATH: MISSING_BWRAP });
    await run.close();
    expect(run.error).toBeInstanceOf(StartupError);
    expect((run.error as Error).message).toMatch(/sandbox tier 'bwrap' \(TOOLGATE_SHELL_TIER=bwrap\) cannot run here: bubblewrap is not installed/);
  });

  it('refuses an MCP servers file that still says "subprocess", saying it is unisolated', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-isolation-mcp-'));
    const file = join(dir, 'mcp.json');
    await writeFile(file, JSON.stringify({ servers: [{ name: 'old', command: 'node', args: [], tier: 'subprocess' }] }));
    const run = await tryStart({ TOOLGATE_MCP_SERVERS_FILE: file, TOOLGATE_BWRAP_PATH: MISSING_BWRAP });
    await run.close();
    await rm(dir, { recursive: true, force: true });
    expect(run.error).toBeInstanceOf(StartupError);
    expect((run.error as Error).message).toContain('tier "subprocess" was renamed "unisolated"');
  });

  it('runs the shell tools unisolated only when the operator names that tier, and says so at start', async () => {
    const u = await startHarness({ TOOLGATE_SHELL_TIER: 'unisolated', TOOLGATE_BWRAP_PATH: MISSING_BWRAP });
    try {
      expect(u.logs.some((l) => l.startsWith('warn ') && l.includes('TOOLGATE_SHELL_TIER=unisolated: bash and git run UNISOLATED'))).toBe(true);
      const { body } = await u.call('/api/v1/tools', { token: 'demo' });
      const bashTool = body.tools.find((t: { name: string }) => t.name === 'bash');
      expect(bashTool.description).toContain('UNISOLATED');
      const run = await u.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: { tool: 'bash', args: { command: 'echo hi' }, grants: GRANTS, approved: true } });
      expect(run.body).toMatchObject({ ok: true, output: { exit_code: 0, stdout: 'hi\n' } });
    } finally {
      await u.stop();
    }
  });
});
