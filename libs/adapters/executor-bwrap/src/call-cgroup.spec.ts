import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cgroupLayoutFrom, enterCgroupsArgv } from './call-cgroup.js';

const mount = (id: number, root: string, point: string, fstype: string, options: string) => `${id} 23 0:${id} ${root} ${point} rw,relatime - ${fstype} ${fstype} ${options}`;

describe('cgroupLayoutFrom', () => {
  // This project's CI machines: v1 pids and memory, an empty v2 hierarchy, a nested memory cgroup.
  const hybrid = [
    mount(31, '/', '/sys/fs/cgroup', 'tmpfs', 'rw,mode=755'),
    mount(35, '/', '/sys/fs/cgroup/memory', 'cgroup', 'rw,memory'),
    mount(39, '/', '/sys/fs/cgroup/pids', 'cgroup', 'rw,pids'),
    mount(40, '/', '/sys/fs/cgroup/systemd', 'cgroup', 'rw,name=systemd'),
    mount(41, '/', '/sys/fs/cgroup/unified', 'cgroup2', 'rw'),
  ].join('\n');
  const hybridTable = '9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n';

  it('uses the v1 pids and memory hierarchies, each below this process, when v2 offers no controller', () => {
    const asked: string[] = [];
    const layout = cgroupLayoutFrom(hybridTable, hybrid, (dir) => (asked.push(dir), false));
    expect(layout).toEqual({ version: 1, pidsParent: '/sys/fs/cgroup/pids', memoryParent: '/sys/fs/cgroup/memory/process_api/abc' });
    // The v2 root has no parent inside its hierarchy to fall back to.
    expect(asked).toEqual(['/sys/fs/cgroup/unified']);
  });

  const pureV2 = mount(30, '/', '/sys/fs/cgroup', 'cgroup2', 'rw,nsdelegate');

  it('prefers v2 below its own cgroup when that offers both controllers', () => {
    const layout = cgroupLayoutFrom('0::/toolgate\n', pureV2, (dir) => dir === '/sys/fs/cgroup/toolgate');
    expect(layout).toEqual({ version: 2, pidsParent: '/sys/fs/cgroup/toolgate', memoryParent: '/sys/fs/cgroup/toolgate' });
  });

  it("uses the parent in v2 (a systemd slice) when the server's own cgroup cannot have controller children", () => {
    const layout = cgroupLayoutFrom('0::/system.slice/toolgate.service\n', pureV2, (dir) => dir === '/sys/fs/cgroup/system.slice');
    expect(layout).toEqual({ version: 2, pidsParent: '/sys/fs/cgroup/system.slice', memoryParent: '/sys/fs/cgroup/system.slice' });
  });

  it('finds nothing on a v2 host that offers neither, or without any cgroup mount', () => {
    expect(cgroupLayoutFrom('0::/user.slice/session-1.scope\n', pureV2, () => false)).toBeUndefined();
    expect(cgroupLayoutFrom('0::/\n', mount(1, '/', '/', 'ext4', 'rw'), () => true)).toBeUndefined();
    expect(cgroupLayoutFrom('', '', () => true)).toBeUndefined();
  });

  it('maps a container whose hierarchy is mounted from a nested root, and refuses a cgroup outside the mount', () => {
    const nested = [mount(35, '/docker/abc', '/sys/fs/cgroup/memory', 'cgroup', 'rw,memory'), mount(39, '/docker/abc', '/sys/fs/cgroup/pids', 'cgroup', 'rw,pids')].join('\n');
    expect(cgroupLayoutFrom('8:pids:/docker/abc\n4:memory:/docker/abc/inner\n', nested, () => false)).toEqual({
      version: 1,
      pidsParent: '/sys/fs/cgroup/pids',
      memoryParent: '/sys/fs/cgroup/memory/inner',
    });
    // `/docker/abcdef` only shares a prefix with the mounted `/docker/abc`: not visible here.
    expect(cgroupLayoutFrom('8:pids:/docker/abcdef\n4:memory:/other\n', nested, () => false)).toBeUndefined();
  });

  it('reads only the controller it names from a combined v1 mount, and unescapes mount points', () => {
    const combined = mount(35, '/', '/sys/fs/cgroup/pids\\040and\\040memory', 'cgroup', 'rw,memory,pids');
    expect(cgroupLayoutFrom('5:memory,pids:/a\n', combined, () => false)).toEqual({
      version: 1,
      pidsParent: '/sys/fs/cgroup/pids and memory/a',
      memoryParent: '/sys/fs/cgroup/pids and memory/a',
    });
    expect(cgroupLayoutFrom('5:cpu:/a\n', mount(35, '/', '/sys/fs/cgroup/cpu', 'cgroup', 'rw,cpu'), () => true)).toBeUndefined();
  });
});

describe('enterCgroupsArgv', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-enter-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes its own pid into every directory before it execs the command with its arguments intact', async () => {
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    await Promise.all([a, b].map((d) => import('node:fs/promises').then((fs) => fs.mkdir(d))));
    const argv = enterCgroupsArgv([a, b], 'sh', ['-c', 'echo "$$|$1|$2"', 'x', '--', 'two words']);
    const run = spawnSync(argv.command, argv.args, { cwd: dir, env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
    expect(run.status).toBe(0);
    const [pid, first, second] = run.stdout.trim().split('|');
    // exec keeps the pid: the command itself is the process that entered.
    expect((await readFile(join(a, 'cgroup.procs'), 'utf8')).trim()).toBe(pid);
    expect((await readFile(join(b, 'cgroup.procs'), 'utf8')).trim()).toBe(pid);
    expect([first, second]).toEqual(['--', 'two words']);
  });

  it('passes on exactly the environment it was given (the shell exports no PWD of its own)', () => {
    const argv = enterCgroupsArgv([dir], 'env', []);
    const run = spawnSync(argv.command, argv.args, { cwd: dir, env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
    expect(run.stdout).toBe('PATH=/usr/bin:/bin\n');
  });

  it('ends with status 125 and runs nothing when a directory cannot be entered', async () => {
    const marker = join(dir, 'ran');
    const argv = enterCgroupsArgv([dir, join(dir, 'missing')], 'touch', [marker]);
    const run = spawnSync(argv.command, argv.args, { cwd: dir, env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
    expect(run.status).toBe(125);
    expect(run.stderr).toMatch(/^toolgate-cgroup: /m);
    await expect(readFile(marker)).rejects.toThrow();
  });
});
