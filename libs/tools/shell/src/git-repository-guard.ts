import { lstat, opendir, realpath } from 'node:fs/promises';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { ToolAbortedError, ToolError } from '@toolgate/contracts';

/** What {@link inspectWorkspace} found at the workspace root. */
export interface RepositoryLayout {
  /** `.git` is a directory of the workspace itself (checked below), so git has a repository to work on. */
  readonly repository: boolean;
  /** `.git/config` exists, so its settings must be checked before git runs. */
  readonly config: boolean;
}

/** Options of {@link inspectWorkspace}. */
export interface InspectOptions {
  /** Most files and directories looked at before the check gives up (and refuses). Default {@link MAX_CHECKED_ENTRIES}. */
  readonly maxEntries?: number;
  /** The call's signal: an aborted call stops the walk (`ToolAbortedError`) instead of finishing it for nothing. */
  readonly signal?: AbortSignal;
}

/** Default bound of the workspace walk: enough for a large monorepo with its dependencies. */
export const MAX_CHECKED_ENTRIES = 250_000;

/**
 * Files inside `.git` that make git read or write another repository: `commondir` (objects,
 * references and config of another repository), `config.worktree` (a second config file), and
 * alternates (another repository's objects, e.g. another tenant's at tier 1).
 */
const REDIRECTING_FILES: ReadonlyMap<string, string> = new Map([
  ['.git/commondir', "makes git use another repository's objects, references and config"],
  ['.git/config.worktree', 'is a second config file, which this tool does not check'],
  ['.git/objects/info/alternates', "makes git read another repository's objects"],
  ['.git/objects/info/http-alternates', "makes git read another repository's objects"],
]);

/** Refuses the repository the call would run on, saying what is wrong with it (never a host path). */
export function refuseRepository(message: string): never {
  throw new ToolError(`git: ${message}; Toolgate's git tool refuses such repositories`, 'GIT_REPOSITORY_REFUSED');
}

const refuse = refuseRepository;

function errorCode(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : 'EUNKNOWN';
}

/** A workspace-relative path as it may appear in a message: control characters made visible. */
function shown(path: string): string {
  // eslint-disable-next-line no-control-regex -- the point is to find control characters
  return path.replace(/[\u0000-\u001f\u007f]/g, '?');
}

/** Whether `path` is `root` or below it (both absolute, normalised, symlinks resolved). */
function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The workspace root with symlinks resolved, or null if it does not exist yet (a tenant's first call). */
async function resolvedRoot(workspaceRoot: string): Promise<string | null> {
  try {
    return await realpath(workspaceRoot);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw new ToolError('git: the workspace could not be opened', 'GIT_REPOSITORY_REFUSED');
  }
}

/** The kind of a directory entry, asking the file system when the listing did not say (`DT_UNKNOWN`). */
async function kindOf(entry: { name: string; isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }, path: string) {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'directory';
  if (entry.isFile()) return 'file';
  const stats = await lstat(path);
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isDirectory()) return 'directory';
  if (stats.isFile()) return 'file';
  return 'special';
}

/**
 * Checks, without running anything, that git at the workspace root can only ever work on the
 * workspace's own `.git` directory:
 *
 * - `.git` is absent or a real directory: not a symlink and not a `gitdir:` file, either of which
 *   points git at a repository elsewhere;
 * - inside `.git`, no symlink, FIFO or device, and no file that redirects git to another
 *   repository ({@link REDIRECTING_FILES});
 * - nowhere below the root another `.git` (file, directory or link, in any case): git runs
 *   `git status` inside a nested repository it finds through a gitlink, with that repository's
 *   own configuration, which this tool never checked, and `.gitmodules` can ask it to.
 *
 * The walk never follows symlinks and stops with a refusal after `maxEntries` entries, so a
 * huge or deep tree costs a bounded amount and never blocks the event loop (it is all async).
 */
