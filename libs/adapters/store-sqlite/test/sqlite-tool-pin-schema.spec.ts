import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStores, type SqliteStores } from '../src/index.js';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
let stores: SqliteStores;
beforeEach(() => {
  stores = openSqliteStores(':memory:');
});
afterEach(() => stores.close());

/** A row written around the store, as a hand edit or an older or buggy writer would. */
function insert(row: Partial<{ tool: string; digest: string; definition: string; pinned_at: number; pinned_by: string }>): void {
  stores.db
    .prepare('INSERT INTO tool_pins (tool, provenance, digest, definition, pinned_at, pinned_by) VALUES (@tool, @provenance, @digest, @definition, @pinned_at, @pinned_by)')
    .run({ tool: 'files__read_file', provenance: 'mcp:files', digest: DIGEST, definition: '{}', pinned_at: 0, pinned_by: 'first-seen', ...row });
}

describe('the tool_pins table refuses rows written around the store', () => {
  it.each([
    ['an upper-case digest', { digest: DIGEST.toUpperCase() }],
    ['a short digest', { digest: DIGEST.slice(0, -1) }],
    ['a digest without its prefix', { digest: `sha999:${'ab'.repeat(32)}` }],
    ['a non-hex digest', { digest: `sha256:${'g'.repeat(64)}` }],
    ['a definition over 256 KiB of UTF-8', { definition: `"${'é'.repeat(128 * 1024)}"` }],
    ['a negative pinned_at', { pinned_at: -1 }],
    ['an empty pinned_by', { pinned_by: '' }],
    ['an empty tool', { tool: '' }],
    ['a tool of 129 characters', { tool: 'a'.repeat(129) }],
  ])('%s', (_, row) => {
    expect(() => insert(row)).toThrow(/CHECK constraint failed/);
    expect(stores.db.prepare('SELECT count(*) AS n FROM tool_pins').get()).toEqual({ n: 0 });
  });

  it('keeps a row that keeps the rules', () => {
    insert({});
    expect(stores.db.prepare('SELECT count(*) AS n FROM tool_pins').get()).toEqual({ n: 1 });
  });
});
