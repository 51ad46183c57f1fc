import { mkdir, mkdtemp, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PathEscapeError, ToolError, type ProcessSpec } from '@toolgate/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isInside, resolveWorkingDirectory, validateLimits, validateSpec } from './process-spec.js';

/** The `ToolError` reason `run` throws, or undefined when it does not throw. */
function reasonOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return (error as ToolError).reason;
  }
}

describe('validateSpec', () => {
  const spec = (extra: Partial<ProcessSpec> = {}): ProcessSpec => ({ command: 'echo', args: ['hi'], ...extra });

  it('accepts a well-formed spec', () => {
    expect(() => validateSpec(spec({ env: { _A1: 'x', B: '' }, stdin: 'in', cwd: 'sub' }))).not.toThrow();
  });

  it.each([
    ['an empty command', { command: '' }, 'the command is empty'],
    ['a command with NUL', { command: 'ec\0ho' }, 'the command contains a NUL byte'],
    ['arguments that are not a list', { args: 'hi' as unknown as string[] }, 'the arguments must be a list of strings'],
    ['a non-string argument', { args: ['a', 3 as unknown as string] }, 'argument 1 is not a string'],
    ['an argument with NUL', { args: ['a\0b'] }, 'argument 0 contains a NUL byte'],
    ['too many arguments', { args: Array.from({ length: 4097 }, () => 'x') }, 'too many arguments (at most 4096)'],
    ['an argument over the kernel limit', { args: ['x'.repeat(128 * 1024)] }, 'argument 0 is longer than 131071 bytes'],
    ['a command line over 1 MiB', { args: Array.from({ length: 9 }, () => 'x'.repeat(120 * 1024)) }, 'the command line is longer than 1048576 bytes'],
    ['non-string stdin', { stdin: 42 as unknown as string }, 'stdin must be a string'],
    ['stdin over 16 MiB', { stdin: 'x'.repeat(16 * 1024 * 1024 + 1) }, 'stdin is larger than 16777216 bytes'],
    ['a non-string working directory', { cwd: ['sub'] as unknown as string }, 'the working directory must be a string'],
  ])('refuses %s as INVALID_COMMAND, saying what is wrong', (_what, extra, message) => {
    expect(() => validateSpec(spec(extra))).toThrow(message);
    expect(reasonOf(() => validateSpec(spec(extra)))).toBe('INVALID_COMMAND');
  });

  it('counts argument length in bytes, not characters', () => {
    // 43 691 three-byte characters are 131 073 bytes, over the limit, though far fewer characters.
    expect(reasonOf(() => validateSpec(spec({ args: ['€'.repeat(43_691)] })))).toBe('INVALID_COMMAND');
    expect(reasonOf(() => validateSpec(spec({ args: ['€'.repeat(43_690)] })))).toBeUndefined();
  });

  it.each(['', '1A', 'A-B', 'A=B', 'A B', 'É'])('refuses the environment variable name %j as INVALID_ENV', (name) => {
    expect(reasonOf(() => validateSpec(spec({ env: { [name]: 'v' } })))).toBe('INVALID_ENV');
  });

  it('shows a NUL byte in a refused variable name instead of writing it raw', () => {
    expect(() => validateSpec(spec({ env: { 'A\0B': 'v' } }))).toThrow("'A\\0B' is not a valid environment variable name");
  });

  it('refuses variable values that are not strings or contain NUL', () => {
    expect(reasonOf(() => validateSpec(spec({ env: { A: 'a\0b' } })))).toBe('INVALID_ENV');
    expect(reasonOf(() => validateSpec(spec({ env: { A: 1 as unknown as string } })))).toBe('INVALID_ENV');
  });
});

describe('validateLimits', () => {
  it('accepts positive limits', () => {
    expect(() => validateLimits({ workspaceRoot: '/w', timeoutMs: 0.5, maxOutputBytes: 1 })).not.toThrow();
  });

  it.each([
    [{ timeoutMs: 0 }],
    [{ timeoutMs: -1 }],
    [{ timeoutMs: Number.NaN }],
    [{ timeoutMs: Number.POSITIVE_INFINITY }],
    [{ maxOutputBytes: 0 }],
    [{ maxOutputBytes: 1.5 }],
    [{ maxOutputBytes: Number.NaN }],
  ])('throws RangeError for %j: a programming error, not caller input', (bad) => {
    expect(() => validateLimits({ workspaceRoot: '/w', timeoutMs: 1000, maxOutputBytes: 1024, ...bad })).toThrow(RangeError);
  });
});

