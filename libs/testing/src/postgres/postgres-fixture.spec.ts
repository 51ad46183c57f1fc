import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './postgres-fixture.js';

describe('postgres fixture', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(inject('toolgatePostgresUrl'));
  });
  afterAll(async () => db?.drop());

  it('serves a real PostgreSQL that runs SQL', async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query<{ v: string }>('SELECT version() AS v');
    await client.end();
    expect(rows[0]?.v).toMatch(/^PostgreSQL \d+/);
  });

  it('gives each caller its own database', async () => {
    const other = await createTestDatabase(inject('toolgatePostgresUrl'));
    expect(other.url).not.toBe(db.url);
    await other.drop();
  });
});
