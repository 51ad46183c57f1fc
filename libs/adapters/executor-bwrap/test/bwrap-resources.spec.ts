import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { livingProcesses, sleepMarker, untilEmpty } from '@toolgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { BwrapExecutor, BwrapRunner, capWarning } from '../src/index.js';
// Internal, to observe what the package does not export: where the per-call cgroups live on this
// host, and the sweep of cgroups a gone gateway left behind.
import { releaseIdleServerCgroups } from '../src/bwrap-runner.js';
import { findCgroupLayout } from '../src/call-cgroup.js';

// As in bwrap-executor.spec.ts: skipped with its reason where bwrap cannot run, a failure in CI.
const unavailable = await new BwrapExecutor().check().then(
  () => undefined,
  (error: unknown) => (error as Error).message,
);
const inCi = process.env['CI'] === 'true';
if (unavailable && inCi) throw new Error(`CI=true but the bwrap tier cannot run here: ${unavailable} (.ci/run installs bubblewrap)`);
if (unavailable) console.warn(`skipping the bwrap resource tests: ${unavailable}`);

// The kernel caps need cgroups the server can write (root, or a delegated subtree). CI runs as
// root on a host that has them, so there a missing cap fails instead of testing nothing.
const report = unavailable ? undefined : await new BwrapRunner().resourceCaps();
const uncapped =
  report && (report.processes === 'none' || report.memory === 'none' || report.memory === 'rlimit')
    ? `per-call cgroup caps are not available here: ${report.problems.join('; ')}`
    : undefined;
if (uncapped && inCi) throw new Error(`CI=true but ${uncapped}`);
if (uncapped) console.warn(`skipping the cgroup cap tests: ${uncapped}`);

const CALL_PREFIX = `toolgate-call-${process.pid}-`;

/** This process's per-call cgroup directories that exist right now. */
function callCgroups(): string[] {
  const layout = findCgroupLayout();
  const parents = [...new Set([layout?.pidsParent, layout?.memoryParent].filter((p): p is string => p !== undefined))];
  return parents.flatMap((parent) => readdirSync(parent).filter((name) => name.startsWith(CALL_PREFIX)).map((name) => join(parent, name)));
}

/** Every process on the host right now, in any pid namespace. */
function hostProcessCount(): number {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).length;
}

/** Whether `pid` is alive (not a zombie) and still in one of this process's per-call cgroups. */
function stillInCallCgroup(pid: number): boolean {
  try {
    const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return state !== 'Z' && readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(CALL_PREFIX);
  } catch {
    return false;
  }
}

/** Milliseconds this thread waited, runnable, for a CPU: the shared box's load, not the gateway's work. */
function cpuWaitMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) / 1e6 || 0;
  } catch {
    return 0;
  }
}

/**
 * Watches the gateway's side while a hostile call runs: how late a 20 ms timer ever fires (the
 * event loop), the host's process count, and the per-call cgroup's own count and members.
 */
function watch() {
  const baseline = hostProcessCount();
  let peakHost = baseline;
  let peakInCgroup = 0;
  let worstLateMs = 0;
  const members = new Set<number>();
  let last = performance.now();
  let lastWait = cpuWaitMs();
  const timer = setInterval(() => {
    const now = performance.now();
    const wait = cpuWaitMs();
    worstLateMs = Math.max(worstLateMs, now - last - 20 - (wait - lastWait));
    last = now;
    lastWait = wait;
    peakHost = Math.max(peakHost, hostProcessCount());
    for (const dir of callCgroups()) {
      try {
        peakInCgroup = Math.max(peakInCgroup, Number(readFileSync(join(dir, 'pids.current'), 'utf8')));
      } catch {
        // The memory hierarchy's directory has no pids.current; or the call just ended.
      }
      try {
        for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) if (line) members.add(Number(line));
      } catch {
        // Removed while we looked.
      }
    }
  }, 20);
  return {
    stop: () => {
      clearInterval(timer);
      return { baseline, peakHost, peakInCgroup, worstLateMs, members: [...members] };
    },
  };
}

