import { createTestDatabase, type TestDatabase } from '@toolgate/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PgStores } from '../src/index.js';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
let db: TestDatabase;
let stores: PgStores;
beforeAll(async () => {
  db = await createTestDatabase(inject('toolgatePostgresUrl'));
  stores = await PgStores.open(db.url, { poolSize: 2 });
});
afterAll(async () => {
  await stores?.close();
  await db?.drop();
});

/** A row written around the store, as a hand edit or an older or buggy writer would. */
async function insert(row: Partial<{ tool: string; digest: string; definition: string; pinned_at: number; pinned_by: string }>): Promise<void> {
  const r = { tool: 'files__read_file', digest: DIGEST, definition: '{}', pinned_at: 0, pinned_by: 'first-seen', ...row };
  await stores.pool.query('INSERT INTO tool_pins (tool, provenance, digest, definition, pinned_at, pinned_by) VALUES ($1, $2, $3, $4, $5, $6)', [
    r.tool,
    'mcp:files',
    r.digest,
    r.definition,
    r.pinned_at,
    r.pinned_by,
  ]);
}

describe('the tool_pins table refuses rows written around the store', () => {
  it.each([
    ['an upper-case digest', { digest: DIGEST.toUpperCase() }],
    ['a short digest', { digest: DIGEST.slice(0, -1) }],
    ['a digest with a trailing newline', { digest: `${DIGEST}\n` }],
    ['a non-hex digest', { digest: `sha256:${'g'.repeat(64)}` }],
    ['a definition over 256 KiB of UTF-8', { definition: `"${'é'.repeat(128 * 1024)}"` }],
    ['a negative pinned_at', { pinned_at: -1 }],
    ['an empty pinned_by', { pinned_by: '' }],
    ['an empty tool', { tool: '' }],
    ['a tool of 129 characters', { tool: 'a'.repeat(129) }],
  ])('%s', async (_, row) => {
    await expect(insert(row)).rejects.toThrow(/violates check constraint/);
    expect((await stores.pool.query('SELECT count(*)::int AS n FROM tool_pins')).rows).toEqual([{ n: 0 }]);
  });

  it('keeps a row that keeps the rules, and lists it', async () => {
    await insert({});
    expect((await stores.pins.list()).map((pin) => pin.tool)).toEqual(['files__read_file']);
  });
});
