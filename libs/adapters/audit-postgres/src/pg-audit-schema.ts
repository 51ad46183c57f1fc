import { AuditUnavailableError } from '@toolgate/contracts';
import type { PoolClient } from 'pg';

/** One step of the audit schema. Versions start at 1 and only ever grow. */
interface AuditMigration {
  readonly version: number;
  readonly description: string;
  readonly up: string;
}

/** Names used by the SQL of the sink (kept here, next to the schema that defines them). */
export const FRAMES_TABLE = 'toolgate_audit_frames';
export const HEAD_TABLE = 'toolgate_audit_head';
const MIGRATIONS_TABLE = 'toolgate_audit_migrations';

const MIGRATIONS: readonly AuditMigration[] = [
  {
    version: 1,
    description: 'hash-chained audit frames and the chain head',
    up: `
      -- One row: the last frame's seq and digest. Appenders lock it FOR UPDATE, which serialises
      -- every writer of every process onto one gap-free chain.
      CREATE TABLE ${HEAD_TABLE} (
        id SMALLINT PRIMARY KEY CHECK (id = 1),
        seq BIGINT NOT NULL CHECK (seq >= 0),
        digest TEXT NOT NULL,
        alg TEXT NOT NULL CHECK (alg IN ('sha256', 'hmac-sha256')),
        key_id TEXT
      );
      -- frame holds the exact JSON text that was digested (TEXT, not JSONB, which would reorder
      -- it); tenant and principal are copies for indexed paging, checked against it by verify.
      CREATE TABLE ${FRAMES_TABLE} (
        seq BIGINT PRIMARY KEY CHECK (seq >= 1),
        prev TEXT NOT NULL,
        digest TEXT NOT NULL,
        tenant TEXT,
        principal TEXT,
        frame TEXT NOT NULL
      );
      CREATE INDEX ${FRAMES_TABLE}_tenant ON ${FRAMES_TABLE} (tenant, seq);
      CREATE INDEX ${FRAMES_TABLE}_principal ON ${FRAMES_TABLE} (principal, seq);
      -- Defence in depth: ordinary roles cannot change or remove a frame. A superuser can still
      -- (disable the trigger); the hash chain is what detects that.
      CREATE FUNCTION toolgate_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'toolgate audit frames are append-only';
      END $$;
      CREATE TRIGGER ${FRAMES_TABLE}_append_only BEFORE UPDATE OR DELETE ON ${FRAMES_TABLE}
        FOR EACH ROW EXECUTE FUNCTION toolgate_audit_append_only();
      CREATE TRIGGER ${FRAMES_TABLE}_no_truncate BEFORE TRUNCATE ON ${FRAMES_TABLE}
        FOR EACH STATEMENT EXECUTE FUNCTION toolgate_audit_append_only();
    `,
  },
];

/**
 * The database was migrated by a newer server than this one. A kind of `AuditUnavailableError`, so
 * the server treats it like every other sink that cannot accept appends: it keeps serving health and
 * refuses every call.
 */
export class AuditSchemaTooNewError extends AuditUnavailableError {
  override readonly name = 'AuditSchemaTooNewError';
}

/**
 * Brings the audit schema to its latest version in one transaction under a transaction-scoped
 * advisory lock: when several server processes start at once, one migrates and the others wait,
 * then find nothing to do.
 */
export async function migrateAuditSchema(client: PoolClient): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended('toolgate:audit-migrations', 0))");
    await client.query(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
      version INTEGER PRIMARY KEY,
      description TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`);
    const current = rows[0]?.version ?? 0;
    const latest = MIGRATIONS.at(-1)?.version ?? 0;
    if (current > latest) {
      throw new AuditSchemaTooNewError(
        `the PostgreSQL audit schema is at version ${current} but this server knows only up to ${latest}; upgrade this server`,
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query(migration.up);
      await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version, description) VALUES ($1, $2)`, [migration.version, migration.description]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
