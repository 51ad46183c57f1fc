import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError, type ProcessLimits } from '@toolgate/contracts';
import { HOST_LISTENER_GREETING, livingProcesses, sleepMarker, startHostListener, untilEmpty, watchLoopHold, type HostListener } from '@toolgate/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ContainerRunner, type ContainerRunnerOptions } from '../src/index.js';
import { ENGINE_PATH, SANDBOX_IMAGE, sandboxUnavailable } from './sandbox-image.js';

// As in container-executor.contract.spec.ts: skipped with its reason where no engine can start
// the sandbox image, a failure in CI.
const unavailable = await sandboxUnavailable();
if (unavailable && process.env['CI'] === 'true') {
  throw new Error(`CI=true but the container tier cannot run here: ${unavailable} (.ci/run installs podman, runc, catatonit and busybox-static, and test/podman-ci.conf)`);
}
if (unavailable) console.warn(`skipping the container sandbox tests: ${unavailable}`);

/**
 * What the container tier adds over a plain process, tried from inside a real container with the
 * adapter's own confinement (container-argv.ts): the tier's claims in docs/tools.md, each attacked
 * several ways.
 */
describe.skipIf(unavailable !== undefined)('the container sandbox', () => {
  let base: string;
  let workspace: string;
  let outside: string;
  const runners = new Map<string, ContainerRunner>();

  /** A runner per option set, probed once (the probe costs three engine calls: info, image inspect, a trial container). */
  async function runner(options: Partial<ContainerRunnerOptions> = {}): Promise<ContainerRunner> {
    const key = JSON.stringify(options);
    let found = runners.get(key);
    if (!found) {
      found = new ContainerRunner({ image: SANDBOX_IMAGE, hostPath: ENGINE_PATH, ...options });
      await found.probe();
      runners.set(key, found);
    }
    return found;
  }
  const limits = (extra: Partial<ProcessLimits> = {}): ProcessLimits => ({ workspaceRoot: workspace, timeoutMs: 15_000, maxOutputBytes: 64 * 1024, ...extra });
  const sh = async (script: string, options: Partial<ContainerRunnerOptions> = {}, extra: Partial<ProcessLimits> = {}) =>
    (await runner(options)).run({ command: 'sh', args: ['-c', script] }, limits(extra));

  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-container-sandbox-')));
    workspace = join(base, 'tenant-a');
    outside = join(base, 'outside');
    await mkdir(workspace);
    await mkdir(outside);
    await writeFile(join(outside, 'secret.txt'), 'outside the workspace');
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  describe('escaping the workspace through the file system', () => {
    it("sees none of the host's files: not its passwd, home, data or the workspace's siblings", async () => {
      const host = await readFile('/etc/passwd', 'utf8');
      const result = await sh(
        `cat /etc/passwd; echo ---; for p in /root/.bashrc /home /work /srv /opt /run/podman /var/lib/containers ${outside} ${outside}/secret.txt ${base} ${workspace}; do [ -e "$p" ] && echo "visible: $p"; done; echo ---; ls /`,
      );
      const [passwd = '', visible = '', listing = ''] = result.stdout.split('---\n');
      expect(passwd).not.toBe(host);
      expect(passwd).not.toContain(host.split('\n').find((line) => !line.startsWith('root:')) ?? 'unreachable');
      expect(visible).toBe('');
      for (const entry of listing.trim().split('\n')) {
        expect(['bin', 'dev', 'etc', 'linuxrc', 'proc', 'run', 'sbin', 'sys', 'tmp', 'usr', 'var', 'workspace']).toContain(entry);
      }
    });

    it('cannot follow a workspace symlink out: relative, absolute, to the host root, or through /proc', async () => {
      await symlink('../outside', join(workspace, 'up'));
      await symlink(join(outside, 'secret.txt'), join(workspace, 'absolute'));
      await symlink('/', join(workspace, 'root'));
      await symlink('/proc/1/root/etc/passwd', join(workspace, 'proc-root'));
      await symlink(`/proc/1/root${outside}/secret.txt`, join(workspace, 'proc-root-secret'));
      const result = await sh(
        [
          `for p in up/secret.txt absolute root${outside}/secret.txt proc-root-secret; do cat "$p" 2>/dev/null && echo "read: $p"; done`,
          `for p in root/work root${base} root/var/lib/containers; do [ -e "$p" ] && echo "visible: $p"; done`,
          'echo ---; cat proc-root',
        ].join('; '),
      );
      const [probes = '', passwd = ''] = result.stdout.split('---\n');
      expect(probes).toBe('');
      expect(result.stdout).not.toContain('outside the workspace');
      // /proc/1 is the container's own init, so its root is the image: the image's passwd, no host account.
      const hostOnly = (await readFile('/etc/passwd', 'utf8')).split('\n').filter((line) => line !== '' && !/^(root|nobody):/.test(line));
      expect(hostOnly.length).toBeGreaterThan(0);
      expect(passwd).toMatch(/^root:x:0:0:/);
      for (const line of hostOnly) expect(passwd).not.toContain(line);
    });

    it('cannot write its root file system, /etc, /usr or /bin, but can write the workspace and its own /tmp', async () => {
      const marker = `toolgate-container-${Math.random().toString(36).slice(2)}`;
      const result = await sh(
        [
          `echo x > /${marker}; echo "root=$?"`,
          `echo x > /etc/${marker}; echo "etc=$?"`,
          `echo x > /usr/${marker}; echo "usr=$?"`,
          `echo x > /bin/sh; echo "bin=$?"`,
          `rm -f /bin/busybox; echo "rm=$?"`,
          `echo x > /tmp/${marker} && echo "tmp=$?"`,
          'mkdir -p deep/er && echo nested > deep/er/file.txt; echo "workspace=$?"',
        ].join('; '),
      );
      for (const where of ['root', 'etc', 'usr', 'bin', 'rm']) expect(result.stdout).toMatch(new RegExp(`${where}=[1-9]`));
      expect(result.stdout).toContain('tmp=0');
      expect(result.stdout).toContain('workspace=0');
      await expect(readFile(join(workspace, 'deep/er/file.txt'), 'utf8')).resolves.toBe('nested\n');
      // The container's /tmp is its own: nothing lands in the host's, and the next run starts empty.
      await expect(stat(join('/tmp', marker))).rejects.toThrow();
      const next = await sh(`[ -e /tmp/${marker} ] && echo kept || echo fresh`);
      expect(next.stdout).toBe('fresh\n');
    });

    it('cannot write kernel settings or reach kernel memory through /proc and /sys', async () => {
      const result = await sh(
        [
          'echo 1 > /proc/sys/vm/drop_caches; echo "sysctl=$?"',
          'echo h > /proc/sysrq-trigger; echo "sysrq=$?"',
          'echo 1 > /sys/kernel/mm/ksm/run; echo "sys=$?"',
          'head -c 1 /proc/kcore > /dev/null; echo "kcore=$?"',
          'echo toolgate > /proc/sys/kernel/hostname; echo "hostname=$?"',
        ].join('; ') + ' 2>/dev/null',
      );
      for (const what of ['sysctl', 'sysrq', 'sys', 'kcore', 'hostname']) expect(result.stdout).toMatch(new RegExp(`${what}=[1-9]`));
    });
  });

  describe('reaching the network', () => {
    let listener: HostListener;

    beforeAll(async () => {
      // Every address of the host, so a route out of the container would find it.
      listener = await startHostListener('::');
    });
    afterAll(() => listener.close());

    it("reaches no server of the host, by loopback, by the host's own addresses or the engine's bridge", async () => {
      expect(await listener.greetingFromHost()).toBe(HOST_LISTENER_GREETING);
      const before = listener.connections();
      const addresses = Object.values(networkInterfaces())
        .flat()
        .filter((i) => i !== undefined && i.family === 'IPv4')
        .map((i) => i.address);
      const targets = [...new Set(['127.0.0.1', 'localhost', '0.0.0.0', '::1', '10.88.0.1', '172.17.0.1', ...addresses])];
      const result = await sh(targets.map((t) => `nc -w 2 ${t} ${listener.port} </dev/null 2>/dev/null && echo "connected: ${t}"`).join('; ') + '; true');
      expect(result.stdout).not.toContain(HOST_LISTENER_GREETING.trim());
      expect(result.stdout).not.toContain('connected:');
      expect(listener.connections()).toBe(before);
    });

    it('has only a loopback interface and no route', async () => {
      const result = await sh('cat /proc/net/dev; echo ---; cat /proc/net/route');
      const [devices = '', routes = ''] = result.stdout.split('---\n');
      const names = devices
        .split('\n')
        .slice(2)
        .map((line) => line.split(':')[0]?.trim())
        .filter(Boolean);
      expect(names).toEqual(['lo']);
      expect(routes.trim().split('\n').slice(1)).toEqual([]);
    });
  });

  describe('escalating privilege', () => {
    it('holds no capability, cannot gain one, and cannot mount, chroot or change owners', async () => {
      const result = await sh(
        'grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status; mount -t tmpfs none /tmp 2>/dev/null; echo "mount=$?"; chroot / true 2>/dev/null; echo "chroot=$?"; chown 1:1 /tmp 2>/dev/null; echo "chown=$?"; hostname',
      );
      expect(result.stdout).toMatch(/^CapPrm:\s+0+$/m);
      expect(result.stdout).toMatch(/^CapEff:\s+0+$/m);
      expect(result.stdout).toMatch(/^CapBnd:\s+0+$/m);
      expect(result.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
      expect(result.stdout).toMatch(/^Seccomp:\s+2$/m);
      for (const what of ['mount', 'chroot', 'chown']) expect(result.stdout).toMatch(new RegExp(`${what}=[1-9]`));
      expect(result.stdout.trim().split('\n').at(-1)).toBe('toolgate-sandbox');
    });

    // Podman's seccomp profile lets a process make a user namespace; with an empty bounding set the
    // namespace holds no capability either, so it cannot mount, map ids or reach the network.
    it('gains nothing from a namespace it makes itself', async () => {
      const result = await sh(
        [
          'unshare -U sh -c "grep ^CapEff: /proc/self/status" 2>/dev/null || echo "CapEff:	refused"',
          'unshare -Um sh -c "mount -t tmpfs none /tmp" 2>/dev/null; echo "userns-mount=$?"',
          'unshare -Ur true 2>/dev/null; echo "map-root=$?"',
          'unshare -n true 2>/dev/null; echo "netns=$?"',
          'unshare -Un sh -c "cat /proc/net/dev" 2>/dev/null | grep -c -v -E "lo:|Inter|face"',
        ].join('; '),
      );
      expect(result.stdout).toMatch(/^CapEff:\s+(0+|refused)$/m);
      for (const what of ['userns-mount', 'map-root', 'netns']) expect(result.stdout).toMatch(new RegExp(`${what}=[1-9]`));
      expect(result.stdout.trim().split('\n').at(-1)).toBe('0');
    });

    it("sees and signals none of the host's processes, not even one of its own uid", async () => {
      // A host process of the server's uid, which a signal from the same uid would otherwise reach.
      const marker = sleepMarker();
      const victim = spawn('sleep', [marker], { stdio: 'ignore' });
      try {
        const pids = [victim.pid, process.pid, process.ppid].filter((pid): pid is number => pid !== undefined && pid > 50);
        expect(pids.length).toBeGreaterThan(0);
        const result = await sh(
          `set -- /proc/[0-9]*; echo "count=$#"; for pid in ${pids.join(' ')}; do kill -9 $pid 2>/dev/null; echo "kill $pid=$?"; done; kill -9 -1 2>/dev/null; true`,
        );
        // The container's own pid namespace numbers its few processes from 1; host pids name none.
        expect(Number(/count=(\d+)/.exec(result.stdout)?.[1])).toBeLessThan(6);
        for (const pid of pids) expect(result.stdout).toMatch(new RegExp(`kill ${pid}=[1-9]`));
        expect(livingProcesses(marker)).toEqual([victim.pid]);
        expect(() => process.kill(process.pid, 0)).not.toThrow();
      } finally {
        victim.kill('SIGKILL');
      }
    });
  });

  // The command, its arguments and its environment reach the engine as separate argv entries
  // after the image or as one `--env` value: none of them can become an engine option.
  describe('injecting engine options', () => {
    it('runs a command named like an option as a command that does not exist', async () => {
      for (const command of ['--privileged', '--network=host', '-v', '--cap-add=ALL']) {
        const error = await (await runner()).run({ command, args: [] }, limits()).catch((e: unknown) => e);
        expect(error, command).toBeInstanceOf(ToolError);
        expect(error, command).toMatchObject({ reason: 'COMMAND_NOT_FOUND' });
      }
    });

    it('passes option-like arguments and environment values to the command verbatim, confinement unchanged', async () => {
      const hostile = ['--privileged', '--network=host', '--cap-add=ALL', '-v', '/:/host', '--security-opt=seccomp=unconfined'];
      const result = await (await runner()).run(
        {
          command: 'sh',
          args: ['-c', 'printf "%s|" "$@"; echo; echo "env=$A,$B"; grep ^CapEff: /proc/self/status; grep -c -v -E "lo:|Inter|face" /proc/net/dev; [ -e /host ] && echo host-visible; true', 'sh', ...hostile],
          env: { A: '--privileged', B: 'x\n--network=host --cap-add=ALL' },
        },
        limits(),
      );
      expect(result.stdout).toContain(`${hostile.join('|')}|\n`);
      expect(result.stdout).toContain('env=--privileged,x\n--network=host --cap-add=ALL\n');
      expect(result.stdout).toMatch(/^CapEff:\s+0+$/m);
      expect(result.stdout).toMatch(/^0$/m);
      expect(result.stdout).not.toContain('host-visible');
    });
  });

  describe('exhausting resources', () => {
    it('holds a fork bomb to the process limit while other calls and the event loop keep going', async () => {
      const marker = sleepMarker();
      // A 20 ms timer's lateness, less the time the box kept this thread off a CPU meanwhile.
      const probe = watchLoopHold(20);
      let worstLagMs = 0;
      try {
        // The bomb forks in a subshell, which dies at the first refused fork; the shell then counts
        // with its own glob and echo, since nothing more can be forked.
        const bomb = sh(`(i=0; while [ $i -lt 200 ]; do sleep ${marker} & i=$((i+1)); done) 2>/dev/null; set -- /proc/[0-9]*; echo $#`, { pidsLimit: 32 });
        const other = sh('echo still served');
        const [bombed, served] = await Promise.all([bomb, other]);
        expect(served.stdout).toBe('still served\n');
        expect(Number(bombed.stdout.trim())).toBeLessThanOrEqual(32);
        expect(Number(bombed.stdout.trim())).toBeGreaterThan(5);
      } finally {
        worstLagMs = probe.stop();
      }
      expect(worstLagMs).toBeLessThan(100);
      // The shell exited, so the container's init did, and with it every sleep it left behind.
      expect(await untilEmpty(() => livingProcesses(marker), 5000)).toEqual([]);
    });

    it('kills a process that allocates past the memory limit, and allows one below it', async () => {
      const over = await sh('dd if=/dev/zero of=/dev/null bs=96M count=1 2>/dev/null && echo survived', { memory: '32m' });
      expect(over.stdout).not.toContain('survived');
      expect(over.exitCode === 137 || over.signal === 'SIGKILL').toBe(true);
      const under = await sh('dd if=/dev/zero of=/dev/null bs=4M count=1 2>/dev/null && echo survived', { memory: '32m' });
      expect(under.stdout).toBe('survived\n');
    });

    it('caps its private /tmp', async () => {
      const result = await sh('head -c 2000000 /dev/zero > /tmp/big; echo "big=$?"; rm -f /tmp/big; head -c 100000 /dev/zero > /tmp/small; echo "small=$?"', { tmpSizeBytes: 1024 * 1024 });
      expect(result.stdout).toMatch(/big=[1-9]/);
      expect(result.stdout).toContain('small=0');
    });
  });
});
