import { describe, expect, it } from 'vitest';
import { containerRunArgs, type ContainerPlan } from './container-argv.js';

const plan: ContainerPlan = {
  engine: 'docker',
  name: 'toolgate-1234',
  image: 'docker.io/library/buildpack-deps:bookworm-scm',
  workspace: '/srv/toolgate/workspaces/tenant-a',
  cwd: 'src',
  command: 'bash',
  args: ['-c', 'echo hi'],
  env: { PATH: '/usr/bin:/bin', HOME: '/workspace', GREETING: 'a b' },
  user: '1001:1001',
  keepId: false,
  memory: '512m',
  cpus: '1',
  pidsLimit: 256,
  tmpSizeBytes: 1024,
};

/** The value that follows each occurrence of `flag`. */
function values(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1] ?? ''] : []));
}

describe('containerRunArgs', () => {
  const args = containerRunArgs(plan);

  it('confines the container: no network, read-only root, no capabilities, no privilege escalation, bounded resources', () => {
    expect(args.slice(0, 3)).toEqual(['run', '--rm', '--interactive']);
    expect(values(args, '--network')).toEqual(['none']);
    expect(args).toContain('--read-only');
    expect(values(args, '--cap-drop')).toEqual(['ALL']);
    expect(values(args, '--security-opt')).toEqual(['no-new-privileges']);
    expect(values(args, '--pids-limit')).toEqual(['256']);
    expect(values(args, '--memory')).toEqual(['512m']);
    expect(values(args, '--cpus')).toEqual(['1']);
    expect(values(args, '--user')).toEqual(['1001:1001']);
    expect(values(args, '--pull')).toEqual(['never']);
    expect(values(args, '--name')).toEqual(['toolgate-1234']);
    expect(args).not.toContain('--privileged');
    expect(args).not.toContain('--userns');
  });

  it('mounts only the workspace, works in it, and gives /tmp its own capped tmpfs', () => {
    expect(values(args, '--mount')).toEqual(['type=bind,source=/srv/toolgate/workspaces/tenant-a,target=/workspace']);
    expect(values(args, '--volume')).toEqual([]);
    expect(values(args, '-v')).toEqual([]);
    expect(values(args, '--workdir')).toEqual(['/workspace/src']);
    expect(values(containerRunArgs({ ...plan, cwd: '' }), '--workdir')).toEqual(['/workspace']);
    expect(values(args, '--tmpfs')).toEqual(['/tmp:rw,nosuid,nodev,size=1024']);
  });

  it('passes exactly the planned environment', () => {
    expect(values(args, '--env')).toEqual(['PATH=/usr/bin:/bin', 'HOME=/workspace', 'GREETING=a b']);
  });

  it('ends with the command as entrypoint, the image, then the arguments, so nothing after the image is an engine option', () => {
    expect(args.slice(-4)).toEqual(['--entrypoint=bash', plan.image, '-c', 'echo hi']);
    const hostile = containerRunArgs({ ...plan, command: '--privileged', args: ['--network=host'] });
    expect(hostile.slice(-3)).toEqual(['--entrypoint=--privileged', plan.image, '--network=host']);
    expect(hostile.indexOf(plan.image)).toBe(hostile.length - 2);
  });

  it('maps the caller into rootless podman with keep-id', () => {
    expect(values(containerRunArgs({ ...plan, engine: 'podman', keepId: true }), '--userns')).toEqual(['keep-id']);
  });

  it('refuses a workspace path whose comma would inject mount options', () => {
    expect(() => containerRunArgs({ ...plan, workspace: '/srv/a,readonly=false,source=/' })).toThrow('comma');
  });
});
