import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolAbortedError } from '@toolgate/contracts';
import { livingProcesses, sleepMarker, untilEmpty } from '@toolgate/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BwrapExecutor, BwrapRunner } from '../src/index.js';

// As in bwrap-executor.spec.ts: skipped with its reason where bwrap cannot run, a failure in CI.
const unavailable = await new BwrapExecutor().check().then(
  () => undefined,
  (error: unknown) => (error as Error).message,
);
if (unavailable && process.env['CI'] === 'true') throw new Error(`CI=true but the bwrap tier cannot run here: ${unavailable} (.ci/run installs bubblewrap)`);
if (unavailable) console.warn(`skipping the bwrap hostile-process tests: ${unavailable}`);

const SECRET_NAME = 'TOOLGATE_GATEWAY_SECRET';
const SECRET = `gw-secret-${Math.random().toString(36).slice(2)}-must-stay-in-the-gateway`;

/**
 * Every way a shell can try to keep a process alive after its command ends: a new session, a
 * double fork (the grandchild is reparented), nohup, disown, `setsid -f`, and a process that
 * ignores TERM and HUP. Each runs `sleep <marker>`, so the host's /proc shows it by its marker.
 */
const survivors = (marker: string) =>
  [
    `setsid sleep ${marker} &`,
    `( sleep ${marker} & ) &`,
    `nohup sleep ${marker} >/dev/null 2>&1 &`,
    `sleep ${marker} & disown`,
    `setsid -f sleep ${marker}`,
    `( trap '' TERM HUP INT; exec sleep ${marker} ) &`,
    // Inside the sandbox only these six are named sleep; wait until all run, then say so.
    'until [ "$(pgrep -xc sleep)" -ge 6 ]; do sleep 0.05; done',
    'touch /workspace/ready',
  ].join('\n');

