import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError } from '@toolgate/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContainerRunner, type ContainerEngine } from '../src/index.js';

const IMAGE = 'localhost/toolgate-test-sandbox:1';

/**
 * What real engines print when the command cannot start, replayed by a stand-in engine CLI:
 * `--init` puts an init (podman: catatonit, docker: tini) between the engine and the command, so
 * a missing command is the init's failure, not the runtime's. The catatonit lines are the ones
 * podman 4.3.1 with runc printed on the CI machine; the tini lines follow tini's source.
 */
describe('ContainerRunner: engine failures behind --init', () => {
  let base: string;
  let workspace: string;

  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-container-init-')));
    workspace = join(base, 'tenant-a');
    await mkdir(join(base, 'bin'));
    await mkdir(workspace);
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  /** A fake `engine` whose `run` prints `stdout`/`stderr` and exits with `code`; it logs every argv. */
  async function engine(name: ContainerEngine, run: { stdout?: string; stderr?: string; code: number; sleep?: boolean }): Promise<ContainerRunner> {
    const script = [
      '#!/bin/sh',
      'PATH=/usr/bin:/bin',
      `printf "%s\\n" "$*" >> '${base}/log'`,
      'case "$1" in',
      '  run)',
      run.sleep ? '    exec sleep 30 ;;' : `    printf '%s' '${run.stdout ?? ''}'; printf '%s' '${run.stderr ?? ''}' >&2; exit ${run.code} ;;`,
      '  *) echo ok ;;',
      'esac',
    ].join('\n');
    await writeFile(join(base, 'bin', name), `${script}\n`);
    await chmod(join(base, 'bin', name), 0o755);
    return new ContainerRunner({ image: IMAGE, engine: name, hostPath: join(base, 'bin'), killGraceMs: 100 });
  }
  const limits = (extra = {}) => ({ workspaceRoot: workspace, timeoutMs: 10_000, maxOutputBytes: 4096, ...extra });
  const outcome = (runner: ContainerRunner, command = 'toolgate-no-such-command') =>
    runner.run({ command, args: [] }, limits()).catch((e: unknown) => e);

  describe('a command that does not exist', () => {
    it('is COMMAND_NOT_FOUND under podman, whose catatonit exits 1', async () => {
      const runner = await engine('podman', { stderr: 'ERROR (catatonit:6): failed to exec pid1: No such file or directory\n', code: 1 });
      const error = await outcome(runner);
      expect(error).toBeInstanceOf(ToolError);
      expect(error).toMatchObject({ reason: 'COMMAND_NOT_FOUND', message: "command 'toolgate-no-such-command' was not found on the container PATH" });
    });

    it('is COMMAND_NOT_FOUND under docker, whose tini exits 127', async () => {
      const runner = await engine('docker', { stderr: '[FATAL tini (7)] exec toolgate-no-such-command failed: No such file or directory\n', code: 127 });
      expect(await outcome(runner)).toMatchObject({ reason: 'COMMAND_NOT_FOUND' });
    });

    it('is COMMAND_NOT_FOUND when the runtime itself reports it (no init)', async () => {
      const runner = await engine('podman', {
        stderr: 'Error: runc: runc create failed: unable to start container process: exec: "toolgate-no-such-command": executable file not found in $PATH: OCI runtime attempted to invoke a command that was not found\n',
        code: 127,
      });
      expect(await outcome(runner)).toMatchObject({ reason: 'COMMAND_NOT_FOUND' });
    });
  });

  describe('a command that is not executable', () => {
    it('is COMMAND_NOT_EXECUTABLE under podman and under docker', async () => {
      const podman = await engine('podman', { stderr: 'ERROR (catatonit:6): failed to exec pid1: Permission denied\n', code: 1 });
      expect(await outcome(podman, 'notes.txt')).toMatchObject({ reason: 'COMMAND_NOT_EXECUTABLE', message: "command 'notes.txt' is not executable" });
      const docker = await engine('docker', { stderr: '[FATAL tini (7)] exec notes.txt failed: Permission denied\n', code: 126 });
      expect(await outcome(docker, 'notes.txt')).toMatchObject({ reason: 'COMMAND_NOT_EXECUTABLE' });
    });
  });

  // A command that ran may print the init's words itself; its exit stays its own result unless
  // the whole of its output is exactly the init's one failure line.
  describe('a command that ran and printed lookalike text', () => {
    it('keeps its result when it printed anything else, or exited with another code', async () => {
      const line = 'ERROR (catatonit:6): failed to exec pid1: No such file or directory';
      for (const run of [
        { stdout: 'some output', stderr: `${line}\n`, code: 1 },
        { stderr: `warning: first\n${line}\n`, code: 1 },
        { stderr: `${line}\n`, code: 2 },
        { stderr: `  ${line} and more\n`, code: 1 },
      ]) {
        const runner = await engine('podman', run);
        const result = await outcome(runner, 'grep');
        expect(result, JSON.stringify(run)).not.toBeInstanceOf(Error);
        expect(result, JSON.stringify(run)).toMatchObject({ exitCode: run.code });
      }
    });
  });

  describe('removing a container the deadline stopped', () => {
    it('kills it at once: podman is told not to wait its 10 s stop timeout, docker --force already kills', async () => {
      for (const name of ['podman', 'docker'] as const) {
        await rm(join(base, 'log'), { force: true });
        const runner = await engine(name, { code: 0, sleep: true });
        const result = await runner.run({ command: 'sleep', args: ['100'] }, limits({ timeoutMs: 300 }));
        expect(result.timedOut).toBe(true);
        const lines = (await readFile(join(base, 'log'), 'utf8')).trim().split('\n');
        const container = /--name (toolgate-[0-9a-f-]+)/.exec(lines.find((l) => l.startsWith('run ')) ?? '')?.[1];
        expect(container, name).toBeDefined();
        expect(lines.filter((l) => l.startsWith('rm ')), name).toEqual([name === 'podman' ? `rm --force --time 0 ${container}` : `rm --force ${container}`]);
      }
    });
  });
});