describe.skipIf(unavailable !== undefined || uncapped !== undefined)('resource exhaustion at the bwrap tier', () => {
  const CAP = 64;
  const runner = new BwrapRunner({ killGraceMs: 300, maxProcesses: CAP });
  const neighbour = new BwrapRunner();
  let base: string;
  let workspace: string;

  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-bwrap-resources-')));
    workspace = join(base, 'tenant-a');
    await mkdir(workspace);
    await mkdir(join(base, 'tenant-b'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const limits = (timeoutMs = 20_000) => ({ workspaceRoot: workspace, timeoutMs, maxOutputBytes: 64 * 1024 });
  const bash = (script: string) => ({ command: 'bash', args: ['-c', script] });

  /** A second, ordinary call in another tenant's workspace while the hostile one runs. */
  async function neighbourCall(): Promise<{ exitCode: number | null; stdout: string; ms: number }> {
    // Started once the hostile call is under way.
    await new Promise((r) => setTimeout(r, 1500));
    const started = performance.now();
    const result = await neighbour.run(bash('echo neighbour; ls /workspace | wc -l'), { ...limits(), workspaceRoot: join(base, 'tenant-b') });
    return { exitCode: result.exitCode, stdout: result.stdout, ms: performance.now() - started };
  }

  /** What must hold after every hostile call: its cgroup is gone and nothing that was in it lives. */
  async function leavesNothing(members: number[]): Promise<void> {
    expect(callCgroups()).toEqual([]);
    expect(await untilEmpty(() => members.filter(stillInCallCgroup), 3000)).toEqual([]);
  }

  describe('process exhaustion', () => {
    it('stops a fork bomb at the cap, and the gateway and a neighbour call keep working', async () => {
      const watcher = watch();
      const [hostile, other] = await Promise.all([
        // The holder is forked first: once the bomb fills the cap, `wait` (a builtin) still works.
        runner.run(bash('sleep 6 & holder=$!; timeout 5 bash -c ":(){ :|:& };:" 2>/dev/null; wait $holder; echo "bomb over"'), limits(10_000)),
        neighbourCall(),
      ]);
      const seen = watcher.stop();
      // The bomb ran into the cap rather than ending by itself.
      expect(seen.peakInCgroup).toBeGreaterThanOrEqual(CAP - 4);
      expect(seen.peakInCgroup).toBeLessThanOrEqual(CAP);
      // Other people's processes come and go on this host; an uncapped bomb adds thousands.
      expect(seen.peakHost - seen.baseline).toBeLessThanOrEqual(CAP + 100);
      expect(hostile.exitCode === 0 || hostile.timedOut).toBe(true);
      expect(other).toMatchObject({ exitCode: 0, stdout: 'neighbour\n0\n' });
      expect(other.ms).toBeLessThan(5000);
      expect(seen.worstLateMs).toBeLessThan(100);
      expect(seen.members.length).toBeGreaterThan(0);
      await leavesNothing(seen.members);
    });

    it('starts at most the cap of 1000 background sleeps, and none survives the call', async () => {
      const marker = sleepMarker();
      const watcher = watch();
      const [hostile, other] = await Promise.all([
        runner.run(bash(`for i in $(seq 1000); do sleep ${marker} & done 2>/dev/null; echo "loop over"`), limits(6000)),
        neighbourCall(),
      ]);
      const seen = watcher.stop();
      expect(seen.peakInCgroup).toBeLessThanOrEqual(CAP);
      expect(seen.peakInCgroup).toBeGreaterThanOrEqual(CAP - 4);
      expect(seen.peakHost - seen.baseline).toBeLessThanOrEqual(CAP + 100);
      expect(hostile.stdout).not.toContain('loop over');
      expect(hostile.timedOut).toBe(true);
      expect(other).toMatchObject({ exitCode: 0, stdout: 'neighbour\n0\n' });
      expect(seen.worstLateMs).toBeLessThan(100);
      expect(await untilEmpty(() => livingProcesses(marker), 3000)).toEqual([]);
      await leavesNothing(seen.members);
    });

    it('counts threads too: a process cannot start more threads than the cap', async () => {
      const result = await runner.run(
        { command: 'python3', args: ['-c', 'import threading,time\nn=0\ntry:\n  for _ in range(500):\n    threading.Thread(target=time.sleep,args=(30,),daemon=True).start(); n+=1\nexcept RuntimeError: pass\nprint(n)'] },
        limits(),
      );
      expect(result.exitCode).toBe(0);
      expect(Number(result.stdout.trim())).toBeLessThan(CAP);
      // The control: threads do start, the cap is what stops them.
      expect(Number(result.stdout.trim())).toBeGreaterThan(CAP / 2);
      expect(callCgroups()).toEqual([]);
    });
  });

  describe('a long-lived sandbox (an MCP server)', () => {
    it('is capped in a cgroup of its own too, which is removed once it is empty', async () => {
      // prepare() is synchronous: it uses the caps a settled check found.
      await runner.resourceCaps();
      const marker = sleepMarker();
      const prepared = runner.prepare(bash(`sleep ${marker} & h=$!; timeout 5 bash -c ":(){ :|:& };:" 2>/dev/null; wait $h`), workspace);
      // Not yet entered: the sweep keeps it however long the caller takes to spawn.
      await new Promise((r) => setTimeout(r, 1500));
      expect(callCgroups().length).toBeGreaterThan(0);
      const watcher = watch();
      const child = spawn(prepared.command, [...prepared.args], { cwd: prepared.cwd, env: { ...prepared.env }, detached: true, stdio: 'ignore' });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await new Promise((r) => setTimeout(r, 3000));
      const seen = watcher.stop();
      expect(seen.peakInCgroup).toBeGreaterThanOrEqual(CAP - 4);
      expect(seen.peakInCgroup).toBeLessThanOrEqual(CAP);
      expect(seen.peakHost - seen.baseline).toBeLessThanOrEqual(CAP + 100);
      expect(seen.worstLateMs).toBeLessThan(100);
      // The MCP client closes a server by killing its process group.
      process.kill(-child.pid!, 'SIGKILL');
      await exited;
      expect(await untilEmpty(() => seen.members.filter(stillInCallCgroup), 3000)).toEqual([]);
      // The runner's own sweep (every second) removes it once it was entered and is empty again.
      expect(await untilEmpty(() => callCgroups().map((_, i) => i), 4000)).toEqual([]);
      expect(releaseIdleServerCgroups()).toBe(0);
    });
  });

  describe('memory exhaustion', () => {
    // The default cap (1 GiB): every spelling of a 2 GiB allocation must die, a 100 MiB one live.
    const capped = new BwrapRunner({ killGraceMs: 300 });
    const allocations: Record<string, string> = {
      'python bytes': 'python3 -c "b = b\'x\' * (2 * 1024**3); print(\'allocated\')"',
      'python bytearray touched': 'python3 -c "b = bytearray(2 * 1024**3); b[::4096] = b\'x\' * len(b[::4096]); print(\'allocated\')"',
      'tail buffering a newline-free stream': 'set -o pipefail; head -c 2G /dev/zero | tail -c 2G | wc -c | grep -q 2147483648 && echo allocated',
      'bash string doubling': 's=x; for i in $(seq 31); do s=$s$s; done; echo "allocated ${#s}"',
    };

    it.each(Object.entries(allocations))('kills a 2 GiB allocation (%s) at the memory cap', async (_, script) => {
      const watcher = watch();
      const [result, other] = await Promise.all([capped.run(bash(script), limits(30_000)), neighbourCall()]);
      const seen = watcher.stop();
      expect(result.stdout).not.toContain('allocated');
      expect(result.timedOut).toBe(false);
      expect(other).toMatchObject({ exitCode: 0, stdout: 'neighbour\n0\n' });
      expect(seen.worstLateMs).toBeLessThan(100);
      await leavesNothing(seen.members);
    });

    it('caps the sum: four processes of 600 MiB each cannot all hold their memory', async () => {
      const script = 'for i in 1 2 3 4; do python3 -c "import time; b = b\'x\' * (600 * 1024**2); time.sleep(2); print(\'held\')" & done; wait';
      const watcher = watch();
      const result = await capped.run(bash(script), limits(30_000));
      const seen = watcher.stop();
      const held = result.stdout.split('\n').filter((line) => line === 'held').length;
      expect(held).toBeLessThan(4);
      expect(seen.worstLateMs).toBeLessThan(100);
      await leavesNothing(seen.members);
    });

    it('lets an allocation below the cap through (the control)', async () => {
      const result = await capped.run(bash('python3 -c "b = b\'x\' * (100 * 1024**2); print(\'allocated\', len(b))"'), limits());
      expect(result).toMatchObject({ exitCode: 0, stdout: `allocated ${100 * 1024 * 1024}\n` });
    });
  });

  describe('/dev and /tmp exhaustion', () => {
    it('refuses 200 MB in /dev/shm or /dev by every spelling, keeps /tmp capped, and the devices still work', async () => {
      const script = [
        'head -c 200M /dev/zero > /dev/shm/big; echo "shm-head=$?"',
        'dd if=/dev/zero of=/dev/shm/dd bs=1M count=200 2>/dev/null; echo "shm-dd=$?"',
        'fallocate -l 200M /dev/shm/falloc 2>/dev/null; echo "shm-fallocate=$?"',
        'rm -f /dev/shm/*',
        'head -c 200M /dev/zero > /dev/big; echo "dev-file=$?"',
        'mkdir /dev/dir 2>/dev/null; echo "dev-mkdir=$?"',
        'ln -s /tmp /dev/link 2>/dev/null; echo "dev-symlink=$?"',
        'head -c 1M /dev/zero > /dev/pts/big 2>/dev/null; echo "dev-pts=$?"',
        'head -c 200M /dev/zero > /tmp/big; echo "tmp=$?"',
        'rm -f /tmp/big',
        // Controls: the devices and a small /dev/shm file work.
        'head -c 1M /dev/zero > /dev/shm/small; echo "shm-small=$?"',
        'echo x > /dev/null; echo "null=$?"',
        'echo "urandom=$(head -c 16 /dev/urandom | wc -c)"',
        'echo "du=$(du -sk /dev /tmp 2>/dev/null | awk \'{s+=$1} END {print s}\')"',
      ].join('\n');
      const result = await runner.run(bash(script), limits());
      const value = (name: string) => new RegExp(`^${name}=(\\d+)$`, 'm').exec(result.stdout)?.[1];
      for (const name of ['shm-head', 'shm-dd', 'shm-fallocate', 'dev-file', 'dev-mkdir', 'dev-symlink', 'dev-pts', 'tmp']) {
        expect(value(name), name).toMatch(/^[1-9]/);
      }
      expect(value('shm-small')).toBe('0');
      expect(value('null')).toBe('0');
      expect(value('urandom')).toBe('16');
      // Whatever was written is within /dev/shm's 16 MiB and /tmp's 64 MiB.
      expect(Number(value('du'))).toBeLessThan(80 * 1024);
      expect(callCgroups()).toEqual([]);
    });
  });
});

describe.skipIf(unavailable !== undefined || uncapped !== undefined)('cgroups a gone gateway left behind', () => {
  it("are removed at the next start when empty and their creator is dead; a live gateway's are kept", async () => {
    const parent = findCgroupLayout()!.pidsParent!;
    const dead = spawnSync('true').pid;
    const alive = spawn('sleep', ['30'], { stdio: 'ignore' });
    const stale = join(parent, `toolgate-call-${dead}-1-stale0`);
    const kept = join(parent, `toolgate-call-${alive.pid}-1-alive0`);
    mkdirSync(stale);
    mkdirSync(kept);
    try {
      await new BwrapRunner().resourceCaps();
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(kept)).toBe(true);
    } finally {
      alive.kill('SIGKILL');
      for (const dir of [stale, kept]) if (existsSync(dir)) rmdirSync(dir);
    }
  });
});

describe.skipIf(unavailable !== undefined)('where no cgroup cap can be applied', () => {
  let workspace: string;
  beforeEach(async () => {
    workspace = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-bwrap-nocaps-')));
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });
  const limits = () => ({ workspaceRoot: workspace, timeoutMs: 20_000, maxOutputBytes: 8192 });

  it('caps memory per process with RLIMIT_AS through prlimit, and says processes are not capped', async () => {
    const runner = new BwrapRunner({ useCgroups: false });
    const caps = await runner.resourceCaps();
    expect(caps).toMatchObject({ processes: 'none', memory: 'rlimit' });
    expect(capWarning(caps)).toMatch(/^no per-call process cap: per-call cgroups are turned off\. /);
    const big = await runner.run({ command: 'python3', args: ['-c', "b = b'x' * (2 * 1024**3); print('allocated')"] }, limits());
    expect(big.stdout).not.toContain('allocated');
    expect(big.stderr).toContain('MemoryError');
    const small = await runner.run({ command: 'python3', args: ['-c', "b = b'x' * (100 * 1024**2); print('allocated')"] }, limits());
    expect(small).toMatchObject({ exitCode: 0, stdout: 'allocated\n' });
    expect(callCgroups()).toEqual([]);
  });

  it('still runs the tier with neither cap, and the warning says so in one line', async () => {
    const executor = new BwrapExecutor({ useCgroups: false, prlimitPath: 'toolgate-no-such-prlimit' });
    await expect(executor.check()).resolves.toBeUndefined();
    const warning = await executor.resourceCapWarning();
    expect(warning).toMatch(/^no per-call process\/memory cap: per-call cgroups are turned off; 'toolgate-no-such-prlimit' \(util-linux\) is not usable/);
    expect(warning).not.toContain('\n');
    const result = await executor.processes.run({ command: 'sh', args: ['-c', 'echo still runs'] }, limits());
    expect(result).toMatchObject({ exitCode: 0, stdout: 'still runs\n' });
  });

  it('has no warning where both caps are cgroup caps', () => {
    expect(capWarning({ processes: 'cgroup v1', memory: 'cgroup v1', problems: [] })).toBeUndefined();
    expect(capWarning({ processes: 'cgroup v2', memory: 'none', problems: ['the memory cgroup controller is not available'] })).toMatch(/^no per-call memory cap: /);
    expect(capWarning({ processes: 'cgroup v1', memory: 'rlimit', problems: ['x'] })).toMatch(/^no per-call memory cap \(only RLIMIT_AS/);
  });

  it('refuses caps too small for a shell to start', () => {
    expect(() => new BwrapRunner({ maxProcesses: 2 })).toThrow('sandbox process cap must be 8..4194304, got 2');
    expect(() => new BwrapRunner({ maxProcesses: 1.5 })).toThrow('sandbox process cap');
    expect(() => new BwrapRunner({ memoryBytes: 1024 })).toThrow('sandbox memory cap must be at least 64 MiB');
  });
});

// Outside any describe: a cgroup left behind by any test above is a leak of this file.
describe.skipIf(unavailable !== undefined)('per-call cgroups', () => {
  it('are all removed once the calls end', () => {
    expect(existsSync('/proc/self/cgroup')).toBe(true);
    expect(callCgroups()).toEqual([]);
  });
});
