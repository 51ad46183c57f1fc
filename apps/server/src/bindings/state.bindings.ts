import { join } from 'node:path';
import { PgStores } from '@toolgate/adapter-store-postgres';
import { openSqliteStores } from '@toolgate/adapter-store-sqlite';
import { ApprovalStoreToken, BudgetStoreToken, SettingsStoreToken, ToolPinStoreToken } from '@toolgate/contracts';
import type { ServerConfig, StoreKind } from '../config.js';
import type { Log } from '../logger.js';
import { StartupError } from '../startup-error.js';
import { ConfigToken, LogToken, StateStoresToken, type StateStores } from '../tokens.js';
import type { Binder } from './binder.js';

/**
 * Each state backend (`TOOLGATE_STORE`) and how it opens: one SQLite file by default,
 * PostgreSQL to scale out. A new backend is one more row and one more `StoreKind`.
 */
const STATE_BACKENDS = {
  sqlite: async (config) => {
    try {
      const stores = openSqliteStores(join(config.dataDir, 'state.db'));
      return { ...stores, sqlite: stores.db };
    } catch (error) {
      throw new StartupError(`state database: ${(error as Error).message}`);
    }
  },
  postgres: async (config, log) => {
    try {
      return await PgStores.open(config.databaseUrl!, { onIdleError: (e) => log('warn', `postgres state pool: ${e.message}`) });
    } catch (error) {
      throw new StartupError(`TOOLGATE_STORE=postgres: ${(error as Error).message}`);
    }
  },
} satisfies Record<StoreKind, (config: ServerConfig, log: Log) => Promise<StateStores>>;

/** Ports `ApprovalStore`, `BudgetStore`, `SettingsStore` and `ToolPinStore`: opened on first use, closed with the container. */
export function bindState(binder: Binder): void {
  binder
    .resolved(StateStoresToken, { config: ConfigToken, log: LogToken }, ({ config, log }) => STATE_BACKENDS[config.store](config, log))
    .onDeactivation((stores) => stores.close());
  binder.resolved(ApprovalStoreToken, { state: StateStoresToken }, ({ state }) => state.approvals);
  binder.resolved(BudgetStoreToken, { state: StateStoresToken }, ({ state }) => state.budgets);
  binder.resolved(SettingsStoreToken, { state: StateStoresToken }, ({ state }) => state.settings);
  binder.resolved(ToolPinStoreToken, { state: StateStoresToken }, ({ state }) => state.pins);
}
