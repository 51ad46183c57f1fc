import type Database from 'better-sqlite3';

/** One step of one component's schema. Versions start at 1 and only ever grow. */
export interface SqliteMigration {
  readonly version: number;
  /** What the step does, kept in `schema_migrations` for whoever inspects the file. */
  readonly description: string;
  /** SQL run with `exec` (several statements allowed), or a function for data changes. */
  readonly up: string | ((db: Database.Database) => void);
}

/** The database was written by a newer server than this one. */
export class SqliteSchemaTooNewError extends Error {
  override readonly name = 'SqliteSchemaTooNewError';
  constructor(
    readonly component: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `the state database has schema version ${found} for '${component}', but this server knows only up to ${known}; ` +
        'run the newer server (or restore a backup made before the upgrade)',
    );
  }
}

/**
 * Brings one component's tables (e.g. `approvals`, `budgets`, or a message bus registering its
 * own name) up to its latest migration. Versions applied are recorded per component in
 * `schema_migrations`, so components migrate independently. All pending steps of a component run
 * in one `BEGIN IMMEDIATE` transaction: two processes starting at once serialise on the write
 * lock, the second finds the work done, and a failing step leaves the schema as it was.
 */
export function migrateSqlite(db: Database.Database, component: string, migrations: readonly SqliteMigration[]): void {
  checkMigrations(component, migrations);
  const latest = migrations.at(-1)?.version ?? 0;
  const run = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      component TEXT NOT NULL,
      version INTEGER NOT NULL,
      description TEXT NOT NULL,
      applied_at INTEGER NOT NULL,
      PRIMARY KEY (component, version)
    ) STRICT`);
    const row = db.prepare('SELECT max(version) AS version FROM schema_migrations WHERE component = ?').get(component) as {
      version: number | null;
    };
    const current = row.version ?? 0;
    if (current > latest) throw new SqliteSchemaTooNewError(component, current, latest);
    const record = db.prepare('INSERT INTO schema_migrations (component, version, description, applied_at) VALUES (?, ?, ?, ?)');
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      if (typeof migration.up === 'string') db.exec(migration.up);
      else migration.up(db);
      record.run(component, migration.version, migration.description, Date.now());
    }
  });
  run.immediate();
}

/** The schema version a component is at (0 when it has never been migrated). */
export function sqliteSchemaVersion(db: Database.Database, component: string): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!table) return 0;
  const row = db.prepare('SELECT max(version) AS version FROM schema_migrations WHERE component = ?').get(component) as { version: number | null };
  return row.version ?? 0;
}

function checkMigrations(component: string, migrations: readonly SqliteMigration[]): void {
  if (!/^[a-z][a-z0-9_-]*$/.test(component)) throw new TypeError(`migration component '${component}' must be lowercase letters, digits, '_' or '-'`);
  migrations.forEach((migration, i) => {
    if (!Number.isSafeInteger(migration.version) || migration.version !== i + 1) {
      throw new TypeError(`migrations of '${component}' must be numbered 1, 2, 3, … in order (found ${migration.version} at position ${i + 1})`);
    }
  });
}
