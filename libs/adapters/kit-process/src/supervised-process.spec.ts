import { chmod, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolAbortedError, type ProcessLimits } from '@toolgate/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SUPERVISION, superviseProcess, supervisionFrom, type SupervisedCommand, type Supervision } from './supervised-process.js';

const FAST: Supervision = { killGraceMs: 100, floodFactor: 4, drainMs: 100 };
const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

describe('supervisionFrom', () => {
  it('fills each unset field with its default and keeps only the supervision fields', () => {
    expect(supervisionFrom({})).toEqual(DEFAULT_SUPERVISION);
    const options = { killGraceMs: 50, path: '/bin', drainMs: 0 } as Partial<Supervision>;
    expect(supervisionFrom(options)).toEqual({ killGraceMs: 50, floodFactor: DEFAULT_SUPERVISION.floodFactor, drainMs: 0 });
  });
});

describe('superviseProcess', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-supervise-')));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const limits = (extra: Partial<ProcessLimits> = {}): ProcessLimits => ({ workspaceRoot: dir, timeoutMs: 10_000, maxOutputBytes: 64 * 1024, ...extra });
  const sh = (script: string, extra: Partial<SupervisedCommand> = {}): SupervisedCommand => ({
    command: 'sh',
    args: ['-c', script],
    cwd: dir,
    env: ENV,
    ...extra,
  });

  it('runs in the given directory with exactly the given environment, and feeds stdin', async () => {
    const result = await superviseProcess(sh('pwd; env | sort; cat; echo err >&2; exit 3', { env: { ...ENV, ONLY: 'this' }, stdin: 'from stdin\n' }), limits(), FAST);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe(dir);
    // sh itself adds PWD (and may add SHLVL or _); nothing comes from the test process.
    const variables = lines.slice(1, -1).map((line) => line.split('=')[0]).filter((name) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(name ?? ''));
    expect(variables).toEqual(['ONLY', 'PATH']);
    expect(lines.at(-1)).toBe('from stdin');
    expect(result).toMatchObject({ exitCode: 3, signal: null, stderr: 'err\n', timedOut: false, stdoutTruncated: false });
  });

  it('names a command that is not found or not executable, and nothing else of the host', async () => {
    await expect(superviseProcess(sh('', { command: 'toolgate-no-such-command', args: [] }), limits(), FAST)).rejects.toMatchObject({
      reason: 'COMMAND_NOT_FOUND',
      message: "command 'toolgate-no-such-command' was not found on the PATH",
    });
    const script = join(dir, 'not-executable.sh');
    await writeFile(script, '#!/bin/sh\necho hi\n');
    await chmod(script, 0o644);
    await expect(superviseProcess(sh('', { command: script, args: [] }), limits(), FAST)).rejects.toMatchObject({ reason: 'COMMAND_NOT_EXECUTABLE' });
  });

  it('sends SIGTERM at the deadline, then SIGKILL after the grace period to a process that ignores it', async () => {
    const started = performance.now();
    const result = await superviseProcess(sh('trap "" TERM; echo ready; while :; do sleep 1; done'), limits({ timeoutMs: 200 }), FAST);
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL', exitCode: null, stdout: 'ready\n' });
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('kills a flood past floodFactor × cap at once, keeping only the cap', async () => {
    const result = await superviseProcess({ command: 'yes', args: ['flood'], cwd: dir, env: ENV }, limits({ maxOutputBytes: 1024 }), FAST);
    expect(result).toMatchObject({ timedOut: false, signal: 'SIGKILL', stdoutTruncated: true });
    expect(Buffer.byteLength(result.stdout)).toBe(1024);
  });

  it('rejects with ToolAbortedError when the signal fires, and before spawning when it already has', async () => {
    const controller = new AbortController();
    const running = superviseProcess(sh('sleep 30'), limits({ signal: controller.signal }), FAST);
    setTimeout(() => controller.abort(), 100);
    await expect(running).rejects.toBeInstanceOf(ToolAbortedError);

    const marker = join(dir, 'started');
    await expect(superviseProcess(sh(`touch ${marker}`), limits({ signal: controller.signal }), FAST)).rejects.toThrow(
      'the call was aborted before the process started',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(realpath(marker)).rejects.toThrow();
  });
});