export async function inspectWorkspace(workspaceRoot: string, options: InspectOptions = {}): Promise<RepositoryLayout> {
  const maxEntries = options.maxEntries ?? MAX_CHECKED_ENTRIES;
  const root = await resolvedRoot(workspaceRoot);
  if (root === null) return { repository: false, config: false };
  let gitKind: string;
  try {
    const stats = await lstat(join(root, '.git'));
    gitKind = stats.isSymbolicLink() ? 'symlink' : stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'special';
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') refuse(`'.git' could not be read (${errorCode(error)})`);
    gitKind = 'absent';
  }
  if (gitKind === 'symlink') refuse("'.git' is a symbolic link, which points git at a repository elsewhere");
  if (gitKind === 'file') refuse("'.git' is a file (a gitdir: pointer), which points git at a repository elsewhere");
  if (gitKind === 'special') refuse("'.git' is not a directory");
  // Without a repository git refuses to work (or `init` creates a fresh one): nothing to check.
  if (gitKind === 'absent') return { repository: false, config: false };

  let seen = 0;
  let config = false;
  const pending: { relative: string; inGit: boolean }[] = [{ relative: '', inGit: false }];
  while (pending.length > 0) {
    const { relative, inGit } = pending.pop() as { relative: string; inGit: boolean };
    const directory = relative === '' ? root : join(root, relative);
    if (options.signal?.aborted) throw new ToolAbortedError();
    try {
      for await (const entry of await opendir(directory, { bufferSize: 256 })) {
        seen += 1;
        if (seen > maxEntries) {
          refuse(`the workspace holds more than ${maxEntries} files and directories; the git tool checks every one for planted repositories before git runs, and stops there`);
        }
        const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
        const kind = await kindOf(entry, join(root, path));
        if (!inGit) {
          if (entry.name.toLowerCase() === '.git') {
            if (path === '.git') {
              // Checked above, but it may have been swapped since: never walk (or use) a linked .git.
              if (kind !== 'directory') refuse("'.git' is not a directory");
              pending.push({ relative: path, inGit: true });
              continue;
            }
            refuse(`'${shown(path)}' is a nested repository (or points to one); git would run programs from its configuration, which this tool cannot check`);
          }
          if (kind === 'directory') pending.push({ relative: path, inGit: false });
          continue;
        }
        if (kind === 'symlink') refuse(`'${shown(path)}' is a symbolic link inside .git, which lets git read or write outside the repository`);
        if (kind === 'special') refuse(`'${shown(path)}' is a FIFO, socket or device inside .git`);
        const why = REDIRECTING_FILES.get(path);
        if (why) refuse(`'${path}' ${why}`);
        if (path === '.git/config') config = true;
        if (kind === 'directory') pending.push({ relative: path, inGit: true });
      }
    } catch (error) {
      if (error instanceof ToolError) throw error;
      refuse(`'${shown(relative === '' ? '.' : relative)}' could not be checked (${errorCode(error)})`);
    }
  }
  return { repository: true, config };
}

/**
 * Refuses an argument that names a path in the workspace which, through a symbolic link, lies
 * outside it (`commit -F notes` with `notes -> /etc/hostname`, `mv a.txt out/` with
 * `out -> /srv/other-tenant`) or inside `.git` (`mv -f a.txt into/config` with `into -> .git`,
 * a link git itself can create from a patch). Arguments were already checked as text (no absolute path, no
 * `..`); this checks what the file system makes of them. A name that does not exist is checked
 * through its longest existing parent. Resolved on the host, where the tier's view of the
 * workspace comes from.
 */
export async function checkPathOperands(workspaceRoot: string, operands: readonly string[]): Promise<void> {
  const root = await resolvedRoot(workspaceRoot);
  if (root === null) return;
  for (const operand of operands) {
    let probe = normalize(operand);
    for (;;) {
      try {
        const real = await realpath(join(root, probe));
        if (!isInside(root, real)) {
          throw new ToolError(`git: '${shown(operand)}' leads outside the workspace through a symbolic link`, 'GIT_ARGUMENT_REFUSED');
        }
        // `git mv -f a.txt link/config` with `link -> .git` really overwrites .git/config.
        if (relative(root, real).split(sep)[0]?.toLowerCase() === '.git') {
          throw new ToolError(`git: '${shown(operand)}' leads into git's own directory (.git) through a symbolic link`, 'GIT_ARGUMENT_REFUSED');
        }
        break;
      } catch (error) {
        if (error instanceof ToolError) throw error;
        const code = errorCode(error);
        // Longer than any path can be: not a file name (a long commit message), nothing to resolve.
        if (code === 'ENAMETOOLONG') break;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') {
          throw new ToolError(`git: '${shown(operand)}' could not be resolved in the workspace (${code})`, 'GIT_ARGUMENT_REFUSED');
        }
        const parent = dirname(probe);
        if (parent === probe) break;
        probe = parent;
      }
    }
  }
}
