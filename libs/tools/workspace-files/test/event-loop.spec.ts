import { mkdir, mkdtemp, open, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError, type JsonObject, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
import { testToolContext, threadSchedule, timeOnThread } from '@toolgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// Internal, to time what the tools do not export on their own: the glob matcher, the yielding
// sort and the walk's depth bound.
import { compileGlob } from '../src/glob-pattern.js';
import { editFileTool, globTool, grepTool, listDirTool, MAX_WRITE_BYTES } from '../src/index.js';
import { sortYielding } from '../src/time-slice.js';
import { MAX_WALK_DEPTH } from '../src/tree-walk.js';

// Every workspace tool runs on the gateway's event loop (tier 0). These tests hold each tool to
// the rule that no input may keep that loop busy: while a hostile call runs, a ticker scheduled
// with setImmediate must keep getting turns, and the longest gap between its turns is the
// longest stretch the tool held the loop. A gap counts the process's CPU time, capped by the
// wall time: on a shared machine the OS may pause the whole process, which is not the tool
// holding the loop (the server's end-to-end test measures wall time).

/** Longest stretch, in ms, the loop may be held in these tests (the server's bar is 100 ms). */
const MAX_GAP_MS = 50;

async function loopGap<T>(work: () => Promise<T>): Promise<{ value: T | Error; gap: number; ms: number }> {
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let gap = 0;
  let running = true;
  const stretch = () => {
    const cpu = process.cpuUsage(lastCpu);
    return Math.min(performance.now() - last, (cpu.user + cpu.system) / 1000);
  };
  const tick = () => {
    gap = Math.max(gap, stretch());
    last = performance.now();
    lastCpu = process.cpuUsage();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  // `ms`: the call's time less the time the box kept this thread off a CPU meanwhile.
  const waited = threadSchedule().waitedMs;
  const started = performance.now();
  try {
    const value = await work().catch((error: Error) => error);
    return { value, gap: Math.max(gap, stretch()), ms: performance.now() - started - (threadSchedule().waitedMs - waited) };
  } finally {
    running = false;
  }
}

let base: string;
let workspace: string;

const context = (): ToolContext => testToolContext({ workspaceRoot: workspace });
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const call = (tool: ToolDefinition, args: JsonObject): Promise<any> => tool.handler.invoke(args, context());

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-loop-')));
  workspace = join(base, 'tenant-a');
  await mkdir(workspace, { recursive: true });
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('catastrophic backtracking in globs', () => {
  // Each is exponential (or of a high polynomial degree) for a backtracking matcher on a long name
  // of 'a's that does not end as the pattern wants.
  const HOSTILE = [
    '*a*a*a*a*a*b',
    '*a*a*a*a*a*a*a*a*a*a*a*a*b',
    '**/*a*a*a*a*a*a*b',
    '**/**/**/**/**/**/**/**/*a*a*a*b',
    '{a,a}'.repeat(40) + 'b',
    '{a,aa}'.repeat(30) + 'b',
    '{*a,*a}'.repeat(12) + 'b',
    '[a]*'.repeat(30) + 'b',
    '*[a]*[a]*[a]*[a]*[a]*[!a]',
    '?'.repeat(200) + '*b',
    '*?'.repeat(32) + 'b',
    '*a'.repeat(32) + '?'.repeat(900),
    '{{a,a},{a,a}}'.repeat(12) + 'b',
  ];
  const NAME = 'a'.repeat(250);

  it.each(HOSTILE)('matches %s against a long name in linear time', (pattern) => {
    const glob = compileGlob(pattern);
    for (const path of [NAME, `${NAME}/${NAME}`, `${'a/'.repeat(1000)}${NAME}`]) {
      const { value: matched, ms } = timeOnThread(() => glob.test(path));
      expect(matched).toBe(false);
      expect(ms).toBeLessThan(MAX_GAP_MS);
    }
  });

  it.each(HOSTILE)('keeps the event loop turning while glob runs %s over a tree of long names', async (pattern) => {
    await mkdir(join(workspace, NAME, NAME), { recursive: true });
    for (let i = 0; i < 20; i++) await writeFile(join(workspace, NAME, `${NAME.slice(0, 240)}${i}`), '');
    await writeFile(join(workspace, NAME, NAME, NAME), '');
    const { value, gap } = await loopGap(() => call(globTool, { pattern }));
    expect(value).toEqual({ matches: [], truncated: false });
    expect(gap).toBeLessThan(MAX_GAP_MS);
  });

  it('keeps the event loop turning while grep filters files with a hostile glob', async () => {
    for (let i = 0; i < 20; i++) await writeFile(join(workspace, `${NAME.slice(0, 240)}${i}`), 'hello\n');
    const { value, gap } = await loopGap(() => call(grepTool, { pattern: 'hello', glob: HOSTILE[1] as string }));
    expect(value).toMatchObject({ matches: [], files_searched: 0 });
    expect(gap).toBeLessThan(MAX_GAP_MS);
  });

  it('still matches what the globs say', () => {
    expect(compileGlob('*a*a*a*a*a*b').test(`${'a'.repeat(40)}b`)).toBe(true);
    expect(compileGlob('{a,a}{a,a}b').test('aab')).toBe(true);
    expect(compileGlob('?'.repeat(5)).test('a😀cde')).toBe(true);
    expect(compileGlob('**/*a*b').test('x/y/zaab')).toBe(true);
  });

  it('refuses globs past the complexity bounds with a reason, rather than run them slowly', () => {
    for (const [pattern, why] of [
      ['*a'.repeat(33), /more than 32 '\*' wildcards/],
      ['*?'.repeat(100), /more than 32 '\*' wildcards/],
      [`${'[a]*'.repeat(20)}/${'{*a,*b}'.repeat(7)}`, /more than 32 '\*' wildcards/],
      ['a/'.repeat(33), /more than 32 path components/],
      ['**/'.repeat(40) + 'x', /more than 32 path components/],
    ] as const) {
      expect(() => compileGlob(pattern)).toThrow(ToolError);
      expect(() => compileGlob(pattern)).toThrow(why);
    }
    expect(() => compileGlob('*a'.repeat(32))).not.toThrow();
  });

  it('refuses a class range written backwards as an invalid pattern, not a crash', () => {
    expect(() => compileGlob('[z-a]*')).toThrow(ToolError);
    expect(() => compileGlob('[z-a]*')).toThrow(/invalid character class/);
  });
});

/**
 * The glob translation before it moved to a linear-time engine, kept as the specification of glob
 * syntax: on inputs where backtracking is harmless, the new matcher must agree with it.
 */
function legacyGlob(pattern: string): RegExp {
  const segments = pattern.split('/').filter((s) => s !== '' && s !== '.');
  const escape = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  let source = '';
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '**') {
      source += last ? '.*' : '(?:[^/]+/)*';
      return;
    }
    let out = '';
    let braces = 0;
    for (let i = 0; i < segment.length; i++) {
      const c = segment[i] ?? '';
      if (c === '\\' && i + 1 < segment.length) out += escape(segment[++i] ?? '');
      else if (c === '*') {
        while (segment[i + 1] === '*') i++;
        out += '[^/]*';
      } else if (c === '?') out += '[^/]';
      else if (c === '[') {
        const close = segment.indexOf(']', i + 2);
        if (close === -1) {
          out += '\\[';
          continue;
        }
        let body = segment.slice(i + 1, close);
        const negated = body.startsWith('!') || body.startsWith('^');
        if (negated) body = body.slice(1);
        body = body.replace(/\\/g, '\\\\').replace(/^\^/, '\\^');
        out += negated ? `[^/${body}]` : `[${body}]`;
        i = close;
      } else if (c === '{') {
        braces++;
        out += '(?:';
      } else if (c === ',' && braces > 0) out += '|';
      else if (c === '}' && braces > 0) {
        braces--;
        out += ')';
      } else out += escape(c);
    }
    source += out + (last ? '' : '/');
  });
  return new RegExp(`^${source}$`, 's');
}

