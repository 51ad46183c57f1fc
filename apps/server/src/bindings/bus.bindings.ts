import { join } from 'node:path';
import { openSqliteDatabase, SqliteMessageBus } from '@toolgate/adapter-store-sqlite';
import { MessageBusToken, token, type MessageBus, type Token } from '@toolgate/contracts';
import type { ServerConfig } from '../config.js';
import type { Log } from '../logger.js';
import { ConfigToken, LogToken, StateStoresToken, type StateStores } from '../tokens.js';
import type { Binder } from './binder.js';

/** The bus and what closing it takes (nothing when it shares the state's connection). */
interface OpenedBus {
  readonly bus: MessageBus;
  close(): Promise<void>;
}
const OpenedBusToken: Token<OpenedBus> = token('OpenedBus');

/** Where the bus lives: beside the state in its SQLite file, or in a file of its own. */
type BusHome = 'state-database' | 'own-file';

/**
 * How the bus opens in each home. State that is not in SQLite (PostgreSQL) keeps the bus in
 * `bus.db`, so agents of one server process see each other's messages but not across processes
 * (logged). A bus on another backend would be one more row, chosen by a setting of its own.
 */
const BUS_BACKENDS = {
  'state-database': ({ state }) => {
    if (!state.sqlite) throw new Error('the state has no SQLite connection to share');
    // The state's own connection, which the state closes.
    return { bus: new SqliteMessageBus(state.sqlite), close: async () => undefined };
  },
  'own-file': ({ config, log }) => {
    const db = openSqliteDatabase(join(config.dataDir, 'bus.db'));
    let bus: SqliteMessageBus;
    try {
      bus = new SqliteMessageBus(db);
    } catch (error) {
      // The container closes only what a factory returned; a bus that fails to open (a file from a
      // newer server) must not leave its file open behind a failed start.
      db.close();
      throw error;
    }
    log('warn', `the message bus is kept per server process (bus.db in the data dir); TOOLGATE_STORE=${config.store} does not carry it yet`);
    return { bus, close: async () => void db.close() };
  },
} satisfies Record<BusHome, (deps: { config: ServerConfig; log: Log; state: StateStores }) => OpenedBus>;

/** Port `MessageBus`: opened after the state, closed before it. */
export function bindBus(binder: Binder): void {
  binder
    .resolved(OpenedBusToken, { config: ConfigToken, log: LogToken, state: StateStoresToken }, (deps) => BUS_BACKENDS[deps.state.sqlite ? 'state-database' : 'own-file'](deps))
    .onDeactivation((opened) => opened.close());
  binder.resolved(MessageBusToken, { opened: OpenedBusToken }, ({ opened }) => opened.bus);
}
