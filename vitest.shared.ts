import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** Where each project's run leaves a JSON report, for the one-line summary of `npm test`. */
const RESULTS_DIR = fileURLToPath(new URL('./.test-results/', import.meta.url));

/**
 * The one vitest setup every project extends, so each lib's config is a single line and the
 * suite behaves the same under `nx run-many -t test` and in an editor. Nx runs each project as
 * its own vitest root, so this is a whole config, reporters included.
 */
export function toolgateProject(name: string, overrides: { testTimeout?: number; globalSetup?: string[] } = {}) {
  return defineConfig({
    test: {
      name,
      include: ['src/**/*.spec.ts', 'test/**/*.spec.ts'],
      environment: 'node',
      testTimeout: overrides.testTimeout ?? 20_000,
      hookTimeout: 120_000,
      reporters: ['default', ['json', { outputFile: `${RESULTS_DIR}${name}.json` }]],
      ...(overrides.globalSetup ? { globalSetup: overrides.globalSetup } : {}),
    },
  });
}
