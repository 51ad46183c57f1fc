import { lstatSync, readlinkSync } from 'node:fs';

/** Where the workspace appears inside the sandbox. */
export const SANDBOX_WORKSPACE = '/workspace';

/** How a top-level host directory such as `/bin` is recreated: as the same symlink, or a read-only bind. */
export type TopLevelEntry = { readonly path: string; readonly symlink: string } | { readonly path: string; readonly bind: true };

/** Everything the sandbox is built from; a plain value so the argv is a pure function of it. */
export interface SandboxPlan {
  /** Host workspace root, symlinks resolved. */
  readonly workspace: string;
  /** Working directory relative to the workspace (`''` for the root). */
  readonly cwd: string;
  readonly uid: number;
  readonly gid: number;
  readonly hostname: string;
  readonly tmpSizeBytes: number;
  /** Size of the private `/dev/shm`, the only writable place in `/dev`. */
  readonly shmSizeBytes: number;
  /** `/bin`, `/lib`, … as the host has them (merged-/usr distros: symlinks into /usr). */
  readonly topLevel: readonly TopLevelEntry[];
  /** Host files or directories bound read-only at the same path, skipped when absent. */
  readonly readOnly: readonly string[];
  /**
   * The operator's read-only paths of this process (`ProcessSpec.readOnlyPaths`), checked to exist
   * and bound read-only at the same path with `--ro-bind`, so one that vanished fails the start.
   */
  readonly readOnlyPaths?: readonly string[];
  /** Generated `/etc/passwd` and `/etc/group` on the host. */
  readonly passwdFile: string;
  readonly groupFile: string;
  /** The complete environment of the command. */
  readonly env: Readonly<Record<string, string>>;
}

/** Host directories below `/` that hold programs or libraries on common distros. */
const TOP_LEVEL_CANDIDATES = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** Reads how this host lays out `/bin`, `/lib`, … (symlinks into /usr on merged-/usr systems). */
export function hostTopLevel(): TopLevelEntry[] {
  const entries: TopLevelEntry[] = [];
  for (const path of TOP_LEVEL_CANDIDATES) {
    try {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) entries.push({ path, symlink: readlinkSync(path) });
      else if (stat.isDirectory()) entries.push({ path, bind: true });
    } catch {
      // Absent on this distro.
    }
  }
  return entries;
}

/**
 * The bubblewrap options (everything before `--`) for one sandbox. Order matters: mounts are
 * made in sequence, and the root is remounted read-only last so nothing can be created in it.
 *
 * What the sandbox sees: `/usr` (read-only), the distro's `/bin`/`/lib` links, a fresh `/proc`
 * of its own pid namespace, a minimal read-only `/dev` with a size-capped `/dev/shm`, a private size-capped `/tmp`, a generated
 * `/etc/passwd` and `/etc/group`, the few read-only `/etc` entries in `readOnly`, the operator's
 * `readOnlyPaths` read-only at their own place, and the workspace read-write at `/workspace`. No host `/etc`, `/home`, `/root`, `/var`, `/run`; no
 * network (own empty network namespace); no capabilities; no nested user namespaces.
 */
export function bwrapArgs(plan: SandboxPlan): string[] {
  const args = [
    '--unshare-all',
    // Explicit, so a non-root uid can be mapped even when bwrap runs as root.
    '--unshare-user',
    '--disable-userns',
    '--uid',
    String(plan.uid),
    '--gid',
    String(plan.gid),
    '--hostname',
    plan.hostname,
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--clearenv',
  ];
  for (const [name, value] of Object.entries(plan.env)) args.push('--setenv', name, value);
  args.push('--ro-bind', '/usr', '/usr');
  for (const entry of plan.topLevel) {
    if ('symlink' in entry) args.push('--symlink', entry.symlink, entry.path);
    else args.push('--ro-bind', entry.path, entry.path);
  }
  // bwrap's /dev is a tmpfs the sandbox user owns with no size cap: it gets a capped /dev/shm and
  // is then made read-only (device nodes are bind mounts of their own and stay usable).
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(plan.shmSizeBytes), '--tmpfs', '/dev/shm', '--remount-ro', '/dev');
  args.push('--size', String(plan.tmpSizeBytes), '--tmpfs', '/tmp');
  args.push('--ro-bind', plan.passwdFile, '/etc/passwd', '--ro-bind', plan.groupFile, '/etc/group');
  for (const path of plan.readOnly) args.push('--ro-bind-try', path, path);
  // Shallower first: a mount made after one below it would hide it.
  const operatorPaths = [...(plan.readOnlyPaths ?? [])].sort((a, b) => depth(a) - depth(b));
  for (const path of operatorPaths) args.push('--ro-bind', path, path);
  args.push('--bind', plan.workspace, SANDBOX_WORKSPACE);
  args.push('--remount-ro', '/');
  args.push('--chdir', plan.cwd === '' ? SANDBOX_WORKSPACE : `${SANDBOX_WORKSPACE}/${plan.cwd}`);
  return args;
}

function depth(path: string): number {
  return path.split('/').length;
}
