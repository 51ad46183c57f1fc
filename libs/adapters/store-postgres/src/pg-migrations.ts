import type { PoolClient } from 'pg';

/** One step of one component's schema. Versions start at 1 and only ever grow. */
export interface PgMigration {
  readonly version: number;
  readonly description: string;
  /** SQL, possibly several statements, run inside the migration transaction. */
  readonly up: string;
}

/** The database was migrated by a newer server than this one. */
export class PgSchemaTooNewError extends Error {
  override readonly name = 'PgSchemaTooNewError';
  constructor(
    readonly component: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `the PostgreSQL state schema is at version ${found} for '${component}', but this server knows only up to ${known}; ` +
        'upgrade this server to match the others sharing the database',
    );
  }
}

/**
 * The table recording applied steps. Named for the state stores so another adapter sharing the
 * database (the audit sink) can keep its own without the two colliding.
 */
const MIGRATIONS_TABLE = 'state_schema_migrations';

/**
 * Brings each component up to its latest migration in ONE transaction that first takes a
 * transaction-scoped advisory lock: when several server processes start at once, one migrates
 * and the others wait on the lock, then find nothing left to do. A failing step rolls every
 * component back.
 */
export async function migratePg(client: PoolClient, components: Readonly<Record<string, readonly PgMigration[]>>): Promise<void> {
  for (const [component, migrations] of Object.entries(components)) checkMigrations(component, migrations);
  await client.query('BEGIN');
  try {
    // hashtextextended gives a stable 64-bit key from a readable name (PostgreSQL 11+).
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended('toolgate:state-migrations', 0))");
    await client.query(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
      component TEXT NOT NULL,
      version INTEGER NOT NULL,
      description TEXT NOT NULL,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (component, version)
    )`);
    for (const [component, migrations] of Object.entries(components)) {
      const latest = migrations.at(-1)?.version ?? 0;
      const { rows } = await client.query<{ version: number | null }>(
        `SELECT max(version) AS version FROM ${MIGRATIONS_TABLE} WHERE component = $1`,
        [component],
      );
      const current = rows[0]?.version ?? 0;
      if (current > latest) throw new PgSchemaTooNewError(component, current, latest);
      for (const migration of migrations) {
        if (migration.version <= current) continue;
        await client.query(migration.up);
        await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (component, version, description) VALUES ($1, $2, $3)`, [
          component,
          migration.version,
          migration.description,
        ]);
      }
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The schema version a component is at (0 when never migrated). */
export async function pgSchemaVersion(client: PoolClient, component: string): Promise<number> {
  const exists = await client.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [MIGRATIONS_TABLE]);
  if (!exists.rows[0]?.found) return 0;
  const { rows } = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${MIGRATIONS_TABLE} WHERE component = $1`,
    [component],
  );
  return rows[0]?.version ?? 0;
}

function checkMigrations(component: string, migrations: readonly PgMigration[]): void {
  migrations.forEach((migration, i) => {
    if (!Number.isSafeInteger(migration.version) || migration.version !== i + 1) {
      throw new TypeError(`migrations of '${component}' must be numbered 1, 2, 3, … in order (found ${migration.version} at position ${i + 1})`);
    }
  });
}
