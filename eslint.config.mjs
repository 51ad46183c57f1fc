import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/**
 * The dependency rule of the hexagonal layout, enforced on every import. Each project carries
 * exactly one `scope:*` tag; there is deliberately no `*` → `*` constraint, so an untagged
 * project can depend on nothing.
 */
const depConstraints = [
  { sourceTag: 'scope:contracts', onlyDependOnLibsWithTags: [], allowedExternalImports: [] },
  { sourceTag: 'scope:gateway', onlyDependOnLibsWithTags: ['scope:contracts'] },
  { sourceTag: 'scope:api', onlyDependOnLibsWithTags: ['scope:contracts', 'scope:gateway'] },
  { sourceTag: 'scope:tool', onlyDependOnLibsWithTags: ['scope:contracts'] },
  { sourceTag: 'scope:adapter', onlyDependOnLibsWithTags: ['scope:contracts', 'scope:adapter-kit'] },
  { sourceTag: 'scope:adapter-kit', onlyDependOnLibsWithTags: ['scope:contracts'] },
  { sourceTag: 'scope:testing', onlyDependOnLibsWithTags: ['scope:contracts'] },
  {
    sourceTag: 'scope:app',
    onlyDependOnLibsWithTags: ['scope:contracts', 'scope:gateway', 'scope:api', 'scope:tool', 'scope:adapter'],
  },
  {
    sourceTag: 'scope:tooling',
    onlyDependOnLibsWithTags: ['scope:contracts', 'scope:gateway', 'scope:api', 'scope:tool', 'scope:adapter', 'scope:adapter-kit', 'scope:testing'],
  },
];

/**
 * Test files may also use the shared contract suites and fixtures of `libs/testing`; the core's
 * tests (gateway, api) may also wire real adapters and tools. Contracts' tests may import only
 * the test runner. `tools/architecture` holds the same table and a test keeps them equal.
 */
const testDepConstraints = depConstraints.map((c) => {
  if (c.sourceTag === 'scope:contracts') return { ...c, allowedExternalImports: ['vitest'] };
  const extra = ['scope:gateway', 'scope:api'].includes(c.sourceTag) ? ['scope:testing', 'scope:adapter', 'scope:tool'] : ['scope:testing'];
  return { ...c, onlyDependOnLibsWithTags: [...new Set([...c.onlyDependOnLibsWithTags, ...extra])] };
});

const boundaries = (constraints) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    allowCircularSelfDependency: false,
    banTransitiveDependencies: false,
    depConstraints: constraints,
  },
];

export default [
  {
    ignores: ['**/node_modules/**', '**/dist/**', '.nx/**', '.toolgate/**', 'coverage/**', '**/fixtures/**', 'tools/workspace/files/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { plugins: { '@nx': nx } },
  {
    files: ['**/*.ts', '**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@nx/enforce-module-boundaries': boundaries(depConstraints),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'inversify', message: 'Only apps/server (the composition root) may use inversify.' }] },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/test/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(testDepConstraints) },
  },
  {
    // The workspace generator is CommonJS so Nx can load it without a build step.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Config files import the shared root config by path; they are not part of any layer.
    files: ['**/vitest.config.ts'],
    rules: { '@nx/enforce-module-boundaries': 'off' },
  },
  {
    files: ['apps/server/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['libs/contracts/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-syntax': ['error', { selector: 'ImportDeclaration[source.value=/^[^.]/]', message: 'contracts imports nothing outside itself.' }] },
  },
  {
    files: ['libs/contracts/**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': ['error', { selector: 'ImportDeclaration[source.value=/^[^.]/][source.value!="vitest"]', message: "contracts' tests import only the test runner." }],
    },
  },
];
