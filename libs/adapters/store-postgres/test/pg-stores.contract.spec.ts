import { createTestDatabase, testApprovalStore, testBudgetStore, testSettingsStore, type StoreFactory, type TestDatabase } from '@toolgate/testing';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { PgStores } from '../src/index.js';

// One database and one pool for the whole file: the suites use fresh tenant names per test.
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
