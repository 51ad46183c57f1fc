import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import type { Reporter } from 'vitest/reporters';

/** Where each project's run leaves a JSON report, for the one-line summary of `npm test`. */
const RESULTS_DIR = fileURLToPath(new URL('./.test-results/', import.meta.url));

/**
 * Keeps the errors vitest raised outside any test (an unhandled rejection, an 'error' event
 * nobody listened to), which fail a run without failing a test and which the JSON report leaves
 * out, so the summary at the end of `npm test` can print them (tools/test-summary.mjs).
 */
function unhandledErrorsReporter(name: string): Reporter {
  return {
    onTestRunEnd(_modules, unhandledErrors) {
      const errors = unhandledErrors.map((error) => ({
        name: error.name ?? 'Error',
        message: String(error.message ?? ''),
        stack: String(error.stack ?? '').split('\n').slice(0, 8).join('\n'),
      }));
      // The JSON reporter makes the directory too, but reporters end in no set order: a run in a
      // fresh tree (the tool generator's test) found it missing.
      mkdirSync(RESULTS_DIR, { recursive: true });
      writeFileSync(`${RESULTS_DIR}${name}.unhandled`, JSON.stringify(errors));
    },
  };
}

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
      reporters: ['default', ['json', { outputFile: `${RESULTS_DIR}${name}.json` }], unhandledErrorsReporter(name)],
      ...(overrides.globalSetup ? { globalSetup: overrides.globalSetup } : {}),
    },
  });
}
