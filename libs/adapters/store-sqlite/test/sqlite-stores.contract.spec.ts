import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testApprovalStore, testBudgetStore, testSettingsStore, testToolPinStore, testToolPinStoreAcrossInstances, type StoreFactory } from '@toolgate/testing';
import { describe } from 'vitest';
import { openSqliteStores, type SqliteStores } from '../src/index.js';

/** Each test gets a fresh file (so migrations run every time) and the directory is removed after. */
function freshFile<T>(pick: (stores: SqliteStores) => T): StoreFactory<T> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-sqlite-'));
    const stores = openSqliteStores(join(dir, 'state.db'));
    return {
      store: pick(stores),
      close: async () => {
        await stores.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };
}

describe('SqliteApprovalStore', () => testApprovalStore(freshFile((s) => s.approvals)));
describe('SqliteBudgetStore', () => testBudgetStore(freshFile((s) => s.budgets)));
describe('SqliteSettingsStore', () => testSettingsStore(freshFile((s) => s.settings)));
describe('SqliteToolPinStore', () => testToolPinStore(freshFile((s) => s.pins)));
describe('SqliteToolPinStore: two connections on one file', () =>
  testToolPinStoreAcrossInstances(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-sqlite-pins-'));
    const path = join(dir, 'state.db');
    return {
      open: async () => {
        const stores = openSqliteStores(path);
        return { store: stores.pins, close: () => stores.close() };
      },
      close: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }));
describe('SQLite stores in memory', () => {
  const inMemory = <T>(pick: (stores: SqliteStores) => T): StoreFactory<T> => async () => {
    const stores = openSqliteStores(':memory:');
    return { store: pick(stores), close: () => stores.close() };
  };
  describe('approvals', () => testApprovalStore(inMemory((s) => s.approvals)));
  describe('budgets', () => testBudgetStore(inMemory((s) => s.budgets)));
  describe('settings', () => testSettingsStore(inMemory((s) => s.settings)));
  describe('pins', () => testToolPinStore(inMemory((s) => s.pins)));
});