describe('isInside', () => {
  it('holds for the root itself and paths below it, not for siblings sharing a prefix', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b/c')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
    expect(isInside('/', '/anything')).toBe(true);
  });
});

describe('resolveWorkingDirectory', () => {
  let base: string;
  let root: string;
  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-process-spec-')));
    root = join(base, 'workspace');
    await mkdir(join(root, 'sub', 'deeper'), { recursive: true });
    await mkdir(join(base, 'outside', 'inner'), { recursive: true });
    await writeFile(join(root, 'file.txt'), 'not a directory');
    await symlink('../outside', join(root, 'escape'));
    await symlink('sub', join(root, 'inner-link'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  /** The error `resolveWorkingDirectory` throws for `cwd`. */
  function refusal(cwd: string): ToolError {
    try {
      resolveWorkingDirectory(root, cwd);
    } catch (error) {
      expect(error).toBeInstanceOf(ToolError);
      // Messages go back to the agent: the host path of the workspace must not be in them.
      expect((error as Error).message).not.toContain(base);
      return error as ToolError;
    }
    throw new Error(`'${cwd}' was accepted`);
  }

  it('resolves the root by default and a relative subdirectory below it', () => {
    expect(resolveWorkingDirectory(root, undefined)).toEqual({ root, cwd: root, relative: '' });
    expect(resolveWorkingDirectory(root, 'sub/deeper')).toEqual({ root, cwd: join(root, 'sub', 'deeper'), relative: 'sub/deeper' });
    expect(resolveWorkingDirectory(root, './sub/../sub')).toMatchObject({ relative: 'sub' });
  });

  it('follows a symlink that stays inside the workspace', () => {
    expect(resolveWorkingDirectory(root, 'inner-link')).toEqual({ root, cwd: join(root, 'sub'), relative: 'sub' });
  });

  it('resolves a workspace root that is itself a symlink to its real path', async () => {
    await symlink(root, join(base, 'root-link'));
    expect(resolveWorkingDirectory(join(base, 'root-link'), 'sub')).toEqual({ root, cwd: join(root, 'sub'), relative: 'sub' });
  });

  it.each([
    ['..', 'leaves the workspace'],
    ['sub/../..', 'leaves the workspace'],
    ['../workspace-other', 'leaves the workspace'],
    ['/etc', 'must be relative to the workspace'],
    ['escape', 'resolves outside the workspace'],
    ['escape/inner', 'resolves outside the workspace'],
  ])('refuses %j as a PathEscapeError naming the path as given', (cwd, why) => {
    const error = refusal(cwd);
    expect(error).toBeInstanceOf(PathEscapeError);
    expect(error.message).toBe(`PathEscape: '${cwd}' ${why}`);
  });

  it('refuses a NUL byte, shown escaped', () => {
    const error = refusal('sub\0x');
    expect(error).toBeInstanceOf(PathEscapeError);
    expect(error.message).toBe("PathEscape: 'sub\\0x' contains a NUL byte");
  });

  it('names a missing directory NOT_FOUND and a file NOT_A_DIRECTORY', () => {
    expect(refusal('missing').reason).toBe('NOT_FOUND');
    expect(refusal('file.txt').reason).toBe('NOT_A_DIRECTORY');
  });

  it('creates a missing workspace root, private to the server user', async () => {
    const fresh = join(base, 'tenants', 'new');
    expect(resolveWorkingDirectory(fresh, undefined)).toEqual({ root: fresh, cwd: fresh, relative: '' });
    expect((await stat(fresh)).mode & 0o777).toBe(0o700);
  });

  it.each(['relative/root', '', '/abs\0olute'])('refuses the workspace root %j as INVALID_WORKSPACE', (workspaceRoot) => {
    expect(() => resolveWorkingDirectory(workspaceRoot, undefined)).toThrow(
      expect.objectContaining({ reason: 'INVALID_WORKSPACE' }) as Error,
    );
  });
});
