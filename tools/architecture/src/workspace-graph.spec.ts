import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ProjectGraph, ProjectGraphProjectNode } from '@nx/devkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArchGraph } from './workspace-graph.js';

function node(name: string, root: string, packageName = name): ProjectGraphProjectNode {
  return { name, type: 'lib', data: { root, tags: ['scope:adapter'], metadata: { js: { packageName } } } as ProjectGraphProjectNode['data'] };
}

describe('buildArchGraph', () => {
  let root = '';
  const files: Record<string, string> = {
    'libs/a/src/index.ts': [
      "import type { Port } from '@toolgate/b';",
      "import { helper } from './helper.js';",
      "import { readFile } from 'node:fs/promises';",
      "import { EventEmitter } from 'events';",
      "import { inner } from '../../b/src/inner.js';",
      "import { loose } from '../../../scripts/loose.js';",
      "import { z } from 'zod/v4';",
      "import { Client } from '@scope/pkg/client';",
    ].join('\n'),
    'libs/a/src/helper.ts': "export const helper = 1;\n",
    'libs/a/src/index.spec.ts': "import { suite } from '@toolgate/b';\n",
    'libs/a/src/types.d.ts': "import 'ignored-in-declarations';\n",
    'libs/a/README.md': "import x from 'not-code';\n",
    'libs/a/package.json': JSON.stringify({ name: '@toolgate/a', dependencies: { '@toolgate/c': '*' } }),
    'libs/b/src/inner.ts': 'export const inner = 1;\n',
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'arch-graph-'));
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(root, file)), { recursive: true });
      await writeFile(path.join(root, file), text);
    }
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('attributes every edge to its file and keeps the edges only Nx knows', async () => {
    const graph: ProjectGraph = {
      nodes: {
        '@toolgate/a': node('@toolgate/a', 'libs/a'),
        'b-project': node('b-project', 'libs/b', '@toolgate/b'),
        '@toolgate/c': node('@toolgate/c', 'libs/c'),
        '@toolgate/d': node('@toolgate/d', 'libs/d'),
      },
      dependencies: {
        '@toolgate/a': [
          { source: '@toolgate/a', target: 'b-project', type: 'static' },
          { source: '@toolgate/a', target: '@toolgate/c', type: 'static' },
          { source: '@toolgate/a', target: '@toolgate/d', type: 'implicit' },
          { source: '@toolgate/a', target: 'npm:zod', type: 'static' },
          { source: '@toolgate/a', target: 'npm:semver@6.3.2', type: 'static' },
        ],
      },
    };
    const fileMap = {
      '@toolgate/a': Object.keys(files).filter((f) => f.startsWith('libs/a/')).map((file) => ({ file })),
      'b-project': [{ file: 'libs/b/src/inner.ts' }],
    };

    const arch = await buildArchGraph(graph, fileMap, root);

    expect(arch.projects.map((p) => p.name)).toEqual(['@toolgate/a', '@toolgate/c', '@toolgate/d', 'b-project']);
    expect(arch.dependencies).toEqual([
      { source: '@toolgate/a', target: 'b-project', file: 'libs/a/src/index.ts', specifier: '@toolgate/b' },
      { source: '@toolgate/a', target: 'b-project', file: 'libs/a/src/index.ts', specifier: '../../b/src/inner.js' },
      { source: '@toolgate/a', target: 'b-project', file: 'libs/a/src/index.spec.ts', specifier: '@toolgate/b' },
      { source: '@toolgate/a', target: '@toolgate/c', file: 'libs/a/package.json' },
      { source: '@toolgate/a', target: '@toolgate/d' },
    ]);
    expect(arch.externalImports).toEqual([
      { project: '@toolgate/a', file: 'libs/a/src/index.ts', module: 'node:fs/promises' },
      { project: '@toolgate/a', file: 'libs/a/src/index.ts', module: 'events' },
      { project: '@toolgate/a', file: 'libs/a/src/index.ts', module: '../../../scripts/loose.js' },
      { project: '@toolgate/a', file: 'libs/a/src/index.ts', module: 'zod/v4' },
      { project: '@toolgate/a', file: 'libs/a/src/index.ts', module: '@scope/pkg/client' },
      { project: '@toolgate/a', module: 'semver' },
    ]);
  });
});
