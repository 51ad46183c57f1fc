import { defineProject } from 'vitest/config';

/**
 * The one vitest setup every project extends, so each lib's config is a single line and the
 * suite behaves the same under `nx run-many -t test` and in an editor.
 */
export function toolgateProject(name: string, overrides: { testTimeout?: number; globalSetup?: string[] } = {}) {
  return defineProject({
    test: {
      name,
      include: ['src/**/*.spec.ts', 'test/**/*.spec.ts'],
      environment: 'node',
      testTimeout: overrides.testTimeout ?? 20_000,
      hookTimeout: 120_000,
      ...(overrides.globalSetup ? { globalSetup: overrides.globalSetup } : {}),
    },
  });
}
