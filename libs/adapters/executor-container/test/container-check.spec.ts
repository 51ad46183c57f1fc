import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerExecutor } from '../src/index.js';
import { ENGINE_PATH, SANDBOX_IMAGE, sandboxUnavailable } from './sandbox-image.js';

/** The real podman on the test run's PATH, or undefined. */
function podmanOnPath(): string | undefined {
  for (const dir of ENGINE_PATH.split(':').filter(Boolean)) {
    try {
      accessSync(join(dir, 'podman'), constants.X_OK);
      return join(dir, 'podman');
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

// Decided once, as in the other real-engine specs. These tests change podman's settings for one
// CLI (CONTAINERS_CONF), so they need podman itself: a docker-only host skips them with the
// reason, and CI (which installs podman) fails.
const podman = podmanOnPath();
const unavailable = podman === undefined ? 'podman is not on PATH (these tests give podman its settings through CONTAINERS_CONF)' : await sandboxUnavailable();
if (unavailable && process.env['CI'] === 'true') {
  throw new Error(`CI=true but the container tier's check cannot be tried here: ${unavailable} (.ci/run installs podman, runc, catatonit and busybox-static, and test/podman-ci.conf)`);
}
if (unavailable) console.warn(`skipping the container tier check tests against podman: ${unavailable}`);

/** The settings CI installs (test/podman-ci.conf); the variants below each change one line of it. */
const CI_SETTINGS = readFileSync(fileURLToPath(new URL('./podman-ci.conf', import.meta.url)), 'utf8');
const ULIMITS = /^default_ulimits = .*$/m;

/** One limit of this process, from /proc/self/limits ('unlimited' as Infinity). */
function hardLimit(name: string): number {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(name));
  const hard = line?.slice(name.length).trim().split(/\s+/)[1];
  return hard === 'unlimited' || hard === undefined ? Infinity : Number(hard);
}
/** Whether this process may raise a hard limit (CAP_SYS_RESOURCE, bit 24 of CapEff). */
function canRaiseLimits(): boolean {
  const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0';
  return (BigInt(`0x${effective}`) & (1n << 24n)) !== 0n;
}
const NR_OPEN = Number(readFileSync('/proc/sys/fs/nr_open', 'utf8').trim());

/**
 * `check()` against the real podman on this machine, given settings it cannot start a container
 * with (the fault ADR 0035 found: podman answers `info` but its runtime refuses the rlimits).
 * Each test points one podman CLI at a settings file through a wrapper on the executor's PATH,
 * so the machine's own settings (/etc/containers) are never touched.
 */
describe.skipIf(unavailable !== undefined)('ContainerExecutor.check against podman', () => {
  let base: string;

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-container-check-podman-')));
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  /** A PATH whose `podman` is the real one reading only `settings`. */
  async function podmanWith(label: string, settings: string): Promise<string> {
    const dir = join(base, label);
    await writeFile(`${dir}.conf`, settings);
    await mkdir(dir);
    await writeFile(join(dir, 'podman'), `#!/bin/sh\nCONTAINERS_CONF='${dir}.conf' exec '${podman}' "$@"\n`);
    await chmod(join(dir, 'podman'), 0o755);
    return dir;
  }
  const check = (hostPath: string, image = SANDBOX_IMAGE) =>
    new ContainerExecutor({ image, engine: 'podman', hostPath }).check().then(
      () => undefined,
      (error: unknown) => (error as Error).message,
    );
  /** Trial containers podman still holds (none may be left, whatever the check found). */
  const leftovers = () =>
    spawnSync(podman ?? 'podman', ['ps', '--all', '--filter', 'name=toolgate-check-', '--format', '{{.Names}}'], { encoding: 'utf8' }).stdout.trim();

  it('refuses a podman that answers but whose runtime cannot set an open-file limit above the kernel’s', async () => {
    const settings = CI_SETTINGS.replace(ULIMITS, `default_ulimits = ["nofile=${NR_OPEN + 1}:${NR_OPEN + 1}", "nproc=32768:32768"]`);
    expect(settings).not.toBe(CI_SETTINGS);
    const path = await podmanWith('above-kernel', settings);
    // It answers: the fault is only seen by starting a container.
    expect(spawnSync(join(path, 'podman'), ['info', '--format', '{{.Version.Version}}'], { encoding: 'utf8', cwd: base }).status).toBe(0);
    const reason = await check(path);
    expect(reason).toMatch(new RegExp(`^podman answers but cannot start a container from '${SANDBOX_IMAGE}': `));
    expect(reason).toMatch(/rlimit/i);
    expect(reason).toMatch(/not permitted/i);
    // The engine's line, without the host's storage, bundle or temporary paths, and short.
    expect(reason).not.toMatch(/\/(var|run|tmp|etc|usr)\//);
    expect(reason?.length).toBeLessThan(400);
    expect(leftovers()).toBe('');
  });

  it('refuses, on a host like CI’s, the CI settings without their ulimit lines (podman’s own defaults are above what root holds)', async () => {
    const settings = CI_SETTINGS.replace(ULIMITS, '');
    expect(settings).not.toMatch(/^default_ulimits/m);
    const path = await podmanWith('no-ulimits', settings);
    // Podman 4.3 gives every container nofile 1048576 and nproc 4194304 (ADR 0035); a runtime
    // without CAP_SYS_RESOURCE cannot raise its hard limits to those, and nobody above nr_open.
    const cannotRaise = NR_OPEN < 1_048_576 || (!canRaiseLimits() && (hardLimit('Max open files') < 1_048_576 || hardLimit('Max processes') < 4_194_304));
    const reason = await check(path);
    if (cannotRaise) {
      expect(reason).toMatch(new RegExp(`^podman answers but cannot start a container from '${SANDBOX_IMAGE}': .*rlimit.*not permitted`, 'i'));
    } else {
      expect(reason).toBeUndefined();
    }
    expect(leftovers()).toBe('');
  });

  it('passes with the CI settings, within the probe timeout', async () => {
    const path = await podmanWith('ci', CI_SETTINGS);
    const started = performance.now();
    expect(await check(path)).toBeUndefined();
    // Three engine calls (info, image inspect, one trial container); each is bounded by 5000 ms.
    expect(performance.now() - started).toBeLessThan(5000);
    expect(leftovers()).toBe('');
  });

  it('says the image is missing, at once, without pulling it', async () => {
    const images = () => spawnSync(podman ?? 'podman', ['images', '--format', '{{.Repository}}:{{.Tag}}'], { encoding: 'utf8' }).stdout;
    const before = images();
    const started = performance.now();
    const reason = await check(ENGINE_PATH, 'localhost/toolgate-no-such-image:1');
    expect(reason).toMatch(/^container image 'localhost\/toolgate-no-such-image:1' is not available to podman \(.*image not known\); pull it first: runs never pull$/);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(images()).toBe(before);
    expect(leftovers()).toBe('');
  });
});
