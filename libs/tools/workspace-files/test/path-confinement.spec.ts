import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PathEscapeError, ToolError, type JsonObject, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
import { testToolContext, timeLessCpuWait } from '@toolgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool, globTool, grepTool, listDirTool, readFileTool, writeFileTool } from '../src/index.js';

let base: string;
let workspace: string;
let outside: string;

const context = (): ToolContext => testToolContext({ workspaceRoot: workspace });
const call = (tool: ToolDefinition, args: JsonObject) => tool.handler.invoke(args, context());
const failure = (tool: ToolDefinition, args: JsonObject) => call(tool, args).then(
  (output) => {
    throw new Error(`expected a failure, got ${JSON.stringify(output)}`);
  },
  (error: unknown) => error as Error,
);

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-paths-')));
  workspace = join(base, 'ws');
  outside = join(base, 'outside');
  await mkdir(join(workspace, 'sub'), { recursive: true });
  await mkdir(outside);
  await mkdir(join(base, 'ws-evil'));
  await writeFile(join(outside, 'secret.txt'), 'OUTSIDE SECRET');
  await writeFile(join(base, 'ws-evil', 'secret.txt'), 'SIBLING SECRET');
  await writeFile(join(workspace, 'sub', 'inside.txt'), 'INSIDE');
  await writeFile(join(workspace, 'real.txt'), 'REAL');
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Every path is refused with a PathEscapeError naming the path as given and never the host path. */
async function expectEscape(tool: ToolDefinition, args: JsonObject, given: string): Promise<void> {
  const error = await failure(tool, args);
  expect(error, `${tool.manifest.name} ${given}`).toBeInstanceOf(PathEscapeError);
  expect(error.message).toContain(`'${given.replaceAll('\0', '\\0')}'`);
  if (!given.startsWith('/')) expect(error.message).not.toContain(base);
}

const outsideUnchanged = async () => {
  expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
  expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET');
};

describe('path strings', () => {
  it('refuses empty paths, NUL bytes, and .. that climbs out, for reads and writes', async () => {
    for (const path of ['', 'sub/inside.txt\0.png', '..', '../outside/secret.txt', 'sub/../../outside/secret.txt', './../ws-evil/secret.txt']) {
      await expectEscape(readFileTool, { path }, path);
      await expectEscape(writeFileTool, { path, content: 'x' }, path);
    }
    await outsideUnchanged();
  });

  it('accepts .. that stays inside', async () => {
    await expect(call(readFileTool, { path: 'sub/../sub/./inside.txt' })).resolves.toMatchObject({ content: 'INSIDE', path: 'sub/inside.txt' });
  });

  it('accepts an absolute path inside the workspace, and refuses absolute paths outside it, including sibling-prefix tricks', async () => {
    await expect(call(readFileTool, { path: join(workspace, 'real.txt') })).resolves.toMatchObject({ content: 'REAL' });
    for (const path of ['/etc/passwd', join(outside, 'secret.txt'), join(`${workspace}-evil`, 'secret.txt'), `${workspace}-evil`, '/', base]) {
      await expectEscape(readFileTool, { path }, path);
      await expectEscape(writeFileTool, { path, content: 'x' }, path);
      await expectEscape(listDirTool, { path }, path);
    }
    await expect(readFile(join(base, 'ws-evil', 'secret.txt'), 'utf8')).resolves.toBe('SIBLING SECRET');
  });

  it('refuses the same escapes in every tool that takes a path', async () => {
    const path = '../outside';
    await expectEscape(listDirTool, { path }, path);
    await expectEscape(globTool, { pattern: '*', path }, path);
    await expectEscape(grepTool, { pattern: 'SECRET', path }, path);
    await expectEscape(editFileTool, { path: '../outside/secret.txt', old_string: 'OUTSIDE', new_string: 'x' }, '../outside/secret.txt');
    await outsideUnchanged();
  });

  it('refuses glob patterns that climb out', async () => {
    for (const pattern of ['../*', '/etc/*', 'sub/../../outside/*']) {
      await expect(call(globTool, { pattern })).rejects.toThrow(ToolError);
    }
  });
});

