import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { isAbsolute, normalize, sep } from 'node:path';
import type { JsonObject } from '@toolgate/contracts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** A workspace file an approval's arguments name, as it is now. */
export interface NamedFile {
  /** The argument as written, relative to the tenant's workspace. */
  readonly path: string;
  /** `sha256:<hex>` of the file's current contents, when it could be read within the limits. */
  readonly sha256?: string;
  readonly bytes?: number;
  /** Why there is no digest (too large, changed while read, over the listing's budget). */
  readonly note?: string;
}

/** Bounds that keep showing digests cheap: a listing never reads more than this. */
export const NAMED_FILE_LIMITS = {
  filesPerApproval: 16,
  bytesPerFile: 8 * 1024 * 1024,
  /** Across one listing (or one request), so 500 listed approvals cannot read gigabytes. */
  bytesPerListing: 64 * 1024 * 1024,
  chunkBytes: 64 * 1024,
} as const;

/** What every approval says about files, wherever approvals are shown. */
export const APPROVAL_FILES_NOTE =
  'An approval binds these exact arguments, not the contents of files they name: a file changed after approval runs as changed.';

/**
 * The arguments of `bash` and `git` that are, exactly, paths of regular files in the workspace:
 * git's non-option arguments, and a bash command that is nothing but a path. Nothing is guessed
 * from inside a command line (`bash deploy.sh && rm x` names no file here).
 */
export function namedPaths(tool: string, args: JsonObject): string[] {
  const candidates =
    tool === 'git' && Array.isArray(args['args'])
      ? args['args'].filter((a): a is string => typeof a === 'string' && a !== '' && !a.startsWith('-')).slice(1)
      : tool === 'bash' && typeof args['command'] === 'string'
        ? [args['command']]
        : [];
  return [...new Set(candidates)].filter(plainRelativePath).slice(0, NAMED_FILE_LIMITS.filesPerApproval);
}

/** Relative, inside the root lexically, no NUL, no empty or `..` segment. */
function plainRelativePath(path: string): boolean {
  if (path.length > 4096 || path.includes('\u0000') || isAbsolute(path)) return false;
  // `..` is refused as written, before normalising: the kernel follows `link` in `link/../x`
  // before it climbs, so `normalize` (which drops both) would digest another file than runs.
  if (path.split(sep).includes('..')) return false;
  const parts = normalize(path).split(sep);
  return parts.every((p) => p !== '..' && p !== '') && parts[0] !== '.';
}

/** A byte budget shared by every file read for one answer. */
export class ReadBudget {
  constructor(private left: number = NAMED_FILE_LIMITS.bytesPerListing) {}
  take(bytes: number): boolean {
    if (bytes > this.left) return false;
    this.left -= bytes;
    return true;
  }
}

/**
 * The current SHA-256 of each path that is a regular file inside `workspace`, confined as the
 * workspace tools confine paths (ADR 0014): the walk starts from an opened workspace root and
 * opens every directory relative to the previous one's descriptor with O_NOFOLLOW|O_DIRECTORY,
 * so a component swapped for a symbolic link mid-walk fails to open instead of leading outside.
 * The last component is looked at and opened relative to its directory's descriptor without
 * following links (a symbolic link, a directory, a FIFO or a device names no file here), must be
 * the very file that was looked at, and is read in chunks through that descriptor so a large file
 * never holds the event loop. Paths that name no such file are left out; nothing throws.
 */
export async function digestNamedFiles(workspace: string, paths: readonly string[], budget: ReadBudget): Promise<NamedFile[]> {
  const found: NamedFile[] = [];
  let root: FileHandle;
  try {
    root = await open(workspace, O_RDONLY | O_DIRECTORY);
  } catch {
    return found;
  }
  try {
    for (const path of paths) {
      const file = await digestOne(root, path, budget).catch(() => undefined);
      if (file) found.push(file);
    }
  } finally {
    await root.close().catch(() => undefined);
  }
  return found;
}

/** `name` inside the directory `dir` is open on, resolved from the descriptor, never by path. */
const under = (dir: FileHandle, name: string) => `/proc/self/fd/${dir.fd}/${name}`;

async function digestOne(root: FileHandle, path: string, budget: ReadBudget): Promise<NamedFile | undefined> {
  // Checked again here so the walk never relies on its callers for `..`, absolute paths or NUL.
  if (!plainRelativePath(path)) return undefined;
  const parts = normalize(path).split(sep);
  const name = parts.pop();
  if (name === undefined) return undefined;
  const opened: FileHandle[] = [];
  try {
    let dir = root;
    for (const part of parts) {
      // O_NOFOLLOW|O_DIRECTORY relative to the descriptor: a symlink (swapped in or not) fails here.
      dir = await open(under(dir, part), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      opened.push(dir);
    }
    return await digestFile(dir, path, name, budget);
  } finally {
    for (const handle of opened.reverse()) await handle.close().catch(() => undefined);
  }
}

async function digestFile(dir: FileHandle, path: string, name: string, budget: ReadBudget): Promise<NamedFile | undefined> {
  // Looked at first (without following) so a FIFO or device is never opened at all.
  const seen = await lstat(under(dir, name));
  if (!seen.isFile()) return undefined;
  if (seen.size > NAMED_FILE_LIMITS.bytesPerFile) return { path, bytes: seen.size, note: `not hashed: larger than ${NAMED_FILE_LIMITS.bytesPerFile} bytes` };
  if (!budget.take(seen.size)) return { path, bytes: seen.size, note: 'not hashed: this answer already read as much as it may' };
  const handle = await open(under(dir, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    const opened = await handle.stat();
    if (!opened.isFile() || opened.ino !== seen.ino || opened.dev !== seen.dev) return undefined;
    const hash = createHash('sha256');
    const chunk = Buffer.alloc(NAMED_FILE_LIMITS.chunkBytes);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      // Growing while read: what is hashed would not be what the approver believes it is.
      if (total > seen.size) return { path, note: 'not hashed: the file changed while it was read' };
      hash.update(chunk.subarray(0, bytesRead));
    }
    if (total !== seen.size) return { path, note: 'not hashed: the file changed while it was read' };
    return { path, sha256: `sha256:${hash.digest('hex')}`, bytes: total };
  } finally {
    await handle.close();
  }
}
