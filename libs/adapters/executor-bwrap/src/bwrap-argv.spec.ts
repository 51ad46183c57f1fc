import { describe, expect, it } from 'vitest';
import { bwrapArgs, type SandboxPlan } from './bwrap-argv.js';

const plan: SandboxPlan = {
  workspace: '/srv/toolgate/workspaces/tenant-a',
  cwd: 'src/app',
  uid: 1000,
  gid: 1000,
  hostname: 'toolgate-sandbox',
  tmpSizeBytes: 1024,
  shmSizeBytes: 512,
  topLevel: [
    { path: '/bin', symlink: 'usr/bin' },
    { path: '/lib64', bind: true },
  ],
  readOnly: ['/etc/alternatives'],
  passwdFile: '/tmp/ids/passwd',
  groupFile: '/tmp/ids/group',
  env: { PATH: '/usr/bin', HOME: '/workspace', GREETING: 'a b' },
};

/** The values that follow each occurrence of `flag`. */
function after(args: string[], flag: string, count = 1): string[][] {
  return args.flatMap((a, i) => (a === flag ? [args.slice(i + 1, i + 1 + count)] : []));
}

describe('bwrapArgs', () => {
  const args = bwrapArgs(plan);

  it('unshares every namespace, network included, and drops every privilege', () => {
    expect(args).toEqual(expect.arrayContaining(['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--clearenv']));
    expect(args).not.toContain('--share-net');
    expect(after(args, '--cap-drop')).toEqual([['ALL']]);
    expect(after(args, '--uid')).toEqual([['1000']]);
  });

  it('sets exactly the planned environment after clearing it', () => {
    expect(args.indexOf('--clearenv')).toBeLessThan(args.indexOf('--setenv'));
    expect(after(args, '--setenv', 2)).toEqual([
      ['PATH', '/usr/bin'],
      ['HOME', '/workspace'],
      ['GREETING', 'a b'],
    ]);
  });

  it('mounts the workspace as the only writable host path, and the root read-only last', () => {
    expect(after(args, '--bind', 2)).toEqual([[plan.workspace, '/workspace']]);
    expect(after(args, '--ro-bind', 2)).toEqual([
      ['/usr', '/usr'],
      ['/lib64', '/lib64'],
      ['/tmp/ids/passwd', '/etc/passwd'],
      ['/tmp/ids/group', '/etc/group'],
    ]);
    expect(after(args, '--ro-bind-try', 2)).toEqual([['/etc/alternatives', '/etc/alternatives']]);
    expect(after(args, '--symlink', 2)).toEqual([['usr/bin', '/bin']]);
    expect(args.lastIndexOf('--remount-ro')).toBeGreaterThan(args.lastIndexOf('--bind'));
    expect(after(args, '--remount-ro').at(-1)).toEqual(['/']);
    // Every tmpfs is size-capped: /dev/shm and /tmp (H10: /dev was an uncapped tmpfs).
    expect(after(args, '--size', 3)).toEqual([
      ['512', '--tmpfs', '/dev/shm'],
      ['1024', '--tmpfs', '/tmp'],
    ]);
    expect(after(args, '--tmpfs')).toEqual([['/dev/shm'], ['/tmp']]);
    expect(after(args, '--chdir')).toEqual([['/workspace/src/app']]);
    expect(bwrapArgs({ ...plan, cwd: '' })).toContain('/workspace');
    expect(after(bwrapArgs({ ...plan, cwd: '' }), '--chdir')).toEqual([['/workspace']]);
  });

  it("binds the operator's read-only paths with --ro-bind (never -try), shallower first, before the workspace", () => {
    const withPaths = bwrapArgs({ ...plan, readOnlyPaths: ['/opt/servers/x/lib', '/opt/servers/x', '/srv/node_modules'] });
    expect(after(withPaths, '--ro-bind', 2).slice(-3)).toEqual([
      ['/srv/node_modules', '/srv/node_modules'],
      ['/opt/servers/x', '/opt/servers/x'],
      ['/opt/servers/x/lib', '/opt/servers/x/lib'],
    ]);
    expect(after(withPaths, '--ro-bind-try', 2)).toEqual([['/etc/alternatives', '/etc/alternatives']]);
    expect(withPaths.lastIndexOf('/opt/servers/x/lib')).toBeLessThan(withPaths.indexOf('--bind'));
    expect(withPaths.lastIndexOf('/opt/servers/x/lib')).toBeGreaterThan(withPaths.indexOf('/tmp'));
  });

  it('makes /dev read-only after its capped /dev/shm is mounted', () => {
    const dev = args.indexOf('--dev');
    const shm = args.indexOf('/dev/shm');
    const readOnlyDev = args.findIndex((a, i) => a === '/dev' && args[i - 1] === '--remount-ro');
    expect(dev).toBeGreaterThan(-1);
    expect(shm).toBeGreaterThan(dev);
    expect(readOnlyDev).toBeGreaterThan(shm);
  });

  it('leaves the end of options to the caller, so no command can be read as an option', () => {
    expect(args).not.toContain('--');
  });
});
