import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres-fixture.js';

declare module 'vitest' {
  export interface ProvidedContext {
    toolgatePostgresUrl: string;
  }
}

/**
 * Vitest global setup: one PostgreSQL server per test project, shared by its files through
 * `inject('toolgatePostgresUrl')`. Each file then creates its own database.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide('toolgatePostgresUrl', server.url);
  return () => server.stop();
}
