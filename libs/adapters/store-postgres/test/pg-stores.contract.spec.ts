import {
  createTestDatabase,
  testApprovalStore,
  testBudgetStore,
  testSettingsStore,
  testToolPinStore,
  testToolPinStoreAcrossInstances,
  type StoreFactory,
  type TestDatabase,
} from '@toolgate/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { PgStores } from '../src/index.js';

// One database and one pool for the whole file: the suites use fresh tenant names (and the pin
// suite fresh tool names) per test.
let db: TestDatabase;
let stores: PgStores;
beforeAll(async () => {
  db = await createTestDatabase(inject('toolgatePostgresUrl'));
  stores = await PgStores.open(db.url, { poolSize: 20 });
});
afterAll(async () => {
  await stores?.close();
  await db?.drop();
});

const shared = <T>(pick: (s: PgStores) => T): StoreFactory<T> => async () => ({ store: pick(stores) });

describe('PgApprovalStore', () => testApprovalStore(shared((s) => s.approvals)));
describe('PgBudgetStore', () => testBudgetStore(shared((s) => s.budgets)));
describe('PgSettingsStore', () => testSettingsStore(shared((s) => s.settings)));
describe('PgToolPinStore', () => testToolPinStore(shared((s) => s.pins)));
// Each instance is a pool of its own, as each server process sharing the database has.
describe('PgToolPinStore: two pools on one database', () =>
  testToolPinStoreAcrossInstances(async () => ({
    open: async () => {
      const own = await PgStores.open(db.url, { poolSize: 8 });
      return { store: own.pins, close: () => own.close() };
    },
  })));

// A database whose default collation folds case and skips punctuation: the pins' byte order must
// not depend on the locale a database was created with.
describe('PgToolPinStore on a database collating by en-US (ICU)', () => {
  const name = `toolgate_test_icu_${Math.random().toString(16).slice(2, 10)}`;
  let icu: PgStores;
  async function admin(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: inject('toolgatePostgresUrl') });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }
  beforeAll(async () => {
    await admin(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`);
    const url = new URL(inject('toolgatePostgresUrl'));
    url.pathname = `/${name}`;
    icu = await PgStores.open(url.toString(), { poolSize: 8 });
  });
  afterAll(async () => {
    await icu?.close();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
  testToolPinStore(async () => ({ store: icu.pins }));
});