describe.skipIf(unavailable !== undefined)('hostile processes at the bwrap tier', () => {
  const runner = new BwrapRunner({ killGraceMs: 300 });
  let base: string;
  let workspace: string;
  let sentinel: ChildProcess | undefined;

  beforeAll(() => {
    process.env[SECRET_NAME] = SECRET;
  });
  afterAll(() => {
    delete process.env[SECRET_NAME];
  });
  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-bwrap-hostile-')));
    workspace = join(base, 'tenant-a');
    await mkdir(workspace);
  });
  afterEach(async () => {
    sentinel?.kill('SIGKILL');
    sentinel = undefined;
    await rm(base, { recursive: true, force: true });
  });

  const limits = (extra: { timeoutMs?: number; signal?: AbortSignal } = {}) => ({
    workspaceRoot: workspace,
    timeoutMs: 20_000,
    maxOutputBytes: 256 * 1024,
    ...extra,
  });
  const bash = (script: string) => ({ command: 'bash', args: ['-c', script] });

  /** Waits for the sandbox's `ready` file, then proves from the host that the survivors are running. */
  async function survivorsRunning(marker: string): Promise<void> {
    const until = Date.now() + 15_000;
    while (!existsSync(join(workspace, 'ready')) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    expect(existsSync(join(workspace, 'ready'))).toBe(true);
    // The control: the host's /proc sees the sandbox's processes, so an empty scan later means dead.
    expect(livingProcesses(marker).length).toBeGreaterThanOrEqual(6);
  }

  describe('surviving the call', () => {
    it('kills every survivor when the command exits by itself', async () => {
      const marker = sleepMarker();
      const pending = runner.run(bash(`${survivors(marker)}\nsleep 1; echo done`), limits());
      await survivorsRunning(marker);
      const result = await pending;
      expect(result).toMatchObject({ exitCode: 0, stdout: 'done\n', timedOut: false });
      expect(await untilEmpty(() => livingProcesses(marker), 3000)).toEqual([]);
    });

    it('kills every survivor when the call reaches its deadline', async () => {
      const marker = sleepMarker();
      const pending = runner.run(bash(`${survivors(marker)}\nsleep 60`), limits({ timeoutMs: 4000 }));
      await survivorsRunning(marker);
      const result = await pending;
      expect(result.timedOut).toBe(true);
      expect(await untilEmpty(() => livingProcesses(marker), 3000)).toEqual([]);
    });

    it('kills every survivor when the call is aborted', async () => {
      const marker = sleepMarker();
      const controller = new AbortController();
      const pending = runner.run(bash(`${survivors(marker)}\nsleep 60`), limits({ signal: controller.signal }));
      const settled = pending.then(
        () => 'resolved',
        (error: unknown) => (error instanceof ToolAbortedError ? 'aborted' : String(error)),
      );
      await survivorsRunning(marker);
      controller.abort();
      expect(await settled).toBe('aborted');
      expect(await untilEmpty(() => livingProcesses(marker), 3000)).toEqual([]);
    });

    it('kills every survivor when bwrap itself is killed (the gateway or an MCP source went away)', async () => {
      const marker = sleepMarker();
      const prepared = runner.prepare(bash(`${survivors(marker)}\nsleep 60`), workspace);
      const child = spawn(prepared.command, [...prepared.args], { cwd: prepared.cwd, env: { ...prepared.env }, detached: true, stdio: 'ignore' });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await survivorsRunning(marker);
      // Only bwrap's own pid, not its group: the sandbox must die because its parent did.
      child.kill('SIGKILL');
      await exited;
      expect(await untilEmpty(() => livingProcesses(marker), 3000)).toEqual([]);
    });
  });

  describe('environment theft', () => {
    it("finds the gateway's secret nowhere: not in its own, init's, a parent's or any process's environment or command line", async () => {
      const script = [
        'echo "== self"; cat /proc/self/environ | tr "\\0" "\\n"',
        'echo "== init"; tr "\\0" "\\n" < /proc/1/environ',
        'echo "== parent"; cat /proc/$PPID/environ 2>&1 | tr "\\0" "\\n"',
        `echo "== gateway"; cat /proc/${process.pid}/environ 2>&1`,
        'echo "== all"; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr "\\0" "\\n" < "$f" 2>/dev/null; done',
        // Built from two halves, so the joined secret is in no command line but grep's pattern file.
        `A='${SECRET.slice(0, 12)}'; B='${SECRET.slice(12)}'`,
        // The control: a file the sandbox wrote itself must be found, so an empty search means absent.
        'printf "%s%s" "$A" "$B" > /tmp/control',
        'echo "== grep"; grep -rsl -f <(printf "%s%s\\n" "$A" "$B") /proc/[0-9]*/environ /proc/[0-9]*/cmdline /etc /tmp /workspace /dev/shm 2>/dev/null',
        'echo "== env"; env; printenv',
      ].join('\n');
      const result = await runner.run(bash(script), limits());
      expect(result.exitCode).toBe(0);
      expect(result.stdout + result.stderr).not.toContain(SECRET);
      expect(result.stdout + result.stderr).not.toContain(SECRET_NAME);
      const section = (name: string) => result.stdout.split(`== ${name}\n`)[1]?.split('\n== ')[0]?.trim().split('\n') ?? [];
      const names = (lines: string[]) => lines.filter((l) => l.includes('=')).map((l) => l.slice(0, l.indexOf('=')));
      expect(section('grep')).toEqual(['/tmp/control']);
      // /proc/self/environ shows the scrubbed environment and nothing else.
      for (const name of names(section('self'))) {
        expect(['PATH', 'HOME', 'LANG', 'USER', 'LOGNAME', 'TMPDIR', 'PWD', 'OLDPWD', 'SHLVL', '_']).toContain(name);
      }
      expect(section('self')).toEqual(expect.arrayContaining(['HOME=/workspace', 'USER=sandbox']));
      // The sandbox's init is bwrap, which was started with nothing but the PATH that finds it.
      expect(names(section('init'))).toEqual(['PATH']);
      // The gateway's pid means nothing in the sandbox's own pid namespace.
      expect(section('gateway').join('\n')).toMatch(/No such file or directory/);
    });
  });

  describe('signalling the gateway', () => {
    it('cannot signal a host process by pid, by -1 or by name, and the call still completes', async () => {
      const marker = sleepMarker();
      // A host process of the gateway's user standing in for the gateway, so a kill that worked is seen.
      sentinel = spawn('sleep', [marker], { detached: true, stdio: 'ignore' });
      const pid = sentinel.pid!;
      const script = [
        `kill -9 ${pid}; echo "pid=$?"`,
        `kill -9 ${process.pid}; echo "gateway=$?"`,
        `kill -9 -${pid}; echo "group=$?"`,
        'kill -9 -1; echo "all=$?"',
        `echo "sees=$(ls /proc | grep -c "^${pid}$")"`,
        // Last: `pkill -f` matches this very shell (its command line names node and sleep).
        'pkill -9 node; pkill -9 sleep; pkill -9 -f node; pkill -9 -f vitest; echo "pkill=$?"',
      ].join('\n');
      const result = await runner.run(bash(script), limits());
      expect(result.stdout).toMatch(/^pid=[1-9]/m);
      expect(result.stdout).toMatch(/^gateway=[1-9]/m);
      expect(result.stdout).toMatch(/^group=[1-9]/m);
      expect(result.stdout).toContain('sees=0');
      expect(livingProcesses(marker)).toEqual([pid]);
      expect(sentinel.exitCode).toBeNull();
    });
  });

  describe('data outside the workspace', () => {
    it('cannot read a file next to the workspace by absolute path, by ../ or through a planted symlink', async () => {
      await writeFile(join(base, 'principals.json'), `{"token":"${SECRET}"}`);
      await mkdir(join(base, 'tenant-b'));
      await writeFile(join(base, 'tenant-b', 'private.txt'), SECRET);
      const script = [
        `ln -s ${base}/principals.json link-abs`,
        'ln -s ../principals.json link-rel',
        `ln -s ${base}/tenant-b link-tenant`,
        `for p in ${base}/principals.json ../principals.json ../../principals.json /workspace/../principals.json link-abs link-rel ${base}/tenant-b/private.txt ../tenant-b/private.txt link-tenant/private.txt; do cat "$p" 2>/dev/null && echo "READ $p"; done`,
        'echo end',
      ].join('\n');
      const result = await runner.run(bash(script), limits());
      expect(result.stdout).toBe('end\n');
      expect(result.stdout).not.toContain(SECRET);
    });
  });
});
