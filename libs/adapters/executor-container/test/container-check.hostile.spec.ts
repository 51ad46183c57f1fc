import { chmod, mkdir, mkdtemp, readFile, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchLoopHold } from '@toolgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContainerExecutor, containerRunArgs, type ContainerEngine } from '../src/index.js';

const IMAGE = 'localhost/toolgate-test-sandbox:1';
const PROBE_TIMEOUT_MS = 400;

/**
 * `check()` against engines that answer but cannot start a container, replayed by a stand-in
 * engine CLI: it answers `info`/`version` and `image inspect` as a healthy engine does, and its
 * `run` does what each test says. The engine lines are the ones podman 4.3.1 (runc, crun) printed
 * on the CI machine, and docker's as its daemon words them. A check that passes here would let
 * the server offer a tier whose every call fails.
 */
describe('ContainerExecutor.check: an engine that answers but cannot start a container', () => {
  let base: string;

  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-container-check-')));
    await mkdir(join(base, 'bin'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  /**
   * A stand-in `name` CLI that logs every argv; `run`, `image` and `rm` are shell snippets
   * (default: a healthy engine's answers).
   */
  async function engine(name: ContainerEngine, steps: { run: string; image?: string; rm?: string }): Promise<ContainerExecutor> {
    const script = [
      '#!/bin/sh',
      'PATH=/usr/bin:/bin',
      `printf "%s\\n" "$*" >> '${base}/log'`,
      'case "$1" in',
      '  info|version) echo 4.3.1 ;;',
      `  image) ${steps.image ?? 'echo sha256:abc'} ;;`,
      `  rm) ${steps.rm ?? 'echo removed'} ;;`,
      `  run) ${steps.run} ;;`,
      'esac',
    ].join('\n');
    await writeFile(join(base, 'bin', name), `${script}\n`);
    await chmod(join(base, 'bin', name), 0o755);
    return new ContainerExecutor({ image: IMAGE, engine: name, hostPath: join(base, 'bin'), probeTimeoutMs: PROBE_TIMEOUT_MS, killGraceMs: 100 });
  }
  /** `printf` of `text` to stderr, then exit `code`. */
  const fails = (text: string, code: number) => `printf '%s\\n' '${text.replaceAll("'", "'\\''")}' >&2; exit ${code}`;
  const log = async () => (await readFile(join(base, 'log'), 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
  const refusal = async (executor: ContainerExecutor) => {
    const error = await executor.check().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error, 'check() must refuse').toBeInstanceOf(Error);
    return (error as Error).message;
  };
  /** No trial workspace (`toolgate-check-*`) is left in the temporary directory after a check. */
  const trialDirs = async () => (await readdir(tmpdir())).filter((entry) => entry.startsWith('toolgate-check-'));

  describe('the runtime refuses what the container needs', () => {
    it.each([
      {
        engine: 'podman' as const,
        code: 126,
        line: 'Error: runc: runc create failed: unable to start container process: error during container init: error setting rlimits for ready process: error setting rlimit type 7: operation not permitted: OCI permission denied',
      },
      { engine: 'podman' as const, code: 126, line: 'Error: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted: OCI permission denied' },
      { engine: 'podman' as const, code: 126, line: 'Error: OCI runtime error: crun: cgroups in hybrid mode not supported, drop all controllers from cgroupv2' },
      {
        engine: 'docker' as const,
        code: 126,
        line: 'docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error setting rlimit type 6: operation not permitted: unknown.',
      },
      { engine: 'docker' as const, code: 125, line: 'docker: Error response from daemon: unknown or invalid runtime name: runsc.' },
    ])('$engine exit $code: $line', async ({ engine: name, code, line }) => {
      const message = await refusal(await engine(name, { run: fails(line, code) }));
      expect(message).toBe(`${name} answers but cannot start a container from '${IMAGE}': ${line}`);
    });

    it('names the error line, not the warnings an engine prints before it', async () => {
      const executor = await engine('podman', {
        run: fails('WARN[0000] Failed to decode the keys ["storage.options.override_kernel_check"]\nError: crun: setrlimit `RLIMIT_NPROC`: Operation not permitted: OCI permission denied', 126),
      });
      expect(await refusal(executor)).toMatch(/: Error: crun: setrlimit `RLIMIT_NPROC`: Operation not permitted: OCI permission denied$/);
    });

    it('refuses an engine that exits without a word, or dies of a signal', async () => {
      expect(await refusal(await engine('podman', { run: 'exit 125' }))).toMatch(/: the engine printed nothing \(exit 125\)$/);
      expect(await refusal(await engine('docker', { run: 'exit 1' }))).toMatch(/: the engine printed nothing \(exit 1\)$/);
      const crashed = await engine('podman', { run: "echo 'panic: runtime error: invalid memory address or nil pointer dereference' >&2; kill -SEGV $$" });
      expect(await refusal(crashed)).toMatch(/: panic: runtime error: invalid memory address or nil pointer dereference$/);
      expect(await refusal(await engine('podman', { run: 'kill -KILL $$' }))).toMatch(/: the engine printed nothing \(stopped by SIGKILL\)$/);
    });

    it('starts the trial with every flag a call uses, so a flag the runtime refuses is refused at start', async () => {
      await engine('podman', { run: 'exit 0' }).then((executor) => executor.check());
      const trial = (await log()).find((line) => line.startsWith('run ')) ?? '';
      const source = /source=([^,]+),/.exec(trial)?.[1] ?? '';
      const name = /--name (\S+)/.exec(trial)?.[1] ?? '';
      const uid = `${process.getuid?.() ?? 1000}:${process.getgid?.() ?? 1000}`;
      const call = containerRunArgs({
        engine: 'podman',
        name,
        image: IMAGE,
        workspace: source,
        cwd: '',
        command: 'true',
        args: [],
        env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/workspace', LANG: 'C.UTF-8', TMPDIR: '/tmp' },
        user: uid,
        keepId: process.getuid?.() !== 0,
        memory: '512m',
        cpus: '1',
        pidsLimit: 256,
        tmpSizeBytes: 64 * 1024 * 1024,
      });
      expect(trial).toBe(call.join(' '));
      expect(source).toMatch(/\/toolgate-check-[^/]+$/);
      expect(await trialDirs()).toEqual([]);
    });
  });

  describe('host paths in the engine error', () => {
    it.each([
      ['Error: container-init binary not found on the host: stat /usr/libexec/podman/catatonit: no such file or directory', '/usr/libexec'],
      ["docker: Error response from daemon: error while creating mount source path '/srv/toolgate/data/tenants/acme': mkdir /srv/toolgate: read-only file system.", '/srv/toolgate'],
      ['Error: runc: exec failed: open "/var/lib/containers/storage/overlay/3f2a/merged/etc/passwd": permission denied', '/var/lib/containers'],
      ['Error: unable to connect to Podman socket: unix:///run/user/1000/podman/podman.sock: connection refused', '/run/user'],
      ['Error: reading ~/.config/containers/containers.conf: permission denied', '.config/containers'],
      ['Error: mounting /tmp/toolgate-check-Ab12,Cd/x failed: invalid argument', '/tmp/toolgate-check'],
    ])('%s', async (line, hidden) => {
      const message = await refusal(await engine('podman', { run: fails(line, 125) }));
      expect(message).not.toContain(hidden);
      expect(message).toContain('<path>');
      // The image reference is named, not mistaken for a path.
      expect(message).toContain(`from '${IMAGE}':`);
    });

    it('keeps image references, which look like paths but name what the operator configured', async () => {
      const message = await refusal(await engine('docker', { run: fails('docker: Error response from daemon: pull access denied for docker.io/library/busybox:1.36, repository does not exist', 125) }));
      expect(message).toContain('docker.io/library/busybox:1.36');
    });
  });

  describe('a trial container that hangs', () => {
    it.each([
      ['silently', 'exec sleep 30'],
      ['after a first line', "echo 'Trying to pull docker.io/library/busybox:1...' >&2; exec sleep 30"],
      ['ignoring SIGTERM', "trap '' TERM; sleep 30; sleep 30"],
    ])('is refused within the probe timeout (%s), and removed by name', async (_how, run) => {
      const executor = await engine('podman', { run });
      // The event loop keeps turning while the check waits: other callers are not stalled.
      // (A 20 ms timer's lateness, less the time the box kept this thread off a CPU meanwhile.)
      const ticker = watchLoopHold(20);
      const started = performance.now();
      let worstLag = 0;
      const message = await refusal(executor).finally(() => (worstLag = ticker.stop()));
      const took = performance.now() - started;
      expect(message).toBe(`podman answers but cannot start a container from '${IMAGE}': the trial container did not finish within ${PROBE_TIMEOUT_MS} ms`);
      expect(took).toBeLessThan(PROBE_TIMEOUT_MS + 100 + 2000);
      expect(worstLag).toBeLessThan(100);
      const lines = await log();
      const name = /--name (toolgate-check-[0-9a-f-]+)/.exec(lines.find((line) => line.startsWith('run ')) ?? '')?.[1];
      expect(name).toBeDefined();
      expect(lines).toContain(`rm --force --time 0 ${name}`);
      expect(await trialDirs()).toEqual([]);
    });

    it('stays bounded when removing the hung container hangs too', async () => {
      const executor = await engine('docker', { run: 'exec sleep 30', rm: 'exec sleep 30' });
      const started = performance.now();
      expect(await refusal(executor)).toMatch(/did not finish within 400 ms$/);
      // The trial and its removal, each at most the probe timeout plus the kill grace.
      expect(performance.now() - started).toBeLessThan(2 * (PROBE_TIMEOUT_MS + 100) + 2000);
      expect((await log()).filter((line) => line.startsWith('rm '))).toHaveLength(1);
    });
  });

  describe('an image that is not present', () => {
    it.each([
      ['podman', 'Error: localhost/toolgate-test-sandbox:1: image not known', 125],
      ['docker', 'Error: No such image: localhost/toolgate-test-sandbox:1', 1],
      ['docker', 'Error response from daemon: No such image: localhost/toolgate-test-sandbox:1', 1],
    ] as const)('%s: %s is said before any container is tried, and nothing is pulled', async (name, line, code) => {
      const message = await refusal(await engine(name, { image: fails(line, code), run: 'echo ran' }));
      expect(message).toBe(`container image '${IMAGE}' is not available to ${name} (${line}); pull it first: runs never pull`);
      const lines = await log();
      expect(lines.some((l) => l.startsWith('run ') || l.startsWith('pull '))).toBe(false);
    });

    it.each([
      ['podman', 'Error: localhost/toolgate-test-sandbox:1: image not known', 125],
      ['docker', "Unable to find image 'localhost/toolgate-test-sandbox:1' locally\ndocker: Error response from daemon: No such image: localhost/toolgate-test-sandbox:1.", 125],
    ] as const)('%s: an image gone between the lookup and the trial is refused with the engine line, the trial never pulling', async (name, text, code) => {
      const message = await refusal(await engine(name, { run: fails(text, code) }));
      expect(message).toMatch(/(image not known|No such image: localhost\/toolgate-test-sandbox:1\.)$/);
      const trial = (await log()).find((line) => line.startsWith('run ')) ?? '';
      expect(trial).toContain('--pull never');
      expect((await log()).some((line) => line.startsWith('pull '))).toBe(false);
    });
  });

  describe('an engine that floods its output', () => {
    it.each([
      ['one endless stderr line', "yes x | tr -d '\\n' | head -c 1000000 >&2; exit 125"],
      ['a stderr flood of lines', 'yes "Error: the runtime is unhappy" | head -c 1000000 >&2; exit 126'],
      ['terminal escapes and control bytes', "i=0; while [ $i -lt 2000 ]; do printf 'Error: \\033[31mred\\033[0m\\033]0;title\\007\\r\\001\\002 bell\\a ' >&2; i=$((i+1)); done; exit 125"],
      ['an endless stdout flood', 'yes ran'],
      ['an endless stderr flood', "yes 'Error: no end' >&2"],
    ])('%s: refused, with one short, printable line', async (_how, run) => {
      const started = performance.now();
      const message = await refusal(await engine('podman', { run }));
      expect(performance.now() - started).toBeLessThan(3000);
      expect(message.startsWith(`podman answers but cannot start a container from '${IMAGE}': `)).toBe(true);
      // The engine's part is at most 240 characters; the rest is the fixed prefix and the note.
      expect(message.length).toBeLessThan(`podman answers but cannot start a container from '${IMAGE}': `.length + 240 + ' (its output was cut off)'.length + 1);
      // eslint-disable-next-line no-control-regex -- the point is to find control characters
      expect(message).not.toMatch(/[\u0000-\u001f\u007f]/);
    });

    it('says the output was cut off when it was', async () => {
      expect(await refusal(await engine('docker', { run: "yes 'Error: again' | head -c 1000000 >&2; exit 125" }))).toMatch(/: Error: again \(its output was cut off\)$/);
    });
  });

  describe('an engine that is fine', () => {
    it.each([
      ['the trial exits 0', 'exit 0'],
      ["the image has no 'true' (catatonit could not exec it)", fails('ERROR (catatonit:6): failed to exec pid1: No such file or directory', 1)],
      ["the image has no 'true' (tini could not exec it)", fails('[FATAL tini (7)] exec true failed: No such file or directory', 127)],
    ])('passes when %s: the container started', async (_how, run) => {
      const executor = await engine('podman', { run });
      await expect(executor.check()).resolves.toBeUndefined();
      expect((await log()).filter((line) => line.startsWith('run '))).toHaveLength(1);
      expect(await trialDirs()).toEqual([]);
    });

    it('does not pass an init failure that is not the whole of the output', async () => {
      const executor = await engine('podman', { run: fails('Error: something first\nERROR (catatonit:6): failed to exec pid1: No such file or directory', 1) });
      expect(await refusal(executor)).toMatch(/: Error: something first$/);
    });
  });
});
