import { randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import { isAbsolute, sep } from 'node:path';
import { PathEscapeError, ToolError } from '@toolgate/contracts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Longest path argument accepted (Linux PATH_MAX). */
export const MAX_PATH_LENGTH = 4096;
/** Symlinks followed in one resolution before it is treated as a loop (as the kernel does). */
const MAX_SYMLINK_HOPS = 40;
/** How a given path is shown in a message: bounded, NUL bytes made visible. */
const SHOWN_LENGTH = 200;

/** A path argument as it may appear in an error message. */
export function shown(given: string): string {
  const visible = given.replaceAll('\0', '\\0');
  return visible.length > SHOWN_LENGTH ? `${visible.slice(0, SHOWN_LENGTH)}…` : visible;
}

/** The magic link through which the kernel resolves `name` relative to an open directory, like `openat(fd, name)`. */
function at(dir: FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Whether `path` is `root` or below it (both absolute and normalised). */
function isInside(root: string, path: string): boolean {
  if (root === sep) return path.startsWith(sep);
  return path === root || path.startsWith(root + sep);
}

/** An opened file or directory and where it is, relative to the workspace root. */
export interface Opened {
  readonly handle: FileHandle;
  /** Path components below the root after symlinks were resolved (empty for the root). */
  readonly rel: readonly string[];
}

/** The directory that will hold an entry, and what the entry currently is. */
interface Parent {
  readonly dir: FileHandle;
  readonly name: string;
  readonly rel: readonly string[];
  readonly existing: 'none' | 'file' | 'directory' | 'other';
  /** Inode of the existing entry, to notice a replacement between read and write. */
  readonly ino?: number;
  readonly mode?: number;
}

type Want = 'file' | 'directory' | 'parent';

/**
 * A tenant workspace that every path argument is confined to. Paths are checked as strings first
 * (NUL, empty, `..` out, absolute outside), then resolved one component at a time against open
 * directory handles with `O_NOFOLLOW` (`/proc/self/fd/N/name` is the kernel's `openat`), so no
 * swap of a component between check and use can redirect the operation: what is checked is the
 * opened directory, not a string. Symlinks are followed only when their target stays inside the
 * root. Every opened file is verified again through its own handle before use. See ADR 0014.
 *
 * `..` is resolved lexically before anything is opened (`a/link/../b` is `a/b`), which is
 * stricter than the kernel and can never leave the root.
 */
export class Workspace {
  private constructor(
    /** The root as configured (`ctx.workspaceRoot`). */
    readonly root: string,
    /** The root with symlinks resolved: what opened files are verified against. */
    readonly realRoot: string,
  ) {}

  /** Opens the workspace, creating the root directory on a tenant's first call. */
  static async open(root: string): Promise<Workspace> {
    if (typeof root !== 'string' || !isAbsolute(root) || root.includes('\0')) {
      throw new ToolError('the workspace root is not configured correctly', 'INVALID_WORKSPACE');
    }
    if (!existsSync('/proc/self/fd')) {
      // Without /proc there is no way to resolve relative to an open directory: refuse rather than check strings.
      throw new ToolError('workspace file tools need Linux with /proc mounted', 'UNSUPPORTED_PLATFORM');
    }
    await mkdir(root, { recursive: true, mode: 0o700 });
    return new Workspace(root, await realpath(root));
  }

  /**
   * The components of a path argument below the root, checked as a string: not empty, no NUL,
   * not too long, absolute only if inside the root, no `..` that climbs out.
   */
  components(given: string): string[] {
    if (typeof given !== 'string') throw new ToolError('the path must be a string', 'INVALID_PATH');
    if (given.length === 0) throw new PathEscapeError('', 'is empty');
    if (given.includes('\0')) throw new PathEscapeError(shown(given), 'contains a NUL byte');
    if (given.length > MAX_PATH_LENGTH) throw new PathEscapeError(shown(given), `is longer than ${MAX_PATH_LENGTH} characters`);
    let relative = given;
    if (isAbsolute(given)) {
      // An absolute path is accepted only inside the root (as configured or resolved); prefixes
      // must match whole components, so `<root>-evil` is outside.
      const base = [this.root, this.realRoot].find((r) => isInside(r, given.replace(/\/+$/, '') || '/'));
      if (base === undefined) throw new PathEscapeError(shown(given), 'is outside the workspace');
      relative = given.slice(base.length);
    }
    const parts: string[] = [];
    for (const part of relative.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (parts.length === 0) throw new PathEscapeError(shown(given), 'leaves the workspace');
        parts.pop();
      } else parts.push(part);
    }
    return parts;
  }

  /** Opens a regular file for reading. */
  async openFile(given: string): Promise<Opened> {
    const opened = await this.resolve(given, 'file', false);
    if (!('handle' in opened)) throw new Error('unreachable');
    return opened;
  }

  /** Opens a directory (for listing and walking). */
  async openDirectory(given: string): Promise<Opened> {
    const opened = await this.resolve(given, 'directory', false);
    if (!('handle' in opened)) throw new Error('unreachable');
    return opened;
  }

  /**
   * Replaces (or creates) a file atomically: the data goes to a temporary file in the same
   * directory, is flushed, and is renamed over the target, so a crash leaves the old file or the
   * new one, never half of one. The rename replaces the directory entry and never follows a
   * symlink, and the directory is verified to be inside the root through its own handle.
   *
   * `expectIno` makes the write fail if the file was replaced since it was read (edit_file).
   */
  async writeFile(
    given: string,
    data: Uint8Array,
    options: { readonly createDirs: boolean; readonly expectIno?: number },
  ): Promise<{ rel: readonly string[]; created: boolean }> {
    const parent = await this.resolve(given, 'parent', options.createDirs);
    if (!('dir' in parent)) throw new Error('unreachable');
    const { dir, name } = parent;
    try {
      protect(given, parent.rel);
      if (parent.existing === 'directory') throw new ToolError(`'${shown(given)}' is a directory`, 'IS_A_DIRECTORY');
      if (parent.existing === 'other') throw new ToolError(`'${shown(given)}' is not a regular file`, 'NOT_A_FILE');
      if (options.expectIno !== undefined && parent.ino !== options.expectIno) {
        throw new ToolError(`'${shown(given)}' changed while it was being edited; read it again`, 'CONFLICT');
      }
      await this.verify(dir, given);
      const mode = parent.mode !== undefined ? parent.mode & 0o7777 : 0o644;
      const temporary = `.toolgate-${randomBytes(8).toString('hex')}.tmp`;
      const file = await open(at(dir, temporary), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
      try {
        try {
          await file.writeFile(data);
          await file.chmod(mode);
          await file.datasync();
        } finally {
          await file.close();
        }
        await rename(at(dir, temporary), at(dir, name));
      } catch (error) {
        await unlink(at(dir, temporary)).catch(() => undefined);
        throw translate(error, given);
      }
      // The rename is durable only once the directory itself is flushed.
      await dir.sync().catch(() => undefined);
      return { rel: parent.rel, created: parent.existing === 'none' };
    } finally {
      await dir.close();
    }
  }

  /** Proves an opened handle is inside the root, by asking the kernel where it is. */
  async verify(handle: FileHandle, given: string): Promise<void> {
    let where: string;
    try {
      where = await readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      throw new ToolError(`'${shown(given)}' could not be verified`, 'UNVERIFIABLE');
    }
    // A file replaced after it was opened (an atomic write by someone else) is still the file that was reached: check where it was.
    const path = where.endsWith(' (deleted)') ? where.slice(0, -' (deleted)'.length) : where;
    if (!isInside(this.realRoot, path)) throw new PathEscapeError(shown(given), 'resolves outside the workspace');
  }

  /** `rel` as a workspace-relative display path. */
  static display(rel: readonly string[]): string {
    return rel.length === 0 ? '.' : rel.join('/');
  }

  /**
   * Walks `given` from the root one component at a time through open directory handles, never
   * following a symlink implicitly. A symlink is resolved here, and only if its target stays
   * inside the root; resolution then restarts from the root with the target's components.
   */
  private async resolve(given: string, want: Want, createDirs: boolean): Promise<Opened | Parent> {
    let pending = this.components(given);
    let rel: string[] = [];
    let current = await this.openRoot();
    let hops = 0;
    // Bounds the retries after a directory was created or a component changed under us.
    let retries = 0;
    const retry = (error: unknown): void => {
      if (++retries > 1024) throw translate(error, given);
    };
    const detour = async (name: string): Promise<void> => {
      if (++hops > MAX_SYMLINK_HOPS) throw new ToolError(`'${shown(given)}' has too many levels of symbolic links`, 'SYMLINK_LOOP');
      let target: string;
      try {
        target = await readlink(at(current, name));
      } catch (error) {
        // Replaced by something else since the open failed: try the component again.
        if (errno(error) === 'EINVAL' || errno(error) === 'ENOENT') return;
        throw translate(error, given);
      }
      pending = [...this.symlinkTarget(given, rel, target), ...pending.slice(1)];
      rel = [];
      await current.close();
      current = await this.openRoot();
    };

    try {
      for (;;) {
        const name = pending[0];
        if (name === undefined) {
          if (want === 'directory') {
            await this.verify(current, given);
            return { handle: current, rel };
          }
          throw new ToolError(`'${shown(given)}' is a directory`, 'IS_A_DIRECTORY');
        }
        const last = pending.length === 1;

        if (last && want === 'parent') {
          const entry = await lstat(at(current, name)).catch((error: unknown) => {
            if (errno(error) === 'ENOENT') return undefined;
            throw translate(error, given);
          });
          if (entry?.isSymbolicLink()) {
            await detour(name);
            continue;
          }
          const existing = !entry ? 'none' : entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : 'other';
          return { dir: current, name, rel: [...rel, name], existing, ino: entry?.ino, mode: entry?.mode };
        }

        // O_NONBLOCK: opening a FIFO must not hang the gateway; it is refused below as not a regular file.
        const flags = last && want === 'file' ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK : O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
        let next: FileHandle;
        try {
          next = await open(at(current, name), flags);
        } catch (error) {
          const code = errno(error);
          if (code === 'ELOOP' || code === 'ENOTDIR') {
            const entry = await lstat(at(current, name)).catch(() => undefined);
            if (!entry || entry.isDirectory() || (last && want === 'file' && !entry.isSymbolicLink())) {
              // It changed between the open and the look: look again (boundedly).
              retry(error);
              continue;
            }
            if (entry.isSymbolicLink()) {
              await detour(name);
              continue;
            }
            if (last && want === 'directory') throw new ToolError(`'${shown(given)}' is not a directory`, 'NOT_A_DIRECTORY');
            throw new ToolError(`'${shown(given)}': '${Workspace.display([...rel, name])}' is not a directory`, 'NOT_A_DIRECTORY');
          }
          if (code === 'ENOENT' && createDirs && !last) {
            await mkdir(at(current, name), { mode: 0o755 }).catch((e: unknown) => {
              if (errno(e) !== 'EEXIST') throw translate(e, given);
            });
            retry(error);
            continue;
          }
          throw translate(error, given);
        }
        await current.close();
        current = next;
        rel = [...rel, name];
        pending = pending.slice(1);

        if (last && want === 'file') {
          const stat = await current.stat();
          if (stat.isDirectory()) throw new ToolError(`'${shown(given)}' is a directory`, 'IS_A_DIRECTORY');
          if (!stat.isFile()) throw new ToolError(`'${shown(given)}' is not a regular file`, 'NOT_A_FILE');
          await this.verify(current, given);
          return { handle: current, rel };
        }
      }
    } catch (error) {
      await current.close().catch(() => undefined);
      throw error;
    }
  }

  /** The root-relative components a symlink at `rel/…` points to; refused if it points out. */
  private symlinkTarget(given: string, rel: readonly string[], target: string): string[] {
    let base: string[];
    let path = target;
    if (isAbsolute(target)) {
      const root = [this.realRoot, this.root].find((r) => isInside(r, target.replace(/\/+$/, '') || '/'));
      if (root === undefined) throw new PathEscapeError(shown(given), 'goes through a symlink that points outside the workspace');
      base = [];
      path = target.slice(root.length);
    } else {
      base = [...rel];
    }
    for (const part of path.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (base.length === 0) throw new PathEscapeError(shown(given), 'goes through a symlink that points outside the workspace');
        base.pop();
      } else base.push(part);
    }
    return base;
  }

  private async openRoot(): Promise<FileHandle> {
    const handle = await open(this.realRoot, O_RDONLY | O_DIRECTORY);
    try {
      await this.verify(handle, '.');
    } catch (error) {
      await handle.close();
      throw error instanceof PathEscapeError ? new ToolError('the workspace root moved', 'INVALID_WORKSPACE') : error;
    }
    return handle;
  }
}

/**
 * Git runs programs named in `.git/config` and `.git/hooks`, so the file tools never write there
 * (nor a `.git` file, which can point git at another repository). Only git itself changes a
 * repository's internals.
 */
function protect(given: string, rel: readonly string[]): void {
  if (rel.some((part) => part.toLowerCase() === '.git')) {
    throw new ToolError(`'${shown(given)}' is inside a .git directory; the file tools do not write there`, 'PROTECTED_PATH');
  }
}

/** An errno from a file operation as the caller should read it, naming the path as given. */
export function translate(error: unknown, given: string): Error {
  if (error instanceof ToolError) return error;
  const path = shown(given);
  switch (errno(error)) {
    case 'ENOENT':
      return new ToolError(`'${path}' does not exist`, 'NOT_FOUND');
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`'${path}' is not accessible`, 'ACCESS_DENIED');
    case 'ENOTDIR':
      return new ToolError(`'${path}': a component is not a directory`, 'NOT_A_DIRECTORY');
    case 'EISDIR':
      return new ToolError(`'${path}' is a directory`, 'IS_A_DIRECTORY');
    case 'ELOOP':
      return new ToolError(`'${path}' has too many levels of symbolic links`, 'SYMLINK_LOOP');
    case 'ENAMETOOLONG':
      return new ToolError(`'${path}' has a name that is too long`, 'NAME_TOO_LONG');
    case 'ENOSPC':
    case 'EDQUOT':
      return new ToolError('the workspace is out of space', 'NO_SPACE');
    case 'EROFS':
      return new ToolError('the workspace is read-only', 'READ_ONLY');
    default:
      return new ToolError(`'${path}' could not be accessed`, 'IO_ERROR');
  }
}
