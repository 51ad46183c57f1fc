import type Database from 'better-sqlite3';
import { SqliteApprovalStore } from './sqlite-approval-store.js';
import { SqliteBudgetStore } from './sqlite-budget-store.js';
import { openSqliteDatabase } from './sqlite-database.js';
import { SqliteSettingsStore } from './sqlite-settings-store.js';
import { SqliteToolPinStore } from './sqlite-tool-pin-store.js';

/** The state stores on one SQLite file, as the server's embedded default wires them. */
export interface SqliteStores {
  /** The shared connection, for adapters that add their own tables (e.g. a message bus). */
  readonly db: Database.Database;
  readonly approvals: SqliteApprovalStore;
  readonly budgets: SqliteBudgetStore;
  readonly settings: SqliteSettingsStore;
  readonly pins: SqliteToolPinStore;
  /** Closes the connection; the stores must not be used afterwards. */
  close(): Promise<void>;
}

/**
 * Opens (or creates) the state database at `path`, migrates it and builds the stores. Throws
 * `SqliteOpenError` for a file that is not a usable SQLite database and
 * `SqliteSchemaTooNewError` for one written by a newer server.
 */
export function openSqliteStores(path: string): SqliteStores {
  const db = openSqliteDatabase(path);
  try {
    return {
      db,
      approvals: new SqliteApprovalStore(db),
      budgets: new SqliteBudgetStore(db),
      settings: new SqliteSettingsStore(db),
      pins: new SqliteToolPinStore(db),
      close: async () => {
        if (db.open) db.close();
      },
    };
  } catch (error) {
    db.close();
    throw error;
  }
}
