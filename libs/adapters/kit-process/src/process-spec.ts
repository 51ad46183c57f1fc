import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, normalize, relative, resolve, sep } from 'node:path';
import { PathEscapeError, ToolError, type ProcessLimits, type ProcessSpec } from '@toolgate/contracts';

/** Linux refuses a single argv string longer than this (MAX_ARG_STRLEN). */
const MAX_ARG_BYTES = 128 * 1024 - 1;
/** Well under ARG_MAX (2 MiB with the environment), so a spawn never fails with E2BIG. */
const MAX_TOTAL_ARG_BYTES = 1024 * 1024;
const MAX_ARGS = 4096;
const MAX_STDIN_BYTES = 16 * 1024 * 1024;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A path as it may appear in a message: NUL bytes made visible, never raw. */
function shown(path: string): string {
  return path.replaceAll('\0', '\\0');
}

/**
 * Checks a spec before anything is spawned, so a malformed one fails with a message that names
 * what is wrong instead of an errno from deep inside libuv.
 */
export function validateSpec(spec: ProcessSpec): void {
  if (typeof spec.command !== 'string' || spec.command.length === 0) {
    throw new ToolError('the command is empty', 'INVALID_COMMAND');
  }
  if (spec.command.includes('\0')) throw new ToolError('the command contains a NUL byte', 'INVALID_COMMAND');
  if (!Array.isArray(spec.args)) throw new ToolError('the arguments must be a list of strings', 'INVALID_COMMAND');
  if (spec.args.length > MAX_ARGS) throw new ToolError(`too many arguments (at most ${MAX_ARGS})`, 'INVALID_COMMAND');
  let total = Buffer.byteLength(spec.command);
  for (const [index, arg] of spec.args.entries()) {
    if (typeof arg !== 'string') throw new ToolError(`argument ${index} is not a string`, 'INVALID_COMMAND');
    if (arg.includes('\0')) throw new ToolError(`argument ${index} contains a NUL byte`, 'INVALID_COMMAND');
    const bytes = Buffer.byteLength(arg);
    if (bytes > MAX_ARG_BYTES) throw new ToolError(`argument ${index} is longer than ${MAX_ARG_BYTES} bytes`, 'INVALID_COMMAND');
    total += bytes;
  }
  if (total > MAX_TOTAL_ARG_BYTES) {
    throw new ToolError(`the command line is longer than ${MAX_TOTAL_ARG_BYTES} bytes`, 'INVALID_COMMAND');
  }
  for (const [name, value] of Object.entries(spec.env ?? {})) {
    if (!ENV_NAME.test(name)) throw new ToolError(`'${shown(name)}' is not a valid environment variable name`, 'INVALID_ENV');
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new ToolError(`environment variable '${name}' must be a string without NUL bytes`, 'INVALID_ENV');
    }
  }
  if (spec.stdin !== undefined) {
    if (typeof spec.stdin !== 'string') throw new ToolError('stdin must be a string', 'INVALID_COMMAND');
    if (Buffer.byteLength(spec.stdin) > MAX_STDIN_BYTES) {
      throw new ToolError(`stdin is larger than ${MAX_STDIN_BYTES} bytes`, 'INVALID_COMMAND');
    }
  }
  if (spec.cwd !== undefined && typeof spec.cwd !== 'string') {
    throw new ToolError('the working directory must be a string', 'INVALID_COMMAND');
  }
}

/** Programming errors in the limits are thrown as `RangeError`: no caller input reaches them. */
export function validateLimits(limits: ProcessLimits): void {
  if (!Number.isFinite(limits.timeoutMs) || limits.timeoutMs <= 0) {
    throw new RangeError(`timeoutMs must be a positive number, got ${limits.timeoutMs}`);
  }
  if (!Number.isSafeInteger(limits.maxOutputBytes) || limits.maxOutputBytes < 1) {
    throw new RangeError(`maxOutputBytes must be a positive integer, got ${limits.maxOutputBytes}`);
  }
}

/** Whether `path` is `root` or below it. Both must be absolute and normalised. */
export function isInside(root: string, path: string): boolean {
  if (root === sep) return path.startsWith(sep);
  return path === root || path.startsWith(root + sep);
}

/** Where a process runs: the workspace and the working directory, both with symlinks resolved. */
export interface WorkingDirectory {
  /** The workspace root, symlinks resolved. */
  readonly root: string;
  /** The working directory on the host, symlinks resolved; inside `root`. */
  readonly cwd: string;
  /** `cwd` relative to `root` (`''` for the root itself), for tiers that mount the root elsewhere. */
  readonly relative: string;
}

/**
 * Resolves `cwd` (relative to the workspace) and proves it stays inside: lexically (no `..` out,
 * no absolute path) and after symlinks are resolved (no link pointing out). The workspace root is
 * created if it does not exist yet, so a tenant's first call finds it.
 */
export function resolveWorkingDirectory(workspaceRoot: string, cwd: string | undefined): WorkingDirectory {
  if (typeof workspaceRoot !== 'string' || !isAbsolute(workspaceRoot) || workspaceRoot.includes('\0')) {
    throw new ToolError('the workspace root must be an absolute path', 'INVALID_WORKSPACE');
  }
  mkdirSync(workspaceRoot, { recursive: true, mode: 0o700 });
  const root = realpathSync(workspaceRoot);
  const given = cwd ?? '';
  if (given.includes('\0')) throw new PathEscapeError(shown(given), 'contains a NUL byte');
  if (isAbsolute(given)) throw new PathEscapeError(given, 'must be relative to the workspace');
  const lexical = normalize(given === '' ? '.' : given);
  if (lexical === '..' || lexical.startsWith(`..${sep}`)) throw new PathEscapeError(given, 'leaves the workspace');
  let real: string;
  try {
    real = realpathSync(resolve(root, lexical));
  } catch {
    throw new ToolError(`the working directory '${given}' does not exist`, 'NOT_FOUND');
  }
  if (!isInside(root, real)) throw new PathEscapeError(given, 'resolves outside the workspace');
  if (!statSync(real).isDirectory()) throw new ToolError(`the working directory '${given}' is not a directory`, 'NOT_A_DIRECTORY');
  return { root, cwd: real, relative: relative(root, real) };
}
