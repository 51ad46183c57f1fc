import type { ArchDependency, ArchExternalImport, ArchGraph, ArchProject, Violation } from './arch-graph.js';
import {
  ALLOWED_SCOPES,
  COMPOSITION_ROOT,
  SCOPES,
  TEST_RUNNER_MODULES,
  allowedScopesForTests,
  isBuiltinModule,
  isConfigFile,
  isContainerModule,
  isRelativeSpecifier,
  isTestFile,
  type Scope,
} from './rules.js';

/**
 * Checks a workspace against the dependency rule of the hexagonal layout and returns every
 * violation, in a stable order. Pure: the same graph gives the same answer, so fixture graphs
 * prove each rule and the real workspace is checked by the same code.
 */
export function checkArchitecture(graph: ArchGraph): Violation[] {
  const byName = new Map(graph.projects.map((p) => [p.name, p]));
  const scopes = new Map<string, Scope>();
  const violations: Violation[] = [];

  for (const project of graph.projects) {
    const found = project.tags.filter((t) => t.startsWith('scope:'));
    const scope = found.length === 1 ? toScope(found[0]!) : undefined;
    if (scope) {
      scopes.set(project.name, scope);
      continue;
    }
    const why =
      found.length === 0
        ? 'has no scope:* tag (an untagged project may depend on nothing and nothing may depend on it)'
        : found.length > 1
          ? `has ${found.length} scope tags (${found.join(', ')}); it must have exactly one`
          : `has the unknown tag '${found[0]}'; known scopes are ${SCOPES.map((s) => `scope:${s}`).join(', ')}`;
    violations.push({ rule: 'scope-tag', project: project.name, message: `${project.name} (${project.root}) ${why}` });
  }

  for (const dep of graph.dependencies) {
    if (dep.source === dep.target) continue;
    const source = byName.get(dep.source);
    const target = byName.get(dep.target);
    if (!source || !target) {
      const missing = source ? dep.target : dep.source;
      violations.push({
        rule: 'unknown-project',
        project: dep.source,
        ...fileOf(dep),
        target: dep.target,
        message: `${describeEdge(dep)}: '${missing}' is not a project of the workspace`,
      });
      continue;
    }
    violations.push(...checkEdge(dep, source, target, scopes));
  }

  for (const imp of graph.externalImports) {
    const project = byName.get(imp.project);
    if (!project) {
      violations.push({
        rule: 'unknown-project',
        project: imp.project,
        ...fileOf(imp),
        target: imp.module,
        message: `${describeImport(imp)}: '${imp.project}' is not a project of the workspace`,
      });
      continue;
    }
    violations.push(...checkExternalImport(imp, project, scopes.get(project.name)));
  }

  return violations.sort(byPosition);
}

function checkEdge(dep: ArchDependency, source: ArchProject, target: ArchProject, scopes: Map<string, Scope>): Violation[] {
  const found: Violation[] = [];
  const base = { project: source.name, ...fileOf(dep), target: target.name };
  const edge = describeEdge(dep);

  // A lib is reached through its package entry point, so its inside can change freely.
  if (dep.specifier && (isRelativeSpecifier(dep.specifier) || dep.specifier.startsWith(`${target.name}/`))) {
    found.push({ ...base, rule: 'deep-import', message: `${edge} reaches inside ${target.name}; import it as '${target.name}'` });
  }
  if (dep.file && isConfigFile(dep.file)) return found;

  const sourceScope = scopes.get(source.name);
  const targetScope = scopes.get(target.name);
  if (!sourceScope) {
    found.push({ ...base, rule: 'dependency-direction', message: `${edge}: ${source.name} has no valid scope tag, so it may depend on nothing` });
    return found;
  }
  if (!targetScope) {
    found.push({ ...base, rule: 'dependency-direction', message: `${edge}: ${target.name} has no valid scope tag, so nothing may depend on it` });
    return found;
  }
  const inTest = dep.file !== undefined && isTestFile(dep.file, source.root);
  const allowed = inTest ? allowedScopesForTests(sourceScope) : ALLOWED_SCOPES[sourceScope];
  if (allowed.includes(targetScope)) return found;

  const rule = sourceScope === 'app' && targetScope === 'app' ? 'app-to-app' : targetScope === 'tooling' ? 'tooling-dependency' : 'dependency-direction';
  const may = allowed.length === 0 ? 'may depend on nothing' : `may depend only on ${allowed.map((s) => `scope:${s}`).join(', ')}`;
  const where = inTest ? 'test files of ' : '';
  const advice =
    rule === 'app-to-app'
      ? '; apps share code and types through libs (e.g. AppRouter from @toolgate/api)'
      : !inTest && allowedScopesForTests(sourceScope).includes(targetScope)
        ? ' (test files may use it)'
        : '';
  found.push({ ...base, rule, message: `${edge} (scope:${targetScope}): ${where}scope:${sourceScope} ${may}${advice}` });
  return found;
}

function checkExternalImport(imp: ArchExternalImport, project: ArchProject, scope: Scope | undefined): Violation[] {
  const found: Violation[] = [];
  const base = { project: project.name, ...fileOf(imp), target: imp.module };
  const what = describeImport(imp);

  if (isContainerModule(imp.module) && project.root !== COMPOSITION_ROOT) {
    found.push({
      ...base,
      rule: 'inversify-outside-composition-root',
      message: `${what}: only ${COMPOSITION_ROOT} (the composition root) may use the DI container; take dependencies as constructor parameters`,
    });
  }
  if (imp.file && isConfigFile(imp.file)) return found;

  if (scope === 'contracts') {
    if (imp.file && isTestFile(imp.file, project.root) && TEST_RUNNER_MODULES.includes(imp.module)) return found;
    const kind = isRelativeSpecifier(imp.module) ? 'a file outside itself' : isBuiltinModule(imp.module) ? 'a node builtin' : 'an npm package';
    found.push({ ...base, rule: 'contracts-external', message: `${what}: scope:contracts imports nothing, but this is ${kind}` });
  } else if (isRelativeSpecifier(imp.module)) {
    found.push({ ...base, rule: 'relative-escape', message: `${what}: a relative import leaves ${project.root}; share the code through a lib` });
  }
  return found;
}

function toScope(tag: string): Scope | undefined {
  const name = tag.slice('scope:'.length);
  return (SCOPES as readonly string[]).includes(name) ? (name as Scope) : undefined;
}

function fileOf(edge: { file?: string }): { file?: string } {
  return edge.file === undefined ? {} : { file: edge.file };
}

function describeEdge(dep: ArchDependency): string {
  const where = dep.file ?? '(project-level edge of the Nx graph)';
  const how = dep.specifier ? `imports '${dep.specifier}'` : `depends on ${dep.target}`;
  return `${dep.source}: ${where} ${how}${dep.specifier && dep.specifier !== dep.target ? ` (${dep.target})` : ''}`;
}

function describeImport(imp: ArchExternalImport): string {
  return `${imp.project}: ${imp.file ?? '(project-level edge of the Nx graph)'} imports '${imp.module}'`;
}

function byPosition(a: Violation, b: Violation): number {
  return (
    a.project.localeCompare(b.project) ||
    (a.file ?? '').localeCompare(b.file ?? '') ||
    (a.target ?? '').localeCompare(b.target ?? '') ||
    a.rule.localeCompare(b.rule)
  );
}
