import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testMessageBus } from '@toolgate/testing';
import { afterAll, describe } from 'vitest';
import { openSqliteDatabase, SqliteMessageBus } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-sqlite-bus-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SqliteMessageBus (in memory)', () => {
  testMessageBus(async () => {
    const db = openSqliteDatabase(':memory:');
    return { bus: new SqliteMessageBus(db), close: async () => void db.close() };
  });
});

describe('SqliteMessageBus (file, shared by every test)', () => {
  // One file for the whole suite: tenants are random, so tests must not see each other's data.
  const db = openSqliteDatabase(join(dir, 'shared.db'));
  afterAll(() => db.close());
  testMessageBus(async () => ({ bus: new SqliteMessageBus(db) }));
});
