import type { ToolPin, ToolPinStore } from '@toolgate/contracts';
import { checkToolPin, isPinnableToolName, requirePinDigest } from '@toolgate/adapter-kit-store';
import type { Pool } from 'pg';
import type { PgMigration } from './pg-migrations.js';

/** The schema history of the `pins` component; append, never edit. */
export const PG_TOOL_PIN_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    description: 'tool definitions pinned against change, global (not per tenant)',
    // COLLATE "C": byte order whatever the database's locale, the order every store lists in.
    // The CHECKs repeat the kit's bounds against rows written around the store.
    up: `
      CREATE TABLE tool_pins (
        tool TEXT COLLATE "C" PRIMARY KEY CHECK (char_length(tool) BETWEEN 1 AND 128),
        provenance TEXT NOT NULL,
        digest TEXT NOT NULL CHECK (digest ~ '^sha256:[0-9a-f]{64}$'),
        definition TEXT NOT NULL CHECK (octet_length(definition) <= 262144),
        pinned_at BIGINT NOT NULL CHECK (pinned_at >= 0),
        pinned_by TEXT NOT NULL CHECK (pinned_by <> '')
      );
    `,
  },
];

interface PinRow {
  tool: string;
  provenance: string;
  digest: string;
  definition: string;
  /** BIGINT arrives as a string from `pg`. */
  pinned_at: string;
  pinned_by: string;
}

const COLUMNS = 'tool, provenance, digest, definition, pinned_at, pinned_by';

/**
 * Tool pins in PostgreSQL, shared by every server process on the database. Each write is one
 * statement that checks and sets together: `pinFirst` an upsert whose no-op update locks and
 * returns the row a concurrent writer committed first (a plain `DO NOTHING` plus a read could miss
 * it under READ COMMITTED), `replace` an insert that does nothing on conflict or an update
 * matched on the digest, which PostgreSQL re-checks on the newest row after waiting for a
 * concurrent update of it.
 */
export class PgToolPinStore implements ToolPinStore {
  constructor(private readonly pool: Pool) {}

  async list(): Promise<readonly ToolPin[]> {
    const { rows } = await this.pool.query<PinRow>(`SELECT ${COLUMNS} FROM tool_pins ORDER BY tool`);
    return rows.map(toPin);
  }

  async get(tool: string): Promise<ToolPin | undefined> {
    if (!isPinnableToolName(tool)) return undefined;
    const { rows } = await this.pool.query<PinRow>(`SELECT ${COLUMNS} FROM tool_pins WHERE tool = $1`, [tool]);
    return rows[0] ? toPin(rows[0]) : undefined;
  }

  async pinFirst(pin: ToolPin): Promise<ToolPin> {
    const { rows } = await this.pool.query<PinRow>(
      `INSERT INTO tool_pins AS p (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tool) DO UPDATE SET provenance = p.provenance
       RETURNING ${COLUMNS}`,
      values(checkToolPin(pin)),
    );
    if (!rows[0]) throw new Error('recording the tool pin returned nothing');
    return toPin(rows[0]);
  }

  async replace(expectedDigest: string | undefined, pin: ToolPin): Promise<boolean> {
    if (expectedDigest !== undefined) requirePinDigest('expectedDigest', expectedDigest);
    const checked = values(checkToolPin(pin));
    const result =
      expectedDigest === undefined
        ? await this.pool.query(`INSERT INTO tool_pins (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tool) DO NOTHING`, checked)
        : await this.pool.query(
            `UPDATE tool_pins SET provenance = $2, digest = $3, definition = $4, pinned_at = $5, pinned_by = $6 WHERE tool = $1 AND digest = $7`,
            [...checked, expectedDigest],
          );
    return result.rowCount === 1;
  }
}

function values(pin: ToolPin): unknown[] {
  return [pin.tool, pin.provenance, pin.digest, pin.definition, pin.pinnedAt, pin.pinnedBy];
}

function toPin(row: PinRow): ToolPin {
  return {
    tool: row.tool,
    provenance: row.provenance,
    digest: row.digest,
    definition: row.definition,
    pinnedAt: Number(row.pinned_at),
    pinnedBy: row.pinned_by,
  };
}