describe('glob syntax', () => {
  it('agrees with the previous translation on thousands of generated globs and paths', () => {
    let seed = 0x6c0b;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pick = <T,>(items: readonly T[]): T => items[rand(items.length)] as T;
    // Classes never start with `]` and ranges run forwards: there the old translation was
    // broken (an empty class, or a SyntaxError), and POSIX meaning is kept instead.
    const PIECES = ['a', 'b', '.', '-', '*', '?', '[ab]', '[!a]', '[^b]', '[a-c]', '[.-]', '[\\]', '{a,b}', '{a,}', '{*.a,b?}', '\\*', '\\?', '\\[', '\\{', '(', ')', '+', '$', '^', '|', ',', '}', '[', 'é'];
    const SEGMENTS = () => (rand(6) === 0 ? '**' : Array.from({ length: 1 + rand(4) }, () => pick(PIECES)).join(''));
    const CHARS = ['a', 'b', 'c', '.', '-', '*', '?', '[', ']', '{', '}', ',', '(', ')', '+', '$', '^', '|', '\\', 'é', '\n'];
    let compared = 0;
    for (let p = 0; p < 1500; p++) {
      const pattern = Array.from({ length: 1 + rand(3) }, SEGMENTS).join('/');
      let legacy: RegExp;
      try {
        legacy = legacyGlob(pattern);
        compileGlob(pattern);
      } catch {
        continue;
      }
      const glob = compileGlob(pattern);
      for (let s = 0; s < 12; s++) {
        const path = Array.from({ length: 1 + rand(3) }, () => Array.from({ length: 1 + rand(4) }, () => pick(CHARS)).join('')).join('/');
        expect({ pattern, path, matches: glob.test(path) }).toEqual({ pattern, path, matches: legacy.test(path) });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(10_000);
  });

  it('reads a `]` first in a class as a member, as POSIX shells do', () => {
    expect(compileGlob('[]a]').test(']')).toBe(true);
    expect(compileGlob('[]a]').test('a')).toBe(true);
    expect(compileGlob('[!]a]').test('b')).toBe(true);
    expect(compileGlob('[!]a]').test(']')).toBe(false);
  });
});

describe('huge directories', () => {
  it('sorts 200,000 names correctly and stably in slices that let the loop turn', async () => {
    const names = Array.from({ length: 200_000 }, (_, i) => ({ name: `f${(i * 7919) % 100_003}`, i }));
    const { gap } = await loopGap(() => sortYielding(names, (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
    let ordered = 0;
    for (let k = 1; k < names.length; k++) {
      const [a, b] = [names[k - 1], names[k]] as [{ name: string; i: number }, { name: string; i: number }];
      if (a.name < b.name || (a.name === b.name && a.i < b.i)) ordered++;
    }
    expect(ordered).toBe(names.length - 1);
    expect(gap).toBeLessThan(MAX_GAP_MS);
  });

  it('walks a directory of 30,000 entries with glob and list_dir without holding the loop', async () => {
    const dir = join(workspace, 'many');
    await mkdir(dir);
    for (let i = 0; i < 30_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, k) => open(join(dir, `entry-${String(i + k).padStart(6, '0')}`), 'w').then((h) => h.close())));
    }
    const globbed = await loopGap(() => call(globTool, { pattern: 'many/*9', limit: 10_000 }));
    expect(globbed.value).toMatchObject({ truncated: false });
    expect((globbed.value as { matches: string[] }).matches).toHaveLength(3000);
    expect(globbed.gap).toBeLessThan(MAX_GAP_MS);
    const listed = await loopGap(() => call(listDirTool, { path: 'many', limit: 5000 }));
    expect(listed.value).toMatchObject({ truncated: true });
    expect(listed.gap).toBeLessThan(MAX_GAP_MS);
    const everything = await loopGap(() => call(globTool, { pattern: '**', limit: 10_000 }));
    expect(everything.value).toMatchObject({ truncated: true });
    expect(everything.gap).toBeLessThan(MAX_GAP_MS);
  }, 60_000);
});

describe('descriptor exhaustion through deep directories', () => {
  it('never holds more than one handle per level up to MAX_WALK_DEPTH, whatever the depth planted', async () => {
    // A chain 1,500 directories deep (a bash call can plant 24,000), with a match near the top.
    const chain = Array.from({ length: 1500 }, () => 'd').join('/');
    await mkdir(join(workspace, 'deep', chain), { recursive: true });
    await writeFile(join(workspace, 'deep', 'd', 'd', 'zzz'), 'near the top');
    await writeFile(join(workspace, 'deep', chain, 'zzz'), 'far below the bound');
    const baseline = readdirSync('/proc/self/fd').length;
    for (const run of [
      () => call(globTool, { pattern: 'deep/**/zzz', limit: 100 }),
      () => call(globTool, { pattern: '**', limit: 10_000 }),
      () => call(grepTool, { pattern: 'near|far', path: 'deep' }),
    ]) {
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, readdirSync('/proc/self/fd').length)), 1);
      const { value } = await loopGap(run).finally(() => clearInterval(sampler));
      expect(value).not.toBeInstanceOf(Error);
      expect(value).toMatchObject({ truncated: true });
      // One handle per level, plus the few a call opens besides (start, listing, file read).
      expect(peak - baseline).toBeLessThan(MAX_WALK_DEPTH + 16);
    }
    const found = await call(globTool, { pattern: 'deep/**/zzz', limit: 100 });
    expect(found.matches).toEqual(['deep/d/d/zzz']);
  }, 60_000);
});

