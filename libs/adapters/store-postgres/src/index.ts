export { PgStores, PgStoreConnectError, type PgStoresOptions } from './pg-stores.js';
export { PgApprovalStore } from './pg-approval-store.js';
export { PgBudgetStore } from './pg-budget-store.js';
export { PgSettingsStore } from './pg-settings-store.js';
export { PgToolPinStore } from './pg-tool-pin-store.js';
export { PgSchemaTooNewError } from './pg-migrations.js';
