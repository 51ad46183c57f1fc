import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { workspaceRoot } from '@nx/devkit';
import { describe, expect, it } from 'vitest';
import { citedRepoPaths, citedTests, relativeDocLinks } from './doc-paths.js';

/**
 * The docs are read as the map of the code, so a path they cite that no longer exists (a file
 * moved by a reshape, a test renamed) is a wrong map. These tests read the real README, docs/ and
 * adrs/ on every run.
 */
const exists = (relative: string) => existsSync(path.join(workspaceRoot, relative));
const read = (relative: string) => readFileSync(path.join(workspaceRoot, relative), 'utf8');
const markdownIn = (dir: string) =>
  readdirSync(path.join(workspaceRoot, dir))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `${dir}/${f}`);

/**
 * Paths the docs name on purpose although they do not exist in the tree: the files a generator
 * walkthrough creates. Each entry says where it comes from.
 */
const EXAMPLE_PATHS = new Set([
  // docs/adding-a-tool.md walks through `npx nx g @toolgate/workspace:tool page-title`.
  'libs/tools/page-title/src/page-title.tool.ts',
]);

describe('paths cited by the docs', () => {
  const docs = ['README.md', ...markdownIn('docs')];

  it.each(docs)('%s names only repository paths that exist', (doc) => {
    const missing = citedRepoPaths(read(doc)).filter((p) => !EXAMPLE_PATHS.has(p) && !exists(p));
    expect(missing).toEqual([]);
  });

  it.each([...docs, ...markdownIn('adrs')])('%s links only to files that exist', (doc) => {
    const broken = relativeDocLinks(read(doc), path.dirname(doc)).filter((target) => !exists(target));
    expect(broken).toEqual([]);
  });

  it.each(docs)('%s cites only tests that exist under the name it gives', (doc) => {
    const absent = citedTests(read(doc))
      .filter(({ file, name }) => !exists(file) || !read(file).includes(name))
      .map(({ file, name }) => `${file} › "${name}"`);
    expect(absent).toEqual([]);
  });
});

describe('the path reader', () => {
  it('finds inline repository paths outside fenced code, with or without a trailing slash', () => {
    const text = [
      'See `libs/gateway/src/gateway.ts` and `apps/server/src/bindings/`.',
      '```sh',
      'cat libs/not/read.ts `libs/inside/fence.ts`',
      '```',
      'Not a path: `npm test`, `lib/x.ts`, `libs` alone, the MCP methods `tools/list` and `tools/call`.',
    ].join('\n');
    expect(citedRepoPaths(text)).toEqual(['libs/gateway/src/gateway.ts', 'apps/server/src/bindings']);
  });

  it('resolves relative links from the document, skipping URLs, anchors and placeholders', () => {
    const text = '[a](../libs/x.md) [b](https://example.com/y) [c](#anchor) [d](0001-x.md#part) [e](NNNN-….md)';
    expect(relativeDocLinks(text, 'docs')).toEqual(['libs/x.md', 'docs/0001-x.md']);
  });

  it('reads a cited test name across a line break', () => {
    const text = 'Held by `libs/gateway/test/a.spec.ts` ›\n  "self-issued grants", and `x.ts` › "not a spec".';
    expect(citedTests(text)).toEqual([{ file: 'libs/gateway/test/a.spec.ts', name: 'self-issued grants' }]);
  });

  it('fails on a path that does not exist, so the check is not vacuous', () => {
    const missing = citedRepoPaths('`libs/gateway/src/no-such-file.ts`').filter((p) => !exists(p));
    expect(missing).toEqual(['libs/gateway/src/no-such-file.ts']);
  });
});