describe('symlinks', () => {
  it('refuses a final symlink that points outside, for every operation, and leaves the target untouched', async () => {
    await symlink('../outside/secret.txt', join(workspace, 'link.txt'));
    await symlink(join(outside, 'secret.txt'), join(workspace, 'abs-link.txt'));
    await symlink('/etc/passwd', join(workspace, 'passwd'));
    for (const path of ['link.txt', 'abs-link.txt', 'passwd']) {
      await expectEscape(readFileTool, { path }, path);
      await expectEscape(writeFileTool, { path, content: 'overwritten' }, path);
      await expectEscape(editFileTool, { path, old_string: 'OUTSIDE', new_string: 'x' }, path);
    }
    await outsideUnchanged();
  });

  it('refuses a symlinked directory that points outside at any depth, and creates nothing outside', async () => {
    await symlink('../outside', join(workspace, 'out'));
    await symlink('../../outside', join(workspace, 'sub', 'deeper'));
    await symlink('/etc', join(workspace, 'etc'));
    for (const path of ['out/secret.txt', 'sub/deeper/secret.txt', 'etc/passwd', 'out', 'out/']) {
      await expectEscape(readFileTool, { path }, path);
    }
    for (const path of ['out/new.txt', 'sub/deeper/new.txt', 'out/new/deep/file.txt', 'etc/toolgate-test']) {
      await expectEscape(writeFileTool, { path, content: 'planted' }, path);
    }
    for (const path of ['out', 'sub/deeper', 'etc']) {
      await expectEscape(listDirTool, { path }, path);
      await expectEscape(globTool, { pattern: '**', path }, path);
      await expectEscape(grepTool, { pattern: 'root', path }, path);
    }
    await outsideUnchanged();
  });

  it('lists a symlink as a symlink and never follows one while walking', async () => {
    await symlink('../outside', join(workspace, 'out'));
    await symlink('../outside/secret.txt', join(workspace, 'sub', 'secret-link.txt'));
    const listing = (await call(listDirTool, { path: '.' })) as { entries: { name: string; type: string }[] };
    expect(listing.entries).toContainEqual({ name: 'out', type: 'symlink' });
    const globbed = (await call(globTool, { pattern: '**' })) as { matches: string[] };
    expect(globbed.matches).toEqual(['out', 'real.txt', 'sub/', 'sub/inside.txt', 'sub/secret-link.txt']);
    const grepped = (await call(grepTool, { pattern: 'SECRET' })) as { matches: unknown[] };
    expect(grepped.matches).toEqual([]);
  });

  it('follows symlinks whose targets stay inside the workspace', async () => {
    await symlink('real.txt', join(workspace, 'alias.txt'));
    await symlink('sub', join(workspace, 'sublink'));
    await symlink(join(workspace, 'sub', 'inside.txt'), join(workspace, 'absolute-alias.txt'));
    await symlink('../real.txt', join(workspace, 'sub', 'up.txt'));
    await expect(call(readFileTool, { path: 'alias.txt' })).resolves.toMatchObject({ content: 'REAL', path: 'real.txt' });
    await expect(call(readFileTool, { path: 'sublink/inside.txt' })).resolves.toMatchObject({ content: 'INSIDE', path: 'sub/inside.txt' });
    await expect(call(readFileTool, { path: 'absolute-alias.txt' })).resolves.toMatchObject({ content: 'INSIDE' });
    await expect(call(readFileTool, { path: 'sub/up.txt' })).resolves.toMatchObject({ content: 'REAL' });
    // Writing through an inside symlink writes its target and keeps the link.
    await call(writeFileTool, { path: 'alias.txt', content: 'REWRITTEN' });
    await expect(readFile(join(workspace, 'real.txt'), 'utf8')).resolves.toBe('REWRITTEN');
    await expect(call(listDirTool, { path: 'sublink' })).resolves.toMatchObject({ path: 'sub' });
  });

  it('refuses a chain of symlinks that leaves at its last hop, and reports loops', async () => {
    await symlink('b', join(workspace, 'a'));
    await symlink('c', join(workspace, 'b'));
    await symlink('../outside/secret.txt', join(workspace, 'c'));
    await expectEscape(readFileTool, { path: 'a' }, 'a');
    await symlink('loop2', join(workspace, 'loop1'));
    await symlink('loop1', join(workspace, 'loop2'));
    const error = await failure(readFileTool, { path: 'loop1' });
    expect(error).toMatchObject({ reason: 'SYMLINK_LOOP' });
  });

  it('treats .. after a symlink lexically, so it can never climb through the link target', async () => {
    // The kernel would resolve out/../ws-evil/secret.txt through the link target; lexically it is ws-evil/secret.txt inside.
    await symlink('../outside', join(workspace, 'out'));
    const error = await failure(readFileTool, { path: 'out/../../ws-evil/secret.txt' });
    expect(error).toBeInstanceOf(PathEscapeError);
  });
});

