import { realpathSync, statfsSync, statSync } from 'node:fs';
import { ToolError } from '@toolgate/contracts';
import { SANDBOX_WORKSPACE } from './bwrap-argv.js';

/** Most read-only paths one process may name: each is one mount, and bwrap's argv is bounded. */
export const MAX_READ_ONLY_PATHS = 64;
/** Longest read-only path accepted (Linux `PATH_MAX` is 4096 with its NUL). */
export const MAX_READ_ONLY_PATH_CHARS = 4095;

/**
 * Places the sandbox builds itself. A host path mounted at one of them (or above one) would
 * replace the sandbox's own `/proc`, `/dev`, `/tmp`, identity files or workspace with the
 * host's, so the runner refuses it rather than weaken the sandbox; below `/tmp` is fine (the
 * mount lands in the private tmpfs).
 */
const SANDBOX_OWN = ['/proc', '/dev', '/sys', SANDBOX_WORKSPACE];
const SANDBOX_OWN_EXACT = ['/tmp', '/etc/passwd', '/etc/group', '/etc'];

/**
 * Kernel file systems by `statfs` type (`linux/magic.h`). Mounted under any name they show the
 * host itself (a second procfs lists every host process), and the sandbox makes its own `/proc`
 * and `/dev`, so a read-only path on one is refused here too, whatever checked it before.
 */
export const KERNEL_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0xcafe4a11, 'bpf'],
  [0x19800202, 'mqueue'],
  [0x62656570, 'configfs'],
  [0x65735543, 'fusectl'],
  [0x6165676c, 'pstore'],
  [0xde5e81e4, 'efivarfs'],
  [0x42494e4d, 'binfmt_misc'],
  [0x958458f6, 'hugetlbfs'],
  [0x0187, 'autofs'],
  [0x6e736673, 'nsfs'],
  [0x67596969, 'rpc_pipefs'],
  [0xf97cff8c, 'selinuxfs'],
  [0x43415d53, 'smackfs'],
  [0xabba1974, 'xenfs'],
]);

/** Whether `path` is `root` or lies below it (both normalised absolute paths). */
export function isAtOrUnder(path: string, root: string): boolean {
  return root === '/' || path === root || path.startsWith(`${root}/`);
}

/**
 * The operator's read-only paths of one process, checked before any mount is planned. Each must
 * be an absolute, normalised path (no `.`, `..`, empty segments or trailing `/`), not `/`, not
 * a place the sandbox makes itself, and must exist on the host now as its own real path (no
 * symbolic link on the way, as at the start-time check) on an ordinary file system, not a
 * kernel one such as a second procfs (ADR 0072): a path that would not be
 * mounted fails the start with its reason instead of being dropped (`ProcessSpec.readOnlyPaths`).
 * The messages name the path: it is the operator's own configuration, and these errors go to
 * the operator log when a server starts.
 */
export function checkReadOnlyPaths(paths: readonly string[] | undefined): readonly string[] {
  if (paths === undefined) return [];
  if (!Array.isArray(paths)) throw refused('the read-only paths must be a list of absolute paths');
  if (paths.length > MAX_READ_ONLY_PATHS) throw refused(`at most ${MAX_READ_ONLY_PATHS} read-only paths may be mounted, not ${paths.length}`);
  const seen = new Set<string>();
  for (const path of paths) {
    const why = structuralFault(path);
    if (why !== undefined) throw refused(`read-only path ${shown(path)} is refused: ${why}`);
    let kind: string;
    try {
      const stat = statSync(path);
      kind = stat.isDirectory() || stat.isFile() ? 'ok' : 'neither a file nor a directory';
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      kind = code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist on this host' : `cannot be read on this host (${code ?? 'error'})`;
    }
    if (kind !== 'ok') throw refused(`read-only path ${shown(path)} ${kind === 'neither a file nor a directory' ? `is ${kind}` : kind}; it would not be mounted`);
    // Checked at start as its own real path; a link put in its place since would redirect the mount.
    if (realpathSync(path) !== path) throw refused(`read-only path ${shown(path)} now resolves through a symbolic link; it is not mounted`);
    const type = statfsSync(path).type;
    const kernel = KERNEL_FILE_SYSTEMS.get(type >>> 0) ?? KERNEL_FILE_SYSTEMS.get(type);
    if (kernel !== undefined) throw refused(`read-only path ${shown(path)} is on the kernel file system '${kernel}', which would show the host itself; it is not mounted`);
    seen.add(path);
  }
  return [...seen];
}

/** Why `path` cannot be mounted read-only at its own place, or undefined when it can. */
function structuralFault(path: unknown): string | undefined {
  if (typeof path !== 'string') return 'it is not a string';
  if (path.length === 0) return 'it is empty';
  if (path.length > MAX_READ_ONLY_PATH_CHARS) return `it is longer than ${MAX_READ_ONLY_PATH_CHARS} characters`;
  // bwrap's arguments are C strings; a control character in a mount path is never meant.
  if ([...path].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007f')) return 'it holds a control character';
  if (!path.startsWith('/')) return 'it is not an absolute path';
  if (path === '/') return 'it is the root directory, the whole host';
  const segments = path.slice(1).split('/');
  if (segments.some((s) => s === '')) return 'it has an empty segment or a trailing "/"';
  if (segments.some((s) => s === '.' || s === '..')) return 'it has a "." or ".." segment';
  for (const own of SANDBOX_OWN) {
    if (isAtOrUnder(path, own)) return `the sandbox makes ${own} itself`;
  }
  for (const own of SANDBOX_OWN_EXACT) {
    if (path === own) return `the sandbox makes ${own} itself`;
  }
  return undefined;
}

function refused(message: string): ToolError {
  return new ToolError(message, 'READ_ONLY_PATH_REFUSED');
}

/** A path for a message: quoted, cut short, control characters escaped by JSON. */
function shown(path: unknown): string {
  if (typeof path !== 'string') return String(typeof path);
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
}
