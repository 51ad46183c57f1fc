import type { ToolPin, ToolPinStore } from '@toolgate/contracts';
import { checkToolPin, isPinnableToolName, requirePinDigest } from '@toolgate/adapter-kit-store';
import type Database from 'better-sqlite3';
import { migrateSqlite, type SqliteMigration } from './sqlite-migrations.js';

/** The schema history of the `pins` component; append, never edit. */
export const TOOL_PIN_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    description: 'tool definitions pinned against change, global (not per tenant)',
    // The CHECKs repeat the kit's bounds, so a row written around the store (by hand, or by an
    // older or buggy writer) cannot hold a digest of another form or an unbounded definition.
    up: `
      CREATE TABLE tool_pins (
        tool TEXT PRIMARY KEY CHECK (length(tool) BETWEEN 1 AND 128),
        provenance TEXT NOT NULL,
        digest TEXT NOT NULL CHECK (length(digest) = 71 AND substr(digest, 1, 7) = 'sha256:' AND substr(digest, 8) NOT GLOB '*[^0-9a-f]*'),
        definition TEXT NOT NULL CHECK (length(CAST(definition AS BLOB)) <= 262144),
        pinned_at INTEGER NOT NULL CHECK (pinned_at >= 0),
        pinned_by TEXT NOT NULL CHECK (pinned_by <> '')
      ) STRICT;
    `,
  },
];

interface PinRow {
  tool: string;
  provenance: string;
  digest: string;
  definition: string;
  pinned_at: number;
  pinned_by: string;
}

const COLUMNS = 'tool, provenance, digest, definition, pinned_at, pinned_by';
const VALUES = '@tool, @provenance, @digest, @definition, @pinnedAt, @pinnedBy';

/**
 * Tool pins in SQLite. Each write is one statement that checks and sets together (an upsert that
 * keeps the row it finds, an insert that does nothing on conflict, an update matched on the
 * digest), so a second connection or process on the same file cannot slip between the check and
 * the change; SQLite's write lock orders them and `busy_timeout` makes the later one wait.
 */
export class SqliteToolPinStore implements ToolPinStore {
  readonly #list: Database.Statement<[], PinRow>;
  readonly #get: Database.Statement<[string], PinRow>;
  readonly #pinFirst: Database.Statement<[ToolPin], PinRow>;
  readonly #insert: Database.Statement<[ToolPin]>;
  readonly #update: Database.Statement<[ToolPin & { expected: string }]>;

  constructor(db: Database.Database) {
    migrateSqlite(db, 'pins', TOOL_PIN_MIGRATIONS);
    // BINARY collation of ASCII names: the kit's (and every store's) order.
    this.#list = db.prepare(`SELECT ${COLUMNS} FROM tool_pins ORDER BY tool`);
    this.#get = db.prepare(`SELECT ${COLUMNS} FROM tool_pins WHERE tool = ?`);
    // The no-op update makes RETURNING give the row already there, read under the same lock.
    this.#pinFirst = db.prepare(
      `INSERT INTO tool_pins (${COLUMNS}) VALUES (${VALUES}) ON CONFLICT (tool) DO UPDATE SET provenance = tool_pins.provenance RETURNING ${COLUMNS}`,
    );
    this.#insert = db.prepare(`INSERT INTO tool_pins (${COLUMNS}) VALUES (${VALUES}) ON CONFLICT (tool) DO NOTHING`);
    this.#update = db.prepare(`
      UPDATE tool_pins SET provenance = @provenance, digest = @digest, definition = @definition, pinned_at = @pinnedAt, pinned_by = @pinnedBy
      WHERE tool = @tool AND digest = @expected`);
  }

  async list(): Promise<readonly ToolPin[]> {
    return this.#list.all().map(toPin);
  }

  async get(tool: string): Promise<ToolPin | undefined> {
    if (!isPinnableToolName(tool)) return undefined;
    const row = this.#get.get(tool);
    return row ? toPin(row) : undefined;
  }

  async pinFirst(pin: ToolPin): Promise<ToolPin> {
    const row = this.#pinFirst.get(checkToolPin(pin));
    if (!row) throw new Error('recording the tool pin returned nothing');
    return toPin(row);
  }

  async replace(expectedDigest: string | undefined, pin: ToolPin): Promise<boolean> {
    if (expectedDigest !== undefined) requirePinDigest('expectedDigest', expectedDigest);
    const checked = checkToolPin(pin);
    const result = expectedDigest === undefined ? this.#insert.run(checked) : this.#update.run({ ...checked, expected: expectedDigest });
    return result.changes === 1;
  }
}

function toPin(row: PinRow): ToolPin {
  return {
    tool: row.tool,
    provenance: row.provenance,
    digest: row.digest,
    definition: row.definition,
    pinnedAt: row.pinned_at,
    pinnedBy: row.pinned_by,
  };
}