describe('special files', () => {
  it('refuses a FIFO without blocking on it', async () => {
    execFileSync('mkfifo', [join(workspace, 'pipe')]);
    const { value: error, ms } = await timeLessCpuWait(() => failure(readFileTool, { path: 'pipe' }));
    expect(error).toMatchObject({ reason: 'NOT_A_FILE' });
    expect(ms).toBeLessThan(2000);
    const grepped = (await call(grepTool, { pattern: 'x' })) as { files_skipped: number };
    expect(grepped.files_skipped).toBe(0);
  });

  it('refuses to write inside .git, whatever the spelling', async () => {
    await mkdir(join(workspace, '.git', 'hooks'), { recursive: true });
    for (const path of ['.git/config', '.git/hooks/pre-commit', 'sub/../.git/config', '.GIT/config', '.git']) {
      const error = await failure(writeFileTool, { path, content: '[core]\n\tfsmonitor = evil\n' });
      expect(error, path).toMatchObject({ reason: 'PROTECTED_PATH' });
    }
    await symlink('.git/config', join(workspace, 'config-link'));
    await expect(failure(writeFileTool, { path: 'config-link', content: 'x' })).resolves.toMatchObject({ reason: 'PROTECTED_PATH' });
  });

  it('works when the configured workspace root is itself reached through a symlink', async () => {
    await symlink(workspace, join(base, 'ws-alias'));
    const aliased: ToolContext = { ...context(), workspaceRoot: join(base, 'ws-alias') };
    await expect(readFileTool.handler.invoke({ path: 'real.txt' }, aliased)).resolves.toMatchObject({ content: 'REAL' });
    await expect(readFileTool.handler.invoke({ path: join(base, 'ws-alias', 'real.txt') }, aliased)).resolves.toMatchObject({ content: 'REAL' });
    const error = await readFileTool.handler.invoke({ path: '../outside/secret.txt' }, aliased).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PathEscapeError);
  });
});

/**
 * A separate process flips `sub` between the real directory and a symlink to the outside
 * directory (and `file.txt` between a file and a symlink to an outside file) as fast as it can,
 * while reads and writes run. A string check followed by a use would lose this race; resolving
 * through open handles cannot.
 */
