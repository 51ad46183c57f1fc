export { openSqliteDatabase, SqliteOpenError } from './sqlite-database.js';
export { migrateSqlite, sqliteSchemaVersion, SqliteSchemaTooNewError, type SqliteMigration } from './sqlite-migrations.js';
export { SqliteApprovalStore } from './sqlite-approval-store.js';
export { SqliteBudgetStore } from './sqlite-budget-store.js';
export { SqliteSettingsStore } from './sqlite-settings-store.js';
export { SqliteToolPinStore, TOOL_PIN_MIGRATIONS } from './sqlite-tool-pin-store.js';
export { openSqliteStores, type SqliteStores } from './sqlite-stores.js';
export { SqliteMessageBus, MESSAGE_BUS_MIGRATIONS } from './sqlite-message-bus.js';
