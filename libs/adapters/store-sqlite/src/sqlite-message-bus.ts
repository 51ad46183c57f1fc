import type { BusMessage, MessageBus } from '@toolgate/contracts';
import { checkBusMessage, checkBusRead, publishedMessage } from '@toolgate/adapter-kit-store';
import type BetterSqlite3 from 'better-sqlite3';
import { migrateSqlite, type SqliteMigration } from './sqlite-migrations.js';

type Database = BetterSqlite3.Database;
type Statement<P extends unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;

/**
 * The schema history of the `message-bus` component; append, never edit. `seq` is SQLite's
 * AUTOINCREMENT rowid: increasing across tenants and never reused, which is all the port
 * promises. `bus_channels` lists each tenant's channels so an all-channel read walks the
 * (tenant, channel, seq) index once per channel instead of scanning the whole log.
 */
export const MESSAGE_BUS_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    description: 'message bus: messages, channels per tenant, read cursors per reader and channel',
    up: `
      CREATE TABLE bus_messages (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        id           TEXT    NOT NULL,
        tenant       TEXT    NOT NULL,
        channel      TEXT    NOT NULL,
        sender       TEXT    NOT NULL,
        body         TEXT    NOT NULL,
        published_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX bus_messages_by_channel ON bus_messages (tenant, channel, seq);
      CREATE TABLE bus_channels (
        tenant  TEXT NOT NULL,
        channel TEXT NOT NULL,
        PRIMARY KEY (tenant, channel)
      ) STRICT, WITHOUT ROWID;
      CREATE TABLE bus_cursors (
        tenant  TEXT    NOT NULL,
        reader  TEXT    NOT NULL,
        channel TEXT    NOT NULL,
        seq     INTEGER NOT NULL,
        PRIMARY KEY (tenant, reader, channel)
      ) STRICT, WITHOUT ROWID;
    `,
  },
];

interface MessageRow {
  seq: number;
  id: string;
  tenant: string;
  channel: string;
  sender: string;
  body: string;
  published_at: number;
}

/**
 * The message bus in SQLite (the embedded default). Publishing and reading are each one
 * `BEGIN IMMEDIATE` transaction, so a read and its cursor moves are atomic even when several
 * processes share the database file. Cursors are kept per reader and channel.
 *
 * The caller owns the connection (open it with `openSqliteDatabase`, or share the state stores'
 * `db`); the bus migrates its own tables as the `message-bus` component.
 */
export class SqliteMessageBus implements MessageBus {
  readonly #insert: Statement<[string, string, string, string, string, number], { seq: number }>;
  readonly #insertChannel: Statement<[string, string]>;
  readonly #channels: Statement<[string], { channel: string }>;
  readonly #cursor: Statement<[string, string, string], { seq: number }>;
  readonly #unread: Statement<[string, string, number, number], MessageRow>;
  readonly #moveCursor: Statement<[string, string, string, number]>;
  readonly #publishTx: (message: Omit<BusMessage, 'seq'>) => number;
  readonly #readTx: (tenant: string, reader: string, channels: readonly string[] | undefined, limit: number) => BusMessage[];

  constructor(db: Database) {
    migrateSqlite(db, 'message-bus', MESSAGE_BUS_MIGRATIONS);
    this.#insert = db.prepare(
      'INSERT INTO bus_messages (id, tenant, channel, sender, body, published_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq',
    );
    this.#insertChannel = db.prepare('INSERT OR IGNORE INTO bus_channels (tenant, channel) VALUES (?, ?)');
    this.#channels = db.prepare('SELECT channel FROM bus_channels WHERE tenant = ?');
    this.#cursor = db.prepare('SELECT seq FROM bus_cursors WHERE tenant = ? AND reader = ? AND channel = ?');
    this.#unread = db.prepare(
      'SELECT seq, id, tenant, channel, sender, body, published_at FROM bus_messages ' +
        'WHERE tenant = ? AND channel = ? AND seq > ? ORDER BY seq LIMIT ?',
    );
    this.#moveCursor = db.prepare(
      'INSERT INTO bus_cursors (tenant, reader, channel, seq) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (tenant, reader, channel) DO UPDATE SET seq = excluded.seq',
    );

    const publish = db.transaction((m: Omit<BusMessage, 'seq'>): number => {
      const { seq } = this.#insert.get(m.id, m.tenant, m.channel, m.sender, m.body, m.publishedAt)!;
      this.#insertChannel.run(m.tenant, m.channel);
      return seq;
    });
    this.#publishTx = (m) => publish.immediate(m);

    const read = db.transaction((tenant: string, reader: string, requested: readonly string[] | undefined, limit: number) => {
      const channels = requested ? new Set(requested) : this.#channels.all(tenant).map((r) => r.channel);
      // Each channel contributes at most `limit` unread messages; the oldest `limit` of the union win.
      const candidates: MessageRow[] = [];
      for (const channel of channels) {
        const after = this.#cursor.get(tenant, reader, channel)?.seq ?? 0;
        candidates.push(...this.#unread.all(tenant, channel, after, limit));
      }
      const chosen = candidates.sort((a, b) => a.seq - b.seq).slice(0, limit);
      const last = new Map<string, number>();
      for (const row of chosen) last.set(row.channel, row.seq);
      for (const [channel, seq] of last) this.#moveCursor.run(tenant, reader, channel, seq);
      return chosen.map(toMessage);
    });
    this.#readTx = (tenant, reader, channels, limit) => read.immediate(tenant, reader, channels, limit);
  }

  async publish(message: Omit<BusMessage, 'seq'>): Promise<BusMessage> {
    checkBusMessage(message);
    return publishedMessage(message, this.#publishTx(message));
  }

  async readNew(
    tenant: string,
    reader: string,
    options: { readonly channels?: readonly string[]; readonly limit: number },
  ): Promise<readonly BusMessage[]> {
    checkBusRead(tenant, reader, options.limit);
    if (options.channels?.length === 0) return [];
    return this.#readTx(tenant, reader, options.channels, options.limit);
  }
}

function toMessage(row: MessageRow): BusMessage {
  return {
    seq: row.seq,
    id: row.id,
    tenant: row.tenant,
    channel: row.channel,
    sender: row.sender,
    body: row.body,
    publishedAt: row.published_at,
  };
}
