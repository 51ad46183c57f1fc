import { join } from 'node:path';
import { openSqliteDatabase, SqliteMessageBus } from '@toolgate/adapter-store-sqlite';
import { MessageBusToken, token, type MessageBus, type Token } from '@toolgate/contracts';
import type { ServerConfig, StoreKind } from '../config.js';
import type { Log } from '../logger.js';
import { ConfigToken, LogToken, StateStoresToken, type StateStores } from '../tokens.js';
import type { Binder } from './binder.js';

/** The bus and what closing it takes (nothing when it shares the state's connection). */
interface OpenedBus {
  readonly bus: MessageBus;
  close(): Promise<void>;
}
const OpenedBusToken: Token<OpenedBus> = token('OpenedBus');

/**
 * Where the message bus lives, by state backend (`TOOLGATE_STORE`). With PostgreSQL state it is
 * still SQLite, so agents of one server process see each other's messages but not across
 * processes (logged). A PostgreSQL bus would replace that row.
 */
const BUS_BACKENDS = {
  sqlite: ({ state }) => {
    if (!state.sqlite) throw new Error('SQLite state without its connection');
    // The state's own connection, which the state closes.
    return { bus: new SqliteMessageBus(state.sqlite), close: async () => undefined };
  },
  postgres: ({ config, log }) => {
    const db = openSqliteDatabase(join(config.dataDir, 'bus.db'));
    log('warn', 'the message bus is kept per server process (bus.db in the data dir); PostgreSQL does not carry it yet');
    return { bus: new SqliteMessageBus(db), close: async () => void db.close() };
  },
} satisfies Record<StoreKind, (deps: { config: ServerConfig; log: Log; state: StateStores }) => OpenedBus>;

/** Port `MessageBus`: opened after the state, closed before it. */
export function bindBus(binder: Binder): void {
  binder
    .resolved(OpenedBusToken, { config: ConfigToken, log: LogToken, state: StateStoresToken }, (deps) => BUS_BACKENDS[deps.config.store](deps))
    .onDeactivation((opened) => opened.close());
  binder.resolved(MessageBusToken, { opened: OpenedBusToken }, ({ opened }) => opened.bus);
}
