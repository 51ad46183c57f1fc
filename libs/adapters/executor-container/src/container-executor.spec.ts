import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError } from '@toolgate/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContainerExecutor } from './container-executor.js';
import { ContainerRunner } from './container-runner.js';

const IMAGE = 'docker.io/library/buildpack-deps:bookworm-scm';

describe('ContainerExecutor.check on this machine', () => {
  it('refuses clearly when no engine answers, instead of falling back', async () => {
    const outcome = await new ContainerExecutor({ image: IMAGE }).check().then(
      () => 'answered',
      (error: unknown) => (error as Error).message,
    );
    // Where an engine does answer, the engine-down path is still covered by the fake engine below.
    if (outcome === 'answered') return;
    expect(outcome).toMatch(/^(no container engine answers: |container image )/);
    if (outcome.startsWith('no container engine answers')) {
      expect(outcome).toMatch(/podman (not installed|CLI present but)/);
      expect(outcome).toMatch(/docker (not installed|CLI present but daemon unreachable|CLI present but no answer)/);
    }
  });
});

/**
 * A stand-in engine CLI: logs its argv and behaves as `mode` says, so the executor's use of the
 * engine (probe, run, cleanup, error mapping) is tested without a daemon.
 */
describe('ContainerRunner with a fake engine', () => {
  let base: string;
  let workspace: string;
  const setMode = (mode: string) => writeFile(join(base, 'mode'), mode);
  const log = async () => (await readFile(join(base, 'log'), 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);

  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-container-')));
    workspace = join(base, 'tenant-a');
    await mkdir(join(base, 'bin'));
    await mkdir(workspace);
    await setMode('up');
    const script = [
      '#!/bin/sh',
      'PATH=/usr/bin:/bin',
      `base='${base}'`,
      'printf "%s\\n" "$*" >> "$base/log"',
      'mode=$(cat "$base/mode")',
      'case "$1" in',
      '  version) if [ "$mode" = down ]; then echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1; fi; echo 24.0.7 ;;',
      '  image) if [ "$mode" = noimage ]; then echo "Error: No such image" >&2; exit 1; fi; echo sha256:abc ;;',
      '  rm) echo removed ;;',
      '  run) case "$mode" in',
      '    sleep) exec sleep 30 ;;',
      '    missing) echo \'docker: Error response from daemon: failed to create task: exec: "nope": executable file not found in $PATH: unknown.\' >&2; exit 127 ;;',
      '    broken) echo "docker: Error response from daemon: bind source path does not exist: /host/secret/path." >&2; exit 125 ;;',
      '    env) env ;;',
      '    *) cat; echo ran ;;',
      '  esac ;;',
      'esac',
    ].join('\n');
    await writeFile(join(base, 'bin', 'docker'), `${script}\n`);
    await chmod(join(base, 'bin', 'docker'), 0o755);
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const runner = (extra: Partial<ConstructorParameters<typeof ContainerRunner>[0]> = {}) =>
    new ContainerRunner({ image: IMAGE, hostPath: join(base, 'bin'), ...extra });
  const limits = (extra = {}) => ({ workspaceRoot: workspace, timeoutMs: 10_000, maxOutputBytes: 4096, ...extra });

  it('names every engine it tried when none answers', async () => {
    await setMode('down');
    await expect(runner().probe()).rejects.toThrow(
      'no container engine answers: podman not installed; docker CLI present but daemon unreachable (Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?)',
    );
    await expect(new ContainerExecutor({ image: IMAGE, hostPath: join(base, 'bin'), engine: 'podman' }).check()).rejects.toThrow(
      'no container engine answers: podman not installed',
    );
  });

  it('refuses a missing image instead of pulling it', async () => {
    await setMode('noimage');
    await expect(runner().probe()).rejects.toThrow(`container image '${IMAGE}' is not available to docker`);
    expect((await log()).some((line) => line.startsWith('pull'))).toBe(false);
    // Nor does it try a container from an image it knows is missing.
    expect((await log()).some((line) => line.startsWith('run '))).toBe(false);
  });

  it('finds the engine that answers and runs the command confined, passing stdin', async () => {
    const r = runner();
    expect(r.engine).toBeUndefined();
    await r.probe();
    expect(r.engine).toBe('docker');
    // The probe: the engine's answer, the image, then one trial container started as a call would be.
    const probe = await log();
    expect(probe.slice(0, 2)).toEqual(['version --format {{.Server.Version}}', `image inspect --format {{.Id}} ${IMAGE}`]);
    expect(probe.slice(2).map((line) => /--name (\S+)/.exec(line)?.[1] ?? line)).toEqual([expect.stringMatching(/^toolgate-check-[0-9a-f-]{36}$/)]);
    expect(probe[2]).toMatch(/^run --rm --interactive --name \S+ --pull never --network none --read-only --cap-drop ALL .* --entrypoint=true docker\.io\/library\/buildpack-deps:bookworm-scm$/);
    const result = await r.run({ command: 'sh', args: ['-c', 'true'], stdin: 'input\n', cwd: '' }, limits());
    expect(result).toMatchObject({ exitCode: 0, stdout: 'input\nran\n', timedOut: false });
    const run = (await log()).find((line) => line.startsWith('run ') && !line.includes('--name toolgate-check-'));
    expect(run).toContain('--network none');
    expect(run).toContain('--read-only');
    expect(run).toContain('--cap-drop ALL');
    expect(run).toContain('--security-opt no-new-privileges');
    expect(run).toContain(`--mount type=bind,source=${workspace},target=/workspace`);
    expect(run).toMatch(/--entrypoint=sh docker\.io\/library\/buildpack-deps:bookworm-scm -c true$/);
  });

  it('probes on first use when no engine was configured', async () => {
    const result = await runner().run({ command: 'true', args: [] }, limits());
    expect(result.exitCode).toBe(0);
    expect((await log())[0]).toBe('version --format {{.Server.Version}}');
    // version, image inspect, the trial container, then the call's own.
    expect((await log()).filter((line) => line.startsWith('run ')).map((line) => /--name (toolgate-(?:check-)?)/.exec(line)?.[1])).toEqual(['toolgate-check-', 'toolgate-']);
  });

  it('removes the container by name when the deadline stops the engine CLI', async () => {
    await setMode('sleep');
    const result = await runner({ engine: 'docker', killGraceMs: 100 }).run({ command: 'sleep', args: ['100'] }, limits({ timeoutMs: 300 }));
    expect(result.timedOut).toBe(true);
    const lines = await log();
    const name = /--name (toolgate-[0-9a-f-]+)/.exec(lines.find((l) => l.startsWith('run ')) ?? '')?.[1];
    expect(name).toBeDefined();
    expect(lines).toContain(`rm --force ${name}`);
  });

  it('reports a missing command like every other tier, and an engine failure without host details', async () => {
    await setMode('missing');
    const missing = await runner({ engine: 'docker' })
      .run({ command: 'nope', args: [] }, limits())
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ToolError);
    expect(missing).toMatchObject({ reason: 'COMMAND_NOT_FOUND', message: "command 'nope' was not found on the container PATH" });
    await setMode('broken');
    const broken = await runner({ engine: 'docker' })
      .run({ command: 'true', args: [] }, limits())
      .catch((e: unknown) => e);
    expect(broken).toMatchObject({ reason: 'SANDBOX_FAILED' });
    expect((broken as Error).message).not.toContain('/host/secret');
  });

  it("gives the engine CLI the server's HOME and never the server's secrets", async () => {
    process.env['TOOLGATE_TEST_SECRET'] = 'hunter2';
    try {
      await setMode('env');
      const result = await runner({ engine: 'docker' }).run({ command: 'env', args: [], env: { GREETING: 'hi' } }, limits());
      expect(result.stdout).not.toContain('hunter2');
      expect(result.stdout).toContain(`HOME=${homedir()}`);
      const run = (await log()).find((line) => line.startsWith('run ')) ?? '';
      expect(run).toContain('--env GREETING=hi');
      expect(run).not.toContain('hunter2');
    } finally {
      delete process.env['TOOLGATE_TEST_SECRET'];
    }
  });

  it('validates the spec and the working directory before asking the engine', async () => {
    await expect(runner({ engine: 'docker' }).run({ command: 'true', args: [], cwd: '../x' }, limits())).rejects.toThrow('PathEscape');
    await expect(runner({ engine: 'docker' }).run({ command: 'env', args: [], env: { 'A B': '1' } }, limits())).rejects.toThrow(ToolError);
    expect(await log()).toEqual([]);
  });

  it('cannot prepare a command before it knows its engine', async () => {
    expect(() => runner().prepare({ command: 'true', args: [] }, workspace)).toThrow('call check()');
    const prepared = runner({ engine: 'docker' }).prepare({ command: 'cat', args: [] }, workspace);
    expect(prepared.command).toBe('docker');
    expect(prepared.cwd).toBe(workspace);
    expect(prepared.args).toContain('--interactive');
  });

  it('refuses invalid configuration at construction', () => {
    expect(() => new ContainerRunner({ image: '--privileged' })).toThrow('not a valid container image');
    expect(() => new ContainerRunner({ image: IMAGE, memory: 'lots' })).toThrow('memory size');
    expect(() => new ContainerRunner({ image: IMAGE, user: 'root' })).toThrow('uid:gid');
    expect(() => new ContainerRunner({ image: IMAGE, engine: 'lxc' as 'docker' })).toThrow("'docker' or 'podman'");
  });
});
