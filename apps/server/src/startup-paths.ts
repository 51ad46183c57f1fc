import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, stat, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { ServerConfig } from './config.js';
import { StartupError } from './startup-error.js';

/**
 * A path setting as the messages show it: the variable and the value the operator wrote (a
 * relative value is not resolved, so no message adds the server's working directory), or the
 * default when the variable is unset.
 */
export interface PathSetting {
  readonly variable: string;
  /** The value as set, or undefined when the default is in use. */
  readonly asSet: string | undefined;
  /** How the default reads when the variable is unset, e.g. `./.toolgate`. */
  readonly defaultShown: string;
}

/** A fault in a path setting; the message names the variable, says what is wrong and what to do. */
export class PathSettingError extends Error {
  override readonly name = 'PathSettingError';
}

/** How long one start-up path check may take before it is reported (a hung network mount, say). */
export const PATH_CHECK_TIMEOUT_MS = 10_000;

/** The most a principals or MCP servers file may hold; both are a few kilobytes in practice. */
export const MAX_OPERATOR_FILE_BYTES = 4 * 1024 * 1024;

/** `TOOLGATE_X=<value as set>`, or `TOOLGATE_X (unset, so <default>)`: how every message names a setting. */
export function describeSetting(setting: PathSetting): string {
  return setting.asSet === undefined ? `${setting.variable} (unset, so ${setting.defaultShown})` : `${setting.variable}=${setting.asSet}`;
}

/**
 * Makes sure `path` is a directory the server's user can create files in, creating it (mode 700)
 * and its missing parents. Node's `mkdir({ recursive: true })` loops forever where `mkdir`
 * answers ENOENT although the parent exists (procfs, e.g. `/proc/nope`), so each level is made
 * on its own and every answer is bounded by {@link PATH_CHECK_TIMEOUT_MS}. Symbolic links are
 * followed, as `mkdir -p` does.
 */
export async function ensureWritableDirectory(setting: PathSetting, path: string): Promise<void> {
  const what = describeSetting(setting);
  await withDeadline(what, (async () => {
    await makeDirectories(what, path);
    await probeWritable(what, path);
  })());
}

async function makeDirectories(what: string, path: string): Promise<void> {
  const missing: string[] = [];
  let at = path;
  // Find the deepest part of the path that exists; its depth bounds the loop.
  for (;;) {
    const kind = await kindOf(what, at);
    if (kind === 'directory') break;
    if (kind !== 'missing') {
      throw new PathSettingError(
        at === path
          ? `${what} is ${kind}, not a directory; point it at a directory, or move that aside`
          : `${what} cannot be created: a part of its path is ${kind}, not a directory; point it at a directory`,
      );
    }
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const dir of missing) {
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && (await kindOf(what, dir)) === 'directory') continue;
      throw new PathSettingError(`${what} cannot be created: ${why(code)}`);
    }
  }
}

/**
 * What is at a path, following symbolic links: `directory`, `missing` (also below a file, which
 * the walk up then finds), or a phrase for anything else (`a file`, `a symbolic link to nothing`).
 */
async function kindOf(what: string, path: string): Promise<string> {
  try {
    const info = await stat(path);
    if (info.isDirectory()) return 'directory';
    if (info.isFile()) return 'a file';
    if (info.isFIFO()) return 'a FIFO';
    if (info.isSocket()) return 'a socket';
    return 'a device';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      // stat follows links; a link whose target is missing would otherwise look creatable.
      const link = await lstat(path).catch(() => undefined);
      return link?.isSymbolicLink() ? 'a symbolic link to nothing' : 'missing';
    }
    // A file further up: walking on up finds it and says so.
    if (code === 'ENOTDIR') return 'missing';
    if (code === 'ELOOP') return 'a loop of symbolic links';
    throw new PathSettingError(`${what} cannot be checked: ${why(code)}`);
  }
}

/** Creating and removing a file is the only honest writability test: root passes every mode check. */
async function probeWritable(what: string, path: string): Promise<void> {
  const probe = join(path, `.toolgate-write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    const handle = await open(probe, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
    await handle.close();
  } catch (error) {
    throw new PathSettingError(`${what} is not writable: ${why((error as NodeJS.ErrnoException).code)}`);
  }
  await unlink(probe).catch(() => undefined);
}

function why(code: string | undefined): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return "permission denied; choose a directory the server's user may write, or give that user the directory";
    case 'EROFS':
      return 'it is on a read-only file system; choose a directory on a writable one';
    case 'ENOENT':
      // The parent exists (it was just found), yet the kernel says no such entry: procfs and the like.
      return 'the file system there does not hold ordinary directories (as /proc and /sys do not); choose a directory on a disk';
    case 'ENOTDIR':
      return 'a part of its path is a file, not a directory; point it at a directory';
    case 'ENOSPC':
    case 'EDQUOT':
      return 'the disk or quota is full; free space or choose another disk';
    case 'ELOOP':
      return 'its path is a loop of symbolic links; point it at a directory';
    case 'ENAMETOOLONG':
      return 'the path is too long; choose a shorter one';
    default:
      return `the system refused (${code ?? 'unknown error'}); choose another directory`;
  }
}

/**
 * Refuses a workspace root that is the data dir or holds it: tenant workspaces are handed to
 * sandboxed tools, which must never reach the state, audit trail or keys. Compared by real path,
 * so a symbolic link to the data dir is caught too.
 */
export async function checkWorkspaceApart(workspace: PathSetting, workspacePath: string, data: PathSetting, dataPath: string): Promise<void> {
  const [ws, dd] = await withDeadline(describeSetting(workspace), Promise.all([realpath(workspacePath), realpath(dataPath)]));
  const within = (outer: string, inner: string) => {
    const rel = relative(outer, inner);
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  };
  if (within(ws, dd)) {
    const how = ws === dd ? 'is the same directory as' : 'contains';
    throw new PathSettingError(
      `${describeSetting(workspace)} ${how} ${describeSetting(data)}; tenant workspaces are given to sandboxed tools and must not reach the server's state, audit trail and keys. Give them separate directories (or unset ${workspace.variable} for ${data.variable}/workspaces)`,
    );
  }
  // Inside the data dir, only a directory of its own: not one the server keeps its state in.
  if (within(dd, ws)) {
    const first = relative(dd, ws).split(sep)[0] ?? '';
    if (DATA_DIR_ENTRIES.some((entry) => first === entry || first.startsWith(`${entry}-`))) {
      throw new PathSettingError(
        `${describeSetting(workspace)} is the data dir's own '${first}', which the server keeps its state in; choose another directory (the default is ${data.variable}/workspaces)`,
      );
    }
  }
}

