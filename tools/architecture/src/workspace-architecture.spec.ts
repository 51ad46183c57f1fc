import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { workspaceRoot } from '@nx/devkit';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ArchGraph } from './arch-graph.js';
import { checkArchitecture } from './check-architecture.js';
import { ALLOWED_SCOPES, SCOPES, allowedScopesForTests, type Scope } from './rules.js';
import { readWorkspaceGraph } from './workspace-graph.js';

/**
 * The dependency rule, checked on this checkout. These tests are part of `nx run-many -t test`,
 * so a forbidden import fails the build even where lint is not run.
 */
let graph: ArchGraph;
beforeAll(async () => {
  // Read once: building the Nx graph is the slow part of this suite.
  graph = await readWorkspaceGraph();
}, 60_000);

describe('the workspace', () => {
  it('keeps the dependency rule', () => {
    const violations = checkArchitecture(graph);
    expect(violations.map((v) => v.message).join('\n')).toBe('');
  });

  it('is seen whole: every workspace package is an Nx project of the graph', () => {
    const roots = new Set(graph.projects.map((p) => p.root));
    const packages = ['apps', 'libs', 'libs/tools', 'libs/adapters', 'tools'].flatMap((dir) =>
      readdirSync(path.join(workspaceRoot, dir), { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && existsSync(path.join(workspaceRoot, dir, entry.name, 'package.json')))
        .map((entry) => `${dir}/${entry.name}`),
    );
    expect(packages).toContain('libs/contracts');
    expect(packages.filter((root) => !roots.has(root))).toEqual([]);
  });

  it('is read file by file: the scanner sees the shared vitest config import of contracts', () => {
    // A real import that every checkout has, proving files are read and attributed (config files are exempt from the rule).
    expect(graph.externalImports).toContainEqual({
      project: '@toolgate/contracts',
      file: 'libs/contracts/vitest.config.ts',
      module: '../../vitest.shared.ts',
    });
  });
});

interface DepConstraint {
  sourceTag: string;
  onlyDependOnLibsWithTags?: string[];
  allowedExternalImports?: string[];
}
interface FlatConfig {
  files?: string[];
  rules?: Record<string, unknown>;
}

describe('eslint.config.mjs', () => {
  let configs: FlatConfig[];
  let tagsInUse: string[];
  beforeAll(async () => {
    const module = (await import(pathToFileURL(path.join(workspaceRoot, 'eslint.config.mjs')).href)) as { default: FlatConfig[] };
    configs = module.default;
    tagsInUse = [...new Set(graph.projects.flatMap((p) => p.tags.filter((t) => t.startsWith('scope:'))))].sort();
  }, 60_000);

  /** The module-boundary rule's constraints of the config block that applies to `files`. */
  function constraintsFor(files: string): DepConstraint[] {
    const block = configs.find((c) => c.files?.includes(files) && c.rules?.['@nx/enforce-module-boundaries']);
    const rule = block?.rules?.['@nx/enforce-module-boundaries'] as [string, { depConstraints: DepConstraint[] }] | undefined;
    if (!rule) throw new Error(`no @nx/enforce-module-boundaries block for ${files}`);
    expect(rule[0]).toBe('error');
    return rule[1].depConstraints;
  }

  function asTable(constraints: DepConstraint[]): Record<string, string[]> {
    return Object.fromEntries(constraints.map((c) => [c.sourceTag, [...new Set(c.onlyDependOnLibsWithTags ?? [])].sort()]));
  }

  function expected(allowed: (scope: Scope) => readonly Scope[]): Record<string, string[]> {
    return Object.fromEntries(SCOPES.map((s) => [`scope:${s}`, allowed(s).map((t) => `scope:${t}`).sort()]));
  }

  it('has no * → * constraint that would let anything through', () => {
    const all = configs.flatMap((c) => {
      const rule = c.rules?.['@nx/enforce-module-boundaries'];
      return Array.isArray(rule) && rule[1] ? (rule[1] as { depConstraints: DepConstraint[] }).depConstraints : [];
    });
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((c) => c.sourceTag === '*' || c.onlyDependOnLibsWithTags?.includes('*'))).toEqual([]);
  });

  it('constrains every scope tag in use, in source and in test files', () => {
    expect(tagsInUse.length).toBeGreaterThan(0);
    for (const files of ['**/*.ts', '**/*.spec.ts']) {
      const constrained = new Set(constraintsFor(files).map((c) => c.sourceTag));
      expect(tagsInUse.filter((t) => !constrained.has(t)), `unconstrained tags for ${files}`).toEqual([]);
    }
  });

  it('states the same dependency rule as the architecture check', () => {
    expect(asTable(constraintsFor('**/*.ts'))).toEqual(expected((s) => ALLOWED_SCOPES[s]));
    expect(asTable(constraintsFor('**/*.spec.ts'))).toEqual(expected(allowedScopesForTests));
    expect(constraintsFor('**/*.ts').find((c) => c.sourceTag === 'scope:contracts')?.allowedExternalImports).toEqual([]);
  });

  it('bans inversify everywhere but apps/server', () => {
    const main = configs.find((c) => c.files?.includes('**/*.ts') && c.rules?.['no-restricted-imports']);
    expect(JSON.stringify(main?.rules?.['no-restricted-imports'])).toContain('"name":"inversify"');
    const lifted = configs.filter((c) => c.rules?.['no-restricted-imports'] === 'off').map((c) => c.files);
    expect(lifted).toEqual([['apps/server/**/*.ts']]);
  });
});
