import { describe, expect, it } from 'vitest';
import type { ArchDependency, ArchExternalImport, ArchGraph, ArchProject, Violation } from './arch-graph.js';
import { checkArchitecture } from './check-architecture.js';

/** A small workspace with one project per scope, wired the way the dependency rule allows. */
const projects: ArchProject[] = [
  { name: '@toolgate/contracts', root: 'libs/contracts', tags: ['scope:contracts'] },
  { name: '@toolgate/gateway', root: 'libs/gateway', tags: ['scope:gateway'] },
  { name: '@toolgate/api', root: 'libs/api', tags: ['scope:api'] },
  { name: '@toolgate/testing', root: 'libs/testing', tags: ['scope:testing'] },
  { name: '@toolgate/tool-calculator', root: 'libs/tools/calculator', tags: ['scope:tool'] },
  { name: '@toolgate/adapter-audit-file', root: 'libs/adapters/audit-file', tags: ['npm:private', 'scope:adapter'] },
  { name: '@toolgate/adapter-kit-audit', root: 'libs/adapters/kit-audit', tags: ['scope:adapter-kit'] },
  { name: '@toolgate/server', root: 'apps/server', tags: ['scope:app'] },
  { name: '@toolgate/cli', root: 'apps/cli', tags: ['scope:app'] },
  { name: '@toolgate/bench', root: 'tools/bench', tags: ['scope:tooling'] },
];

const allowedDependencies: ArchDependency[] = [
  dep('@toolgate/gateway', '@toolgate/contracts', 'libs/gateway/src/gate-pipeline.ts'),
  dep('@toolgate/api', '@toolgate/gateway', 'libs/api/src/app-router.ts'),
  dep('@toolgate/api', '@toolgate/contracts', 'libs/api/src/app-router.ts'),
  dep('@toolgate/testing', '@toolgate/contracts', 'libs/testing/src/audit/audit-sink.contract.ts'),
  dep('@toolgate/tool-calculator', '@toolgate/contracts', 'libs/tools/calculator/src/calculator.tool.ts'),
  dep('@toolgate/adapter-audit-file', '@toolgate/contracts', 'libs/adapters/audit-file/src/file-audit-sink.ts'),
  dep('@toolgate/adapter-audit-file', '@toolgate/adapter-kit-audit', 'libs/adapters/audit-file/src/file-audit-sink.ts'),
  dep('@toolgate/adapter-kit-audit', '@toolgate/contracts', 'libs/adapters/kit-audit/src/frame-codec.ts'),
  dep('@toolgate/adapter-audit-file', '@toolgate/testing', 'libs/adapters/audit-file/src/file-audit-sink.spec.ts'),
  dep('@toolgate/adapter-audit-file', '@toolgate/testing', 'libs/adapters/audit-file/test/recovery.ts'),
  dep('@toolgate/gateway', '@toolgate/testing', 'libs/gateway/src/gate-pipeline.spec.ts'),
  dep('@toolgate/server', '@toolgate/api', 'apps/server/src/main.ts'),
  dep('@toolgate/server', '@toolgate/adapter-audit-file', 'apps/server/src/container.ts'),
  dep('@toolgate/server', '@toolgate/tool-calculator', 'apps/server/src/tools.ts'),
  dep('@toolgate/server', '@toolgate/testing', 'apps/server/test/server.spec.ts'),
  dep('@toolgate/cli', '@toolgate/api', 'apps/cli/src/client.ts'),
  dep('@toolgate/bench', '@toolgate/testing', 'tools/bench/src/audit.bench.ts'),
  dep('@toolgate/bench', '@toolgate/adapter-audit-file', 'tools/bench/src/audit.bench.ts'),
  // Config files import the shared root config by path and belong to no layer.
  dep('@toolgate/contracts', '@toolgate/contracts', 'libs/contracts/src/index.ts', './token.js'),
];

