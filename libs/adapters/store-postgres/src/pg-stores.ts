import pg from 'pg';
import { PG_APPROVAL_MIGRATIONS, PgApprovalStore } from './pg-approval-store.js';
import { PG_BUDGET_MIGRATIONS, PgBudgetStore } from './pg-budget-store.js';
import { migratePg } from './pg-migrations.js';
import { PG_SETTINGS_MIGRATIONS, PgSettingsStore } from './pg-settings-store.js';
import { PG_TOOL_PIN_MIGRATIONS, PgToolPinStore } from './pg-tool-pin-store.js';

/** PostgreSQL could not be reached or refused the connection at start-up. */
export class PgStoreConnectError extends Error {
  override readonly name = 'PgStoreConnectError';
  constructor(
    /** `host:port/database`, never the credentials. */
    readonly target: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot connect to the PostgreSQL state database at ${target}: ${problem}`, options);
  }
}

export interface PgStoresOptions {
  /** Connections this process keeps (default 10). Size it against the server's max_connections. */
  readonly poolSize?: number;
  /** How long to wait for a connection before failing (default 10 s). */
  readonly connectTimeoutMs?: number;
  /**
   * Called when an idle pooled connection breaks (e.g. PostgreSQL restarted). The pool drops it
   * and the next query reconnects; without a listener such an error would crash the process.
   */
  readonly onIdleError?: (error: Error) => void;
}

/**
 * The state stores on one PostgreSQL database, shared by any number of stateless server
 * processes (DESIGN §7). Every state change is one atomic statement (ADR 0009).
 */
export class PgStores {
  private constructor(
    readonly pool: pg.Pool,
    readonly approvals: PgApprovalStore,
    readonly budgets: PgBudgetStore,
    readonly settings: PgSettingsStore,
    readonly pins: PgToolPinStore,
  ) {}

  /**
   * Connects, migrates the schema (advisory-locked, so processes starting together migrate
   * once) and builds the stores. Throws `PgStoreConnectError` when the database cannot be
   * reached and `PgSchemaTooNewError` when a newer server already migrated it.
   */
  static async open(databaseUrl: string, options: PgStoresOptions = {}): Promise<PgStores> {
    const poolSize = options.poolSize ?? 10;
    if (!Number.isSafeInteger(poolSize) || poolSize < 1) throw new RangeError('poolSize must be a positive integer');
    const target = describeTarget(databaseUrl);
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: poolSize,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    });
    pool.on('error', (error) => options.onIdleError?.(error));
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw new PgStoreConnectError(target, explain(error), { cause: error });
    }
    try {
      await migratePg(client, { approvals: PG_APPROVAL_MIGRATIONS, budgets: PG_BUDGET_MIGRATIONS, settings: PG_SETTINGS_MIGRATIONS, pins: PG_TOOL_PIN_MIGRATIONS });
    } catch (error) {
      client.release(true);
      await pool.end().catch(() => undefined);
      throw error;
    }
    client.release();
    return new PgStores(pool, new PgApprovalStore(pool), new PgBudgetStore(pool), new PgSettingsStore(pool), new PgToolPinStore(pool));
  }

  /** Waits for queries in flight, then closes every connection. */
  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}

/** `host:port/database` from a connection URL; the user name and password are left out. */
function describeTarget(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.hostname || 'localhost'}:${url.port || '5432'}${url.pathname || '/'}`;
  } catch {
    throw new PgStoreConnectError('(unparseable DATABASE_URL)', 'the URL is not valid; expected postgres://user:password@host:port/database');
  }
}

function explain(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (is PostgreSQL running and listening there?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ETIMEDOUT':
      return 'the connection timed out';
    case '28P01':
    case '28000':
      return 'authentication failed (check the user and password in DATABASE_URL)';
    case '3D000':
      return 'the database does not exist';
    default:
      return message && !message.includes('://') ? message : 'the connection failed';
  }
}