describe('size blow-up', () => {
  const BIG = 4 * 1024 * 1024;

  it('refuses replace_all of a 1-character old_string with 1000 characters before building anything', async () => {
    await writeFile(join(workspace, 'big.txt'), 'a'.repeat(BIG));
    const { value, gap, ms } = await loopGap(() => call(editFileTool, { path: 'big.txt', old_string: 'a', new_string: 'b'.repeat(1000), replace_all: true }));
    expect(value).toBeInstanceOf(ToolError);
    expect(value).toMatchObject({ reason: 'TOO_LARGE' });
    expect((value as Error).message).toMatch(/would exceed 5242880 bytes \(at least \d+ replacements of 1 bytes by 1000\)/);
    expect(ms).toBeLessThan(2000);
    expect(gap).toBeLessThan(MAX_GAP_MS);
    expect((await readFile(join(workspace, 'big.txt'), 'utf8')) === 'a'.repeat(BIG)).toBe(true);
  });

  it('refuses growth by many small replacements that together pass the limit', async () => {
    await writeFile(join(workspace, 'lines.txt'), 'x\n'.repeat(BIG / 2));
    const { value, gap } = await loopGap(() => call(editFileTool, { path: 'lines.txt', old_string: '\n', new_string: '\r\n', replace_all: true }));
    expect(value).toMatchObject({ reason: 'TOO_LARGE' });
    expect(gap).toBeLessThan(MAX_GAP_MS);
  });

  it('makes two million same-size replacements in slices, and writes exactly the result', async () => {
    await writeFile(join(workspace, 'big.txt'), 'ab'.repeat(BIG / 2));
    const { value, gap } = await loopGap(() => call(editFileTool, { path: 'big.txt', old_string: 'a', new_string: 'c', replace_all: true }));
    expect(value).toMatchObject({ replacements: BIG / 2, bytes_written: BIG });
    expect(gap).toBeLessThan(MAX_GAP_MS);
    expect((await readFile(join(workspace, 'big.txt'), 'utf8')) === 'cb'.repeat(BIG / 2)).toBe(true);
  });

  it('refuses a huge new_string that would pass the limit, and accepts one that lands exactly on it', async () => {
    await writeFile(join(workspace, 'small.txt'), 'one TWO three');
    const huge = 'é'.repeat(MAX_WRITE_BYTES / 2); // exactly the limit in UTF-8 by itself
    const over = await loopGap(() => call(editFileTool, { path: 'small.txt', old_string: 'TWO', new_string: huge }));
    expect(over.value).toMatchObject({ reason: 'TOO_LARGE' });
    expect(over.gap).toBeLessThan(MAX_GAP_MS);
    await expect(readFile(join(workspace, 'small.txt'), 'utf8')).resolves.toBe('one TWO three');
    const exact = 'é'.repeat((MAX_WRITE_BYTES - 'one  three'.length) / 2);
    await expect(call(editFileTool, { path: 'small.txt', old_string: 'TWO', new_string: exact })).resolves.toMatchObject({ bytes_written: MAX_WRITE_BYTES });
  });

  it('replaces multi-byte text by character, and refuses lone surrogates that have no UTF-8 spelling', async () => {
    await writeFile(join(workspace, 'u.txt'), 'café 😀 café');
    await expect(call(editFileTool, { path: 'u.txt', old_string: 'é', new_string: 'e', replace_all: true })).resolves.toMatchObject({ replacements: 2 });
    await expect(readFile(join(workspace, 'u.txt'), 'utf8')).resolves.toBe('cafe 😀 cafe');
    await expect(call(editFileTool, { path: 'u.txt', old_string: '\ud83d', new_string: 'x' })).rejects.toMatchObject({ reason: 'INVALID_ARGUMENT' });
    await expect(call(editFileTool, { path: 'u.txt', old_string: 'cafe', new_string: '\ude00', replace_all: true })).rejects.toMatchObject({ reason: 'INVALID_ARGUMENT' });
    await expect(readFile(join(workspace, 'u.txt'), 'utf8')).resolves.toBe('cafe 😀 cafe');
  });
});

describe('grep on large inputs', () => {
  it('searches a 4 MiB single line, a file of a million lines and many files without holding the loop', async () => {
    await writeFile(join(workspace, 'one-line.txt'), `${'x'.repeat(4 * 1024 * 1024 - 10)}needle\n`);
    await writeFile(join(workspace, 'many-lines.txt'), 'line\n'.repeat(800_000) + 'needle\n');
    await mkdir(join(workspace, 'files'));
    for (let i = 0; i < 300; i++) await writeFile(join(workspace, 'files', `f${i}.txt`), `${'text '.repeat(2000)}\n`);
    const searches: JsonObject[] = [{ pattern: 'needle' }, { pattern: 'NEEDLE', fixed_string: true, ignore_case: true }, { pattern: 'ne+dle$' }];
    for (const args of searches) {
      const { value, gap } = await loopGap(() => call(grepTool, args));
      expect(value).toMatchObject({ files_searched: 302 });
      expect((value as { matches: { path: string }[] }).matches.map((m) => m.path).sort()).toEqual(['many-lines.txt', 'one-line.txt']);
      expect(gap).toBeLessThan(MAX_GAP_MS);
    }
  }, 60_000);
});
