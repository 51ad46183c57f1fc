import { builtinModules } from 'node:module';

/** The layers of the hexagon. Every project carries exactly one of them as `scope:<name>`. */
export const SCOPES = ['contracts', 'gateway', 'api', 'tool', 'adapter', 'adapter-kit', 'testing', 'app', 'tooling'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The dependency rule: the scopes a project's source files may depend on. It is the same table
 * as the `depConstraints` of `eslint.config.mjs`; a test holds the two equal. An `adapter-kit`
 * holds code that the adapters of one family share (ADR 0040, ADR 0037); it depends only on contracts,
 * and nothing but adapters (and tooling) may use it. Nothing lists
 * `tooling`, so no project may depend on workspace tooling; only `tooling` lists `testing`, so
 * no shipped code depends on test fixtures.
 */
export const ALLOWED_SCOPES: Readonly<Record<Scope, readonly Scope[]>> = {
  contracts: [],
  gateway: ['contracts'],
  api: ['contracts', 'gateway'],
  tool: ['contracts'],
  adapter: ['contracts', 'adapter-kit'],
  'adapter-kit': ['contracts'],
  testing: ['contracts'],
  app: ['contracts', 'gateway', 'api', 'tool', 'adapter'],
  tooling: ['contracts', 'gateway', 'api', 'tool', 'adapter', 'adapter-kit', 'testing'],
};

/**
 * What test files may use besides `ALLOWED_SCOPES`: the shared contract suites and fixtures.
 * The core's tests (gateway, api) may also wire real adapters and tools: they are integration
 * tests of the pipeline, and its source still never sees them. Contracts is absent: it depends
 * on nothing, not even in its tests (which may import only the test runner, see
 * `TEST_RUNNER_MODULES`).
 */
export function allowedScopesForTests(scope: Scope): readonly Scope[] {
  const allowed = ALLOWED_SCOPES[scope];
  if (scope === 'contracts') return allowed;
  const extra: Scope[] = scope === 'gateway' || scope === 'api' ? ['testing', 'adapter', 'tool'] : ['testing'];
  return [...allowed, ...extra.filter((s) => !allowed.includes(s))];
}

/** The only package a test file of `scope:contracts` may import. */
export const TEST_RUNNER_MODULES: readonly string[] = ['vitest'];

/** The composition root: the only project that may know the DI container. */
export const COMPOSITION_ROOT = 'apps/server';

/** inversify and the `@inversifyjs/*` packages it is built from. */
export function isContainerModule(specifier: string): boolean {
  return /^inversify(\/|$)/.test(specifier) || specifier.startsWith('@inversifyjs/');
}

/** `*.spec.ts`, `*.test.ts` and anything under a `test/` directory of the project. */
export function isTestFile(file: string, projectRoot: string): boolean {
  const rel = relativeToRoot(file, projectRoot);
  return /(^|\/)test\//.test(rel) || /\.(spec|test)\.[cm]?[jt]sx?$/.test(rel);
}

/**
 * Tool configuration files (`vitest.config.ts` …) import the shared root config by path and
 * belong to no layer, so the direction rules skip them, as the ESLint config does. The
 * inversify rule still applies to them.
 */
export function isConfigFile(file: string): boolean {
  const base = file.slice(file.lastIndexOf('/') + 1);
  return /^(vitest|vite|vitest\.workspace|eslint)\.config\.[cm]?[jt]s$/.test(base);
}

export function isRelativeSpecifier(specifier: string): boolean {
  return specifier.startsWith('.') || specifier.startsWith('/');
}

export function isBuiltinModule(specifier: string): boolean {
  if (specifier.startsWith('node:')) return true;
  const first = specifier.split('/')[0] ?? specifier;
  return builtinModules.includes(first);
}

/** The npm package a bare specifier names: `@scope/name` or `name`, without a subpath. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

function relativeToRoot(file: string, projectRoot: string): string {
  const prefix = projectRoot.endsWith('/') ? projectRoot : `${projectRoot}/`;
  return file.startsWith(prefix) ? file.slice(prefix.length) : file;
}