const allowedImports: ArchExternalImport[] = [
  imp('@toolgate/contracts', 'libs/contracts/vitest.config.ts', '../../vitest.shared.ts'),
  imp('@toolgate/gateway', 'libs/gateway/src/input-gate.ts', 'ajv'),
  imp('@toolgate/gateway', 'libs/gateway/src/approval-gate.ts', 'node:crypto'),
  imp('@toolgate/adapter-audit-file', 'libs/adapters/audit-file/src/file-audit-sink.ts', 'node:fs/promises'),
  imp('@toolgate/testing', 'libs/testing/src/postgres/postgres-fixture.ts', 'pg'),
  imp('@toolgate/server', 'apps/server/src/container.ts', 'inversify'),
  imp('@toolgate/server', 'apps/server/src/container.ts', '@inversifyjs/core'),
  imp('@toolgate/cli', 'apps/cli/src/main.ts', 'commander'),
];

function dep(source: string, target: string, file?: string, specifier = target): ArchDependency {
  return file === undefined ? { source, target } : { source, target, file, specifier };
}

function imp(project: string, file: string, module: string): ArchExternalImport {
  return { project, file, module };
}

/** The clean workspace plus the given edges (and projects). */
function withEdges(extra: { projects?: ArchProject[]; dependencies?: ArchDependency[]; externalImports?: ArchExternalImport[] }): ArchGraph {
  return {
    projects: [...projects, ...(extra.projects ?? [])],
    dependencies: [...allowedDependencies, ...(extra.dependencies ?? [])],
    externalImports: [...allowedImports, ...(extra.externalImports ?? [])],
  };
}

/** The one violation the graph must produce; its message must name project, file and import. */
function single(graph: ArchGraph): Violation {
  const violations = checkArchitecture(graph);
  expect(violations, JSON.stringify(violations, null, 2)).toHaveLength(1);
  return violations[0]!;
}

function expectNamed(violation: Violation, ...parts: string[]): void {
  for (const part of parts) expect(violation.message).toContain(part);
}

