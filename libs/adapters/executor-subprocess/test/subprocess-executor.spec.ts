import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { livingGroupMembers, sleepMarker, untilEmpty } from '@toolgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SubprocessExecutor, SubprocessRunner } from '../src/index.js';

describe('SubprocessExecutor (tier 1, unisolated)', () => {
  // The shell tools quote this sentence to agents and approvers: it must not sound like a sandbox.
  it('says it is UNISOLATED and what its processes can reach', () => {
    const { summary } = new SubprocessExecutor().isolation;
    expect(summary).toContain('UNISOLATED');
    expect(summary).toContain("the server's user");
    expect(summary).toContain('read, write and signal whatever the server can');
    expect(summary).toContain('beyond the workspace');
    expect(summary).not.toMatch(/sandbox/i);
  });
});

describe('SubprocessRunner specifics', () => {
  let workspace: string;
  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'toolgate-subprocess-'));
  });
  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });
  const limits = { timeoutMs: 10_000, maxOutputBytes: 64 * 1024 };

  it('runs every process as the leader of its own group and kills the whole group at the deadline', async () => {
    const runner = new SubprocessRunner({ killGraceMs: 200 });
    const marker = sleepMarker();
    // $$ is the shell's pid; `ps -o pgid=` shows its group, which must be its own pid.
    const result = await runner.run(
      { command: 'bash', args: ['-c', `echo $$ $(ps -o pgid= $$); trap "" TERM; sleep ${marker} & sleep ${marker} & wait`] },
      { ...limits, workspaceRoot: workspace, timeoutMs: 300 },
    );
    const [pid, pgid] = result.stdout.trim().split(/\s+/).map(Number);
    expect(result.timedOut).toBe(true);
    expect(pgid).toBe(pid);
    expect(await untilEmpty(() => livingGroupMembers(pid ?? -1), 2000)).toEqual([]);
  });

  it('kills what a command left running in its group when it exits, and returns promptly', async () => {
    const runner = new SubprocessRunner();
    const marker = sleepMarker();
    const started = performance.now();
    const result = await runner.run(
      { command: 'bash', args: ['-c', `sleep ${marker} & echo $$`] },
      { ...limits, workspaceRoot: workspace },
    );
    expect(result.exitCode).toBe(0);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(await untilEmpty(() => livingGroupMembers(Number(result.stdout.trim())), 2000)).toEqual([]);
  });

  it('returns even when a descendant escaped the group and holds the output pipe open', async () => {
    const runner = new SubprocessRunner({ drainMs: 200 });
    const marker = sleepMarker();
    const started = performance.now();
    // setsid leaves the process group: tier 1 cannot reach it (documented); the call must still end.
    const result = await runner.run(
      { command: 'bash', args: ['-c', `setsid sleep ${marker} & echo $!`] },
      { ...limits, workspaceRoot: workspace },
    );
    expect(result.exitCode).toBe(0);
    expect(performance.now() - started).toBeLessThan(3000);
    const escaped = Number(result.stdout.trim());
    if (escaped > 0) {
      try {
        process.kill(escaped, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });

  it('keeps memory bounded while discarding a flood it is told not to kill', async () => {
    const runner = new SubprocessRunner({ floodFactor: Number.MAX_SAFE_INTEGER });
    const before = process.memoryUsage().rss;
    const result = await runner.run({ command: 'yes', args: ['0123456789abcdef'] }, { workspaceRoot: workspace, timeoutMs: 1500, maxOutputBytes: 4096 });
    const grown = process.memoryUsage().rss - before;
    expect(result.timedOut).toBe(true);
    expect(result.stdout.length).toBe(4096);
    expect(result.stdoutTruncated).toBe(true);
    expect(grown).toBeLessThan(128 * 1024 * 1024);
  });

  it('uses its configured PATH and LANG, and lets the spec name its own variables', async () => {
    const runner = new SubprocessRunner({ path: '/usr/bin:/bin', lang: 'C' });
    const result = await runner.run(
      { command: 'sh', args: ['-c', 'echo "$PATH|$LANG|$HOME|$EXTRA"'], env: { EXTRA: 'x y' } },
      { ...limits, workspaceRoot: workspace },
    );
    expect(result.stdout.trim()).toBe(`/usr/bin:/bin|C|${workspace}|x y`);
  });

  it('creates a missing workspace root and refuses a relative one', async () => {
    const runner = new SubprocessRunner();
    const fresh = join(workspace, 'tenant-new');
    const result = await runner.run({ command: 'pwd', args: [] }, { ...limits, workspaceRoot: fresh });
    expect(result.stdout.trim()).toBe(fresh);
    await expect(runner.run({ command: 'pwd', args: [] }, { ...limits, workspaceRoot: 'relative/root' })).rejects.toThrow(
      'absolute path',
    );
  });

  it('refuses limits that are not positive', async () => {
    const runner = new SubprocessRunner();
    await expect(runner.run({ command: 'true', args: [] }, { workspaceRoot: workspace, timeoutMs: 0, maxOutputBytes: 1 })).rejects.toThrow(RangeError);
    await expect(runner.run({ command: 'true', args: [] }, { workspaceRoot: workspace, timeoutMs: 10, maxOutputBytes: 0 })).rejects.toThrow(RangeError);
  });
});
