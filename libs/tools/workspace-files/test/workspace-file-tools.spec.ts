import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError, type JsonObject, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
import { testToolContext } from '@toolgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  editFileTool,
  globTool,
  grepTool,
  listDirTool,
  MAX_READ_BYTES,
  MAX_WRITE_BYTES,
  readFileTool,
  workspaceFileTools,
  writeFileTool,
} from '../src/index.js';

let base: string;
let workspace: string;
let controller: AbortController;

const context = (): ToolContext => testToolContext({ signal: controller.signal, workspaceRoot: workspace });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const call = (tool: ToolDefinition, args: JsonObject): Promise<any> => tool.handler.invoke(args, context());
const reason = (tool: ToolDefinition, args: JsonObject) =>
  call(tool, args).then(
    () => 'succeeded',
    (error: unknown) => (error instanceof ToolError ? error.reason : String(error)),
  );

beforeEach(async () => {
  controller = new AbortController();
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-files-')));
  workspace = join(base, 'tenant-a');
  await mkdir(join(workspace, 'src', 'lib'), { recursive: true });
  await writeFile(join(workspace, 'README.md'), '# Title\nhello world\n');
  await writeFile(join(workspace, 'src', 'main.ts'), 'const a = 1;\nconst b = 2;\nexport { a, b };\n');
  await writeFile(join(workspace, 'src', 'lib', 'util.ts'), 'export const HELLO = "hello";\n');
  await writeFile(join(workspace, 'src', 'lib', 'data.json'), '{"hello": true}\n');
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('manifests', () => {
  it('declares every tool at tier 0 with the workspace filesystem permission, read-only tools low risk and writers medium', () => {
    const byName = new Map(workspaceFileTools.map((t) => [t.manifest.name, t.manifest]));
    expect([...byName.keys()].sort()).toEqual(['edit_file', 'glob', 'grep', 'list_dir', 'read_file', 'write_file']);
    for (const manifest of byName.values()) {
      expect(manifest.tier).toBe('inprocess');
      expect(manifest.provenance).toBe('first-party');
      expect(manifest.permissions).toEqual([{ type: 'filesystem', scope: 'workspace' }]);
      expect(manifest.input['additionalProperties']).toBe(false);
      expect(manifest.output['additionalProperties']).toBe(false);
      expect(manifest.timeoutMs).toBeGreaterThan(0);
    }
    for (const name of ['read_file', 'glob', 'grep', 'list_dir']) expect(byName.get(name)?.risk).toBe('low');
    for (const name of ['write_file', 'edit_file']) expect(byName.get(name)?.risk).toBe('medium');
  });
});

describe('read_file', () => {
  it('reads a file with its line range and size', async () => {
    await expect(call(readFileTool, { path: 'src/main.ts' })).resolves.toEqual({
      path: 'src/main.ts',
      binary: false,
      size: 43,
      content: 'const a = 1;\nconst b = 2;\nexport { a, b };\n',
      start_line: 1,
      end_line: 3,
      truncated: false,
    });
  });

  it('returns the requested lines with offset and limit, and says when more follow', async () => {
    await writeFile(join(workspace, 'lines.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
    await expect(call(readFileTool, { path: 'lines.txt', offset: 3, limit: 2 })).resolves.toMatchObject({
      content: 'line 3\nline 4\n',
      start_line: 3,
      end_line: 4,
      truncated: true,
    });
    await expect(call(readFileTool, { path: 'lines.txt', offset: 9 })).resolves.toMatchObject({
      content: 'line 9\nline 10',
      end_line: 10,
      truncated: false,
    });
    await expect(call(readFileTool, { path: 'lines.txt', offset: 50 })).resolves.toMatchObject({ content: '', end_line: 49, truncated: false });
  });

  it('caps a read at 1 MiB, even for one enormous line, without splitting a character', async () => {
    await writeFile(join(workspace, 'big.txt'), 'é'.repeat(MAX_READ_BYTES)); // 2 MiB, one line
    const result = await call(readFileTool, { path: 'big.txt' });
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.content)).toBe(MAX_READ_BYTES);
    expect(result.content).toBe('é'.repeat(MAX_READ_BYTES / 2));
  });

  it('reports a binary file as binary without its content', async () => {
    await writeFile(join(workspace, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    await expect(call(readFileTool, { path: 'image.png' })).resolves.toMatchObject({ binary: true, content: '', size: 7 });
  });

  it('names a missing file, a directory, and an empty path clearly', async () => {
    await expect(reason(readFileTool, { path: 'nope.txt' })).resolves.toBe('NOT_FOUND');
    await expect(reason(readFileTool, { path: 'src' })).resolves.toBe('IS_A_DIRECTORY');
    await expect(reason(readFileTool, { path: 'README.md/x' })).resolves.toBe('NOT_A_DIRECTORY');
    const error = await call(readFileTool, { path: 'nope.txt' }).catch((e: Error) => e);
    expect(error.message).toBe("'nope.txt' does not exist");
  });

  it('creates the workspace root on a tenant’s first call', async () => {
    workspace = join(workspace, 'fresh-tenant');
    await expect(call(listDirTool, {})).resolves.toEqual({ path: '.', entries: [], truncated: false });
  });
});

describe('write_file', () => {
  it('creates a file and its missing directories, and reports whether it was new', async () => {
    await expect(call(writeFileTool, { path: 'docs/guide/intro.md', content: 'Intro\n' })).resolves.toEqual({
      path: 'docs/guide/intro.md',
      bytes_written: 6,
      created: true,
    });
    await expect(readFile(join(workspace, 'docs/guide/intro.md'), 'utf8')).resolves.toBe('Intro\n');
    await expect(call(writeFileTool, { path: 'docs/guide/intro.md', content: 'Again' })).resolves.toMatchObject({ created: false });
    await expect(reason(writeFileTool, { path: 'new-dir/file.txt', content: 'x', create_dirs: false })).resolves.toBe('NOT_FOUND');
  });

  it("keeps an existing file's permissions and leaves no temporary file behind", async () => {
    await chmod(join(workspace, 'README.md'), 0o640);
    await call(writeFileTool, { path: 'README.md', content: 'new' });
    expect((await stat(join(workspace, 'README.md'))).mode & 0o777).toBe(0o640);
    expect((await readdir(workspace)).filter((n) => n.startsWith('.toolgate-'))).toEqual([]);
  });

  it('refuses content over 5 MiB and a directory as target', async () => {
    await expect(reason(writeFileTool, { path: 'huge.txt', content: 'x'.repeat(MAX_WRITE_BYTES + 1) })).resolves.toBe('TOO_LARGE');
    await expect(reason(writeFileTool, { path: 'src', content: 'x' })).resolves.toBe('IS_A_DIRECTORY');
    await expect(reason(writeFileTool, { path: '.', content: 'x' })).resolves.toBe('IS_A_DIRECTORY');
  });

  it('replaces files atomically: a concurrent reader sees the old or the new content, never a mix', async () => {
    const size = 512 * 1024;
    await writeFile(join(workspace, 'swap.txt'), 'A'.repeat(size));
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 40; i++) await call(writeFileTool, { path: 'swap.txt', content: (i % 2 ? 'A' : 'B').repeat(size) });
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const { content } = await call(readFileTool, { path: 'swap.txt' });
      expect(content.length).toBe(size);
      expect(content === 'A'.repeat(size) || content === 'B'.repeat(size)).toBe(true);
      reads++;
    }
    await writer;
    expect(reads).toBeGreaterThan(0);
  });
});

describe('edit_file', () => {
  it('replaces a unique match exactly, keeping $-patterns in the replacement literal', async () => {
    await expect(call(editFileTool, { path: 'src/main.ts', old_string: 'const b = 2;', new_string: "const b = '$&$1';" })).resolves.toEqual({
      path: 'src/main.ts',
      replacements: 1,
      bytes_written: 48,
    });
    await expect(readFile(join(workspace, 'src/main.ts'), 'utf8')).resolves.toBe("const a = 1;\nconst b = '$&$1';\nexport { a, b };\n");
  });

  it('requires a unique match unless replace_all is set', async () => {
    const error = await call(editFileTool, { path: 'src/main.ts', old_string: 'const', new_string: 'let' }).catch((e: ToolError) => e);
    expect(error).toMatchObject({ reason: 'AMBIGUOUS_MATCH' });
    expect(error.message).toContain('occurs 2 times');
    await expect(call(editFileTool, { path: 'src/main.ts', old_string: 'const', new_string: 'let', replace_all: true })).resolves.toMatchObject({
      replacements: 2,
    });
    await expect(readFile(join(workspace, 'src/main.ts'), 'utf8')).resolves.toBe('let a = 1;\nlet b = 2;\nexport { a, b };\n');
  });

  it('refuses no match, a no-op, binary and non-UTF-8 files', async () => {
    await expect(reason(editFileTool, { path: 'src/main.ts', old_string: 'missing', new_string: 'x' })).resolves.toBe('NO_MATCH');
    await expect(reason(editFileTool, { path: 'src/main.ts', old_string: 'a', new_string: 'a' })).resolves.toBe('NO_CHANGE');
    await writeFile(join(workspace, 'bin.dat'), Buffer.from([1, 0, 2]));
    await expect(reason(editFileTool, { path: 'bin.dat', old_string: '\u0001', new_string: 'x' })).resolves.toBe('BINARY_FILE');
    await writeFile(join(workspace, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    await expect(reason(editFileTool, { path: 'latin1.txt', old_string: 'caf', new_string: 'x' })).resolves.toBe('NOT_UTF8');
    await expect(reason(editFileTool, { path: 'nope.ts', old_string: 'a', new_string: 'b' })).resolves.toBe('NOT_FOUND');
  });
});

describe('list_dir', () => {
  it('lists entries sorted by name with types and file sizes', async () => {
    await expect(call(listDirTool, { path: 'src' })).resolves.toEqual({
      path: 'src',
      entries: [
        { name: 'lib', type: 'directory' },
        { name: 'main.ts', type: 'file', size: 43 },
      ],
      truncated: false,
    });
    const root = await call(listDirTool, {});
    expect(root.entries.map((e: { name: string }) => e.name)).toEqual(['README.md', 'src']);
  });

  it('caps the listing and says so', async () => {
    for (let i = 0; i < 12; i++) await writeFile(join(workspace, `f${String(i).padStart(2, '0')}`), '');
    const result = await call(listDirTool, { limit: 5 });
    expect(result.entries).toHaveLength(5);
    expect(result.truncated).toBe(true);
    await expect(reason(listDirTool, { path: 'README.md' })).resolves.toBe('NOT_A_DIRECTORY');
  });
});

describe('glob', () => {
  it('matches at one level with *, at any depth with **, with classes and alternatives', async () => {
    await expect(call(globTool, { pattern: '*.md' })).resolves.toEqual({ matches: ['README.md'], truncated: false });
    await expect(call(globTool, { pattern: '**/*.ts' })).resolves.toEqual({ matches: ['src/lib/util.ts', 'src/main.ts'], truncated: false });
    await expect(call(globTool, { pattern: 'src/**/*.{ts,json}' })).resolves.toMatchObject({
      matches: ['src/lib/data.json', 'src/lib/util.ts', 'src/main.ts'],
    });
    await expect(call(globTool, { pattern: '*', path: 'src' })).resolves.toEqual({ matches: ['src/lib/', 'src/main.ts'], truncated: false });
    await expect(call(globTool, { pattern: 'src/[lm]*' })).resolves.toMatchObject({ matches: ['src/lib/', 'src/main.ts'] });
    await expect(call(globTool, { pattern: 'src/?ain.ts' })).resolves.toMatchObject({ matches: ['src/main.ts'] });
    await expect(call(globTool, { pattern: 'src/[!m]*' })).resolves.toMatchObject({ matches: ['src/lib/'] });
  });

  it('never searches .git and caps its results', async () => {
    await mkdir(join(workspace, '.git', 'objects'), { recursive: true });
    await writeFile(join(workspace, '.git', 'objects', 'x.ts'), '');
    const all = await call(globTool, { pattern: '**' });
    expect(all.matches).toContain('.git/');
    expect(all.matches.some((m: string) => m.startsWith('.git/objects'))).toBe(false);
    await expect(call(globTool, { pattern: '**', limit: 2 })).resolves.toMatchObject({ matches: ['.git/', 'README.md'], truncated: true });
    await expect(reason(globTool, { pattern: 'src/{a,b' })).resolves.toBe('INVALID_PATTERN');
  });
});

describe('grep', () => {
  it('finds matching lines with path and line number, by regex or fixed string, optionally ignoring case', async () => {
    await expect(call(grepTool, { pattern: 'hel+o' })).resolves.toEqual({
      matches: [
        { path: 'README.md', line: 2, text: 'hello world' },
        { path: 'src/lib/data.json', line: 1, text: '{"hello": true}' },
        { path: 'src/lib/util.ts', line: 1, text: 'export const HELLO = "hello";' },
      ],
      truncated: false,
      files_searched: 4,
      files_skipped: 0,
    });
    const fixed = await call(grepTool, { pattern: 'HELLO', fixed_string: true, ignore_case: true, path: 'src' });
    expect(fixed.matches.map((m: { path: string }) => m.path)).toEqual(['src/lib/data.json', 'src/lib/util.ts']);
    const globbed = await call(grepTool, { pattern: 'hello', glob: '**/*.ts' });
    expect(globbed.matches).toEqual([{ path: 'src/lib/util.ts', line: 1, text: 'export const HELLO = "hello";' }]);
    await expect(call(grepTool, { pattern: 'const b', path: 'src/main.ts' })).resolves.toMatchObject({
      matches: [{ path: 'src/main.ts', line: 2, text: 'const b = 2;' }],
    });
  });

  it('does not report the empty line after a trailing newline', async () => {
    await expect(call(grepTool, { pattern: '^$', path: 'README.md' })).resolves.toMatchObject({ matches: [] });
  });

  it('skips binary files, caps matches, and rejects an invalid regex', async () => {
    await writeFile(join(workspace, 'blob.bin'), Buffer.concat([Buffer.from('hello'), Buffer.from([0])]));
    const result = await call(grepTool, { pattern: 'hello', max_matches: 2 });
    expect(result.matches).toHaveLength(2);
    expect(result.truncated).toBe(true);
    const all = await call(grepTool, { pattern: 'hello' });
    expect(all.files_skipped).toBe(1);
    const invalid = await call(grepTool, { pattern: '(unclosed' }).catch((e: ToolError) => e);
    expect(invalid).toMatchObject({ reason: 'INVALID_PATTERN' });
  });

  it('stops a catastrophically backtracking pattern without stalling the event loop', async () => {
    await writeFile(join(workspace, 'evil.txt'), `${'a'.repeat(40)}!\n`);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    const started = performance.now();
    const error = await call(grepTool, { pattern: '^(a+)+$', path: 'evil.txt' }).catch((e: ToolError) => e);
    clearInterval(ticker);
    expect(error).toMatchObject({ reason: 'PATTERN_TOO_SLOW' });
    expect(performance.now() - started).toBeLessThan(6000);
    // The gateway's event loop kept running while the pattern spun in the worker.
    expect(ticks).toBeGreaterThan(40);
  });

  it('stops when the call is aborted', async () => {
    await writeFile(join(workspace, 'evil.txt'), `${'a'.repeat(40)}!\n`);
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    await expect(call(grepTool, { pattern: '^(a+)+$' })).rejects.toMatchObject({ reason: 'ABORTED' });
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