describe('checkArchitecture', () => {
  it('accepts a workspace wired the way the dependency rule allows', () => {
    expect(checkArchitecture(withEdges({}))).toEqual([]);
  });

  describe('scope tags', () => {
    it('reports an untagged project', () => {
      const v = single(withEdges({ projects: [{ name: '@toolgate/rogue', root: 'libs/rogue', tags: ['npm:private'] }] }));
      expect(v).toMatchObject({ rule: 'scope-tag', project: '@toolgate/rogue' });
      expectNamed(v, '@toolgate/rogue', 'libs/rogue', 'no scope:* tag');
    });

    it('reports a project with two scope tags', () => {
      const v = single(withEdges({ projects: [{ name: '@toolgate/both', root: 'libs/both', tags: ['scope:tool', 'scope:adapter'] }] }));
      expect(v).toMatchObject({ rule: 'scope-tag', project: '@toolgate/both' });
      expectNamed(v, 'scope:tool, scope:adapter', 'exactly one');
    });

    it('reports a scope tag the rule table does not know', () => {
      const v = single(withEdges({ projects: [{ name: '@toolgate/misc', root: 'libs/misc', tags: ['scope:misc'] }] }));
      expect(v).toMatchObject({ rule: 'scope-tag', project: '@toolgate/misc' });
      expectNamed(v, "unknown tag 'scope:misc'");
    });

    it('lets an untagged project depend on nothing, and nothing depend on it', () => {
      const rogue: ArchProject = { name: '@toolgate/rogue', root: 'libs/rogue', tags: [] };
      const violations = checkArchitecture(
        withEdges({
          projects: [rogue],
          dependencies: [
            dep('@toolgate/rogue', '@toolgate/contracts', 'libs/rogue/src/index.ts'),
            dep('@toolgate/server', '@toolgate/rogue', 'apps/server/src/main.ts'),
          ],
        }),
      );
      expect(violations.map((v) => [v.rule, v.project, v.file])).toEqual([
        ['scope-tag', '@toolgate/rogue', undefined],
        ['dependency-direction', '@toolgate/rogue', 'libs/rogue/src/index.ts'],
        ['dependency-direction', '@toolgate/server', 'apps/server/src/main.ts'],
      ]);
    });
  });

  describe('contracts depends on nothing', () => {
    it('reports contracts importing another lib', () => {
      const v = single(withEdges({ dependencies: [dep('@toolgate/contracts', '@toolgate/gateway', 'libs/contracts/src/invocation.ts')] }));
      expect(v).toMatchObject({ rule: 'dependency-direction', project: '@toolgate/contracts', file: 'libs/contracts/src/invocation.ts', target: '@toolgate/gateway' });
      expectNamed(v, '@toolgate/contracts', 'libs/contracts/src/invocation.ts', "'@toolgate/gateway'", 'may depend on nothing');
    });

    it.each([
      ['an npm package', 'ajv'],
      ['an npm package', 'zod/v4'],
      ['a node builtin', 'node:crypto'],
      ['a node builtin', 'crypto'],
      ['a file outside itself', '../../shared/util.js'],
    ])('reports contracts importing %s (%s)', (kind, module) => {
      const v = single(withEdges({ externalImports: [imp('@toolgate/contracts', 'libs/contracts/src/json.ts', module)] }));
      expect(v).toMatchObject({ rule: 'contracts-external', project: '@toolgate/contracts', file: 'libs/contracts/src/json.ts', target: module });
      expectNamed(v, 'libs/contracts/src/json.ts', `'${module}'`, kind);
    });

    it('holds for its test files too, which may import only the test runner', () => {
      const violations = checkArchitecture(
        withEdges({
          dependencies: [dep('@toolgate/contracts', '@toolgate/testing', 'libs/contracts/src/token.spec.ts')],
          externalImports: [
            imp('@toolgate/contracts', 'libs/contracts/src/token.spec.ts', 'vitest'),
            imp('@toolgate/contracts', 'libs/contracts/src/token.spec.ts', 'node:fs'),
          ],
        }),
      );
      expect(violations.map((v) => [v.rule, v.target])).toEqual([
        ['dependency-direction', '@toolgate/testing'],
        ['contracts-external', 'node:fs'],
      ]);
    });

    it('does not let a source file of contracts import the test runner', () => {
      const v = single(withEdges({ externalImports: [imp('@toolgate/contracts', 'libs/contracts/src/json.ts', 'vitest')] }));
      expect(v).toMatchObject({ rule: 'contracts-external', target: 'vitest' });
    });
  });

  describe('tools, adapters and testing depend only on contracts', () => {
    it('reports an adapter importing the gateway', () => {
      const file = 'libs/adapters/audit-file/src/file-audit-sink.ts';
      const v = single(withEdges({ dependencies: [dep('@toolgate/adapter-audit-file', '@toolgate/gateway', file)] }));
      expect(v).toMatchObject({ rule: 'dependency-direction', project: '@toolgate/adapter-audit-file', file, target: '@toolgate/gateway' });
      expectNamed(v, '@toolgate/adapter-audit-file', file, "'@toolgate/gateway'", 'scope:adapter may depend only on scope:contracts');
    });

    it("reports an adapter's source file importing testing, and says its tests may", () => {
      const file = 'libs/adapters/audit-file/src/file-audit-sink.ts';
      const v = single(withEdges({ dependencies: [dep('@toolgate/adapter-audit-file', '@toolgate/testing', file)] }));
      expect(v).toMatchObject({ rule: 'dependency-direction', file, target: '@toolgate/testing' });
      expectNamed(v, file, "'@toolgate/testing'", '(test files may use it)');
    });

    it("allows the adapter's spec file and test/ files to import testing", () => {
      const graph = withEdges({
        dependencies: [
          dep('@toolgate/adapter-audit-file', '@toolgate/testing', 'libs/adapters/audit-file/src/rotation.test.ts'),
          dep('@toolgate/adapter-audit-file', '@toolgate/testing', 'libs/adapters/audit-file/test/helpers/torn-frame.ts'),
        ],
      });
      expect(checkArchitecture(graph)).toEqual([]);
    });

    it('reports a tool importing an adapter, and testing importing the gateway', () => {
      const violations = checkArchitecture(
        withEdges({
          dependencies: [
            dep('@toolgate/tool-calculator', '@toolgate/adapter-audit-file', 'libs/tools/calculator/src/calculator.tool.ts'),
            dep('@toolgate/testing', '@toolgate/gateway', 'libs/testing/src/audit/audit-sink.contract.ts'),
          ],
        }),
      );
      expect(violations.map((v) => [v.rule, v.project, v.target])).toEqual([
        ['dependency-direction', '@toolgate/testing', '@toolgate/gateway'],
        ['dependency-direction', '@toolgate/tool-calculator', '@toolgate/adapter-audit-file'],
      ]);
    });

    it('judges a project-level edge that no file explains as a source-file edge', () => {
      const v = single(withEdges({ dependencies: [dep('@toolgate/adapter-audit-file', '@toolgate/testing')] }));
      expect(v).toMatchObject({ rule: 'dependency-direction', project: '@toolgate/adapter-audit-file', target: '@toolgate/testing' });
      expect(v.file).toBeUndefined();
      expectNamed(v, 'project-level edge of the Nx graph');
    });
  });

  describe('gateway and api', () => {
    it('reports the gateway importing the api, and the api importing an adapter', () => {
      const violations = checkArchitecture(
        withEdges({
          dependencies: [
            dep('@toolgate/gateway', '@toolgate/api', 'libs/gateway/src/gate-pipeline.ts'),
            dep('@toolgate/api', '@toolgate/adapter-audit-file', 'libs/api/src/app-router.ts'),
          ],
        }),
      );
      expect(violations.map((v) => [v.rule, v.project, v.file, v.target])).toEqual([
        ['dependency-direction', '@toolgate/api', 'libs/api/src/app-router.ts', '@toolgate/adapter-audit-file'],
        ['dependency-direction', '@toolgate/gateway', 'libs/gateway/src/gate-pipeline.ts', '@toolgate/api'],
      ]);
      expectNamed(violations[0]!, 'scope:api may depend only on scope:contracts, scope:gateway');
    });
  });

  describe('apps', () => {
    it('reports an app importing another app, type-only imports included', () => {
      const file = 'apps/cli/src/client.ts';
      const v = single(withEdges({ dependencies: [dep('@toolgate/cli', '@toolgate/server', file)] }));
      expect(v).toMatchObject({ rule: 'app-to-app', project: '@toolgate/cli', file, target: '@toolgate/server' });
      expectNamed(v, '@toolgate/cli', file, "'@toolgate/server'", 'AppRouter from @toolgate/api');
    });

    it("reports an app's source importing testing", () => {
      const v = single(withEdges({ dependencies: [dep('@toolgate/server', '@toolgate/testing', 'apps/server/src/main.ts')] }));
      expect(v).toMatchObject({ rule: 'dependency-direction', project: '@toolgate/server', target: '@toolgate/testing' });
    });
  });

  describe('inversify stays in the composition root', () => {
    it('reports inversify imported in libs/gateway', () => {
      const file = 'libs/gateway/src/gate-pipeline.ts';
      const v = single(withEdges({ externalImports: [imp('@toolgate/gateway', file, 'inversify')] }));
      expect(v).toMatchObject({ rule: 'inversify-outside-composition-root', project: '@toolgate/gateway', file, target: 'inversify' });
      expectNamed(v, '@toolgate/gateway', file, "'inversify'", 'apps/server');
    });

    it('reports the @inversifyjs packages, another app and test files alike', () => {
      const violations = checkArchitecture(
        withEdges({
          externalImports: [
            imp('@toolgate/adapter-audit-file', 'libs/adapters/audit-file/src/file-audit-sink.spec.ts', 'inversify'),
            imp('@toolgate/cli', 'apps/cli/src/main.ts', '@inversifyjs/container'),
            imp('@toolgate/api', 'libs/api/vitest.config.ts', 'inversify'),
          ],
        }),
      );
      expect(violations.map((v) => [v.rule, v.project, v.target])).toEqual([
        ['inversify-outside-composition-root', '@toolgate/adapter-audit-file', 'inversify'],
        ['inversify-outside-composition-root', '@toolgate/api', 'inversify'],
        ['inversify-outside-composition-root', '@toolgate/cli', '@inversifyjs/container'],
      ]);
    });
  });

  describe('adapter kits are shared by adapters only', () => {
    it.each([
      ['a tool', '@toolgate/tool-calculator', 'libs/tools/calculator/src/calculator.tool.ts', 'scope:tool may depend only on scope:contracts'],
      ['the gateway', '@toolgate/gateway', 'libs/gateway/src/gate-pipeline.ts', 'scope:gateway may depend only on scope:contracts'],
      ['an app', '@toolgate/server', 'apps/server/src/container.ts', 'scope:app may depend only on'],
    ])('reports %s importing an adapter kit', (_what, source, file, message) => {
      const v = single(withEdges({ dependencies: [dep(source, '@toolgate/adapter-kit-audit', file)] }));
      expect(v).toMatchObject({ rule: 'dependency-direction', target: '@toolgate/adapter-kit-audit' });
      expect(v.message).toContain(message);
    });

    it('reports a kit importing an adapter', () => {
      const file = 'libs/adapters/kit-audit/src/frame-codec.ts';
      const v = single(withEdges({ dependencies: [dep('@toolgate/adapter-kit-audit', '@toolgate/adapter-audit-file', file)] }));
      expect(v.message).toContain('scope:adapter-kit may depend only on scope:contracts');
    });
  });

  describe('tooling', () => {
    it('reports any project depending on workspace tooling', () => {
      const violations = checkArchitecture(
        withEdges({
          dependencies: [
            dep('@toolgate/server', '@toolgate/bench', 'apps/server/src/main.ts'),
            dep('@toolgate/gateway', '@toolgate/bench', 'libs/gateway/src/gate-pipeline.spec.ts'),
          ],
        }),
      );
      expect(violations.map((v) => [v.rule, v.project, v.target])).toEqual([
        ['tooling-dependency', '@toolgate/gateway', '@toolgate/bench'],
        ['tooling-dependency', '@toolgate/server', '@toolgate/bench'],
      ]);
    });
  });

  describe('imports by path', () => {
    it('reports a relative import into another lib and a deep package import', () => {
      const violations = checkArchitecture(
        withEdges({
          dependencies: [
            dep('@toolgate/api', '@toolgate/gateway', 'libs/api/src/rest.ts', '../../gateway/src/gate-pipeline.js'),
            dep('@toolgate/server', '@toolgate/api', 'apps/server/src/main.ts', '@toolgate/api/src/app-router.js'),
          ],
        }),
      );
      expect(violations.map((v) => [v.rule, v.project, v.target])).toEqual([
        ['deep-import', '@toolgate/api', '@toolgate/gateway'],
        ['deep-import', '@toolgate/server', '@toolgate/api'],
      ]);
      expectNamed(violations[0]!, "'../../gateway/src/gate-pipeline.js'", "import it as '@toolgate/gateway'");
    });

    it('reports a relative import that leaves its project for a loose file', () => {
      const v = single(withEdges({ externalImports: [imp('@toolgate/gateway', 'libs/gateway/src/policy.ts', '../../../scripts/util.js')] }));
      expect(v).toMatchObject({ rule: 'relative-escape', project: '@toolgate/gateway', file: 'libs/gateway/src/policy.ts' });
    });
  });

  it('reports an edge to a project the graph does not list', () => {
    const v = single(withEdges({ dependencies: [dep('@toolgate/gateway', '@toolgate/ghost', 'libs/gateway/src/x.ts')] }));
    expect(v).toMatchObject({ rule: 'unknown-project', project: '@toolgate/gateway', target: '@toolgate/ghost' });
  });
});