describe('a component swapped between check and use', () => {
  const FLIP_MS = 2500;

  let flipper: { done: Promise<void>; stop: () => void } | undefined;
  afterEach(async () => {
    flipper?.stop();
    await flipper?.done.catch(() => undefined);
    flipper = undefined;
  });

  function startFlipper(): { done: Promise<void>; stop: () => void } {
    const script = `
      const fs = require('node:fs');
      const [ws, ms] = [process.argv[1], Number(process.argv[2])];
      const end = Date.now() + ms;
      while (Date.now() < end) {
        try {
          fs.renameSync(ws + '/sub', ws + '/sub-parked');
          fs.renameSync(ws + '/sub-link', ws + '/sub');
          fs.renameSync(ws + '/sub', ws + '/sub-link');
          fs.renameSync(ws + '/sub-parked', ws + '/sub');
          fs.renameSync(ws + '/file.txt', ws + '/file-parked.txt');
          fs.renameSync(ws + '/file-link.txt', ws + '/file.txt');
          fs.renameSync(ws + '/file.txt', ws + '/file-link.txt');
          fs.renameSync(ws + '/file-parked.txt', ws + '/file.txt');
        } catch (e) { console.error(String(e)); process.exit(1); }
      }
    `;
    const child = spawn(process.execPath, ['-e', script, workspace, String(FLIP_MS)], { stdio: ['ignore', 'ignore', 'inherit'] });
    const done = new Promise<void>((resolve, reject) => {
      child.once('exit', (code, signal) => (code === 0 || signal ? resolve() : reject(new Error(`flipper exited ${code}`))));
    });
    flipper = { done, stop: () => child.kill('SIGKILL') };
    return flipper;
  }

  beforeEach(async () => {
    await writeFile(join(outside, 'inside.txt'), 'OUTSIDE');
    await symlink('../outside', join(workspace, 'sub-link'));
    await symlink('../outside/secret.txt', join(workspace, 'file-link.txt'));
    await writeFile(join(workspace, 'file.txt'), 'INSIDE');
  });

  it('never reads outside content, while a plain read of the same path does', async () => {
    const { done } = startFlipper();
    const outcomes = { inside: 0, refused: 0, missing: 0, naiveOutside: 0 };
    const until = Date.now() + FLIP_MS - 200;
    for (let i = 0; i < 20_000 && Date.now() < until; i++) {
      // Control: the naive way (a string path handed to the OS) does reach outside during the race.
      const naive = await readFile(join(workspace, 'sub', 'inside.txt'), 'utf8').catch(() => '');
      if (naive === 'OUTSIDE') outcomes.naiveOutside++;
      for (const path of ['sub/inside.txt', 'file.txt']) {
        const result = await call(readFileTool, { path }).catch((e: unknown) => e);
        if (result instanceof PathEscapeError) outcomes.refused++;
        else if (result instanceof ToolError && result.reason === 'NOT_FOUND') outcomes.missing++;
        else if (result instanceof Error) throw result;
        else {
          const content = (result as { content: string }).content;
          expect(content).not.toContain('OUTSIDE');
          expect(['INSIDE']).toContain(content);
          outcomes.inside++;
        }
      }
    }
    await done;
    expect(outcomes.naiveOutside, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(outcomes.inside, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(outcomes.refused, JSON.stringify(outcomes)).toBeGreaterThan(0);
  });

  it('never writes outside the workspace', async () => {
    const { done } = startFlipper();
    const until = Date.now() + FLIP_MS - 200;
    let writes = 0;
    for (let i = 0; i < 20_000 && Date.now() < until; i++) {
      const result = await call(writeFileTool, { path: `sub/new-${i % 7}.txt`, content: 'planted?', create_dirs: false }).catch((e: unknown) => e);
      if (!(result instanceof Error)) writes++;
      else if (!(result instanceof ToolError)) throw result;
      await call(writeFileTool, { path: 'file.txt', content: 'planted?' }).catch((e: unknown) => {
        if (!(e instanceof ToolError)) throw e;
      });
    }
    await done;
    expect(writes).toBeGreaterThan(0);
    expect((await readdir(outside)).sort()).toEqual(['inside.txt', 'secret.txt']);
    await expect(readFile(join(outside, 'secret.txt'), 'utf8')).resolves.toBe('OUTSIDE SECRET');
    // No temporary file was left behind anywhere.
    const leftovers = execFileSync('find', [base, '-name', '.toolgate-*']).toString().trim();
    expect(leftovers).toBe('');
  });
});