/**
 * Refuses an operator file (principals, MCP servers, a `*_FILE` secret) inside the workspace
 * root: sandboxed tools can read and write every tenant workspace, so tokens or keys kept there
 * would be theirs. Compared by real path, so a symbolic link into a workspace is caught too.
 */
export async function checkFileOutsideWorkspace(file: PathSetting, filePath: string, workspace: PathSetting, workspacePath: string): Promise<void> {
  // A file that cannot be resolved is left to its reader, which says why it cannot be read.
  const [f, ws] = await withDeadline(describeSetting(file), Promise.all([realpath(filePath).catch(() => undefined), realpath(workspacePath)]));
  if (f === undefined) return;
  const rel = relative(ws, f);
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) {
    throw new PathSettingError(
      `${describeSetting(file)} is inside ${describeSetting(workspace)}, where sandboxed tools can read and change it; keep it outside the workspace root (beside the data dir, for example)`,
    );
  }
}

/** What the server keeps at the top of its data dir (SQLite adds `-wal` and `-shm` beside a database). */
const DATA_DIR_ENTRIES = ['audit', 'state.db', 'bus.db', 'knowledge-graph.nq'];

/**
 * Reads a file the operator named (principals, MCP servers). It is opened without blocking, so a
 * FIFO does not wait for a writer, and read only when it is a regular file of bounded size: a
 * directory, FIFO, socket or device is refused with what it is.
 */
export async function readOperatorFile(setting: PathSetting, path: string, maxBytes = MAX_OPERATOR_FILE_BYTES): Promise<string> {
  const what = describeSetting(setting);
  return withDeadline(what, (async () => {
    let handle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new PathSettingError(`${what} cannot be read: ${code === 'ENOENT' ? 'there is no such file; check the path' : whyFile(code)}`);
    }
    try {
      const info = await handle.stat();
      if (info.isDirectory()) throw new PathSettingError(`${what} is a directory; point it at the file itself`);
      if (!info.isFile()) throw new PathSettingError(`${what} is ${info.isFIFO() ? 'a FIFO' : info.isSocket() ? 'a socket' : 'a device'}, not a regular file; point it at a file`);
      // Read at most one byte past the limit: procfs files report size 0, so size alone is no bound.
      const buffer = Buffer.alloc(Math.min(maxBytes + 1, Math.max(info.size + 1, 64 * 1024)));
      let length = 0;
      for (;;) {
        if (length === buffer.length) {
          if (length > maxBytes) break;
          throw new PathSettingError(`${what} changed while it was read; try again`);
        }
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      if (length > maxBytes) throw new PathSettingError(`${what} is larger than ${Math.floor(maxBytes / 1024 / 1024)} MiB; is it the right file?`);
      return buffer.subarray(0, length).toString('utf8');
    } catch (error) {
      if (error instanceof PathSettingError) throw error;
      throw new PathSettingError(`${what} cannot be read: ${whyFile((error as NodeJS.ErrnoException).code)}`);
    } finally {
      await handle.close().catch(() => undefined);
    }
  })());
}

function whyFile(code: string | undefined): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return "permission denied; let the server's user read it";
    case 'ENOTDIR':
      return 'a part of its path is a file, not a directory; check the path';
    case 'ELOOP':
      return 'its path is a loop of symbolic links; check the path';
    case 'EISDIR':
      return 'it is a directory; point it at the file itself';
    case 'EAGAIN':
      return 'it did not answer without waiting (not a regular file?); point it at a file';
    default:
      return `the system refused (${code ?? 'unknown error'})`;
  }
}

/** Bounds one start-up check; a file system that never answers becomes a fault instead of a hang. */
async function withDeadline<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new PathSettingError(`${what} did not answer within ${PATH_CHECK_TIMEOUT_MS / 1000} s (a hung network mount?); check that file system`)),
      PATH_CHECK_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const PATH_VARIABLES = {
  dataDir: ['TOOLGATE_DATA_DIR', 'the default ./.toolgate'],
  workspaceRoot: ['TOOLGATE_WORKSPACE_ROOT', 'the default <data dir>/workspaces'],
  principalsFile: ['TOOLGATE_PRINCIPALS_FILE', 'none'],
  mcpServersFile: ['TOOLGATE_MCP_SERVERS_FILE', 'none'],
} as const;

/** A path setting of the configuration for messages, as the operator wrote it. */
export function pathSetting(config: ServerConfig, key: keyof typeof PATH_VARIABLES): PathSetting {
  const [variable, defaultShown] = PATH_VARIABLES[key];
  return { variable, asSet: config.pathsAsSet[key], defaultShown };
}

/** Path faults stop the start like any other: with the message alone, no stack. */
export async function asStartupError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof PathSettingError) throw new StartupError(error.message);
    throw error;
  }
}
