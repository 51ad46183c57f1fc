import type { BudgetPolicy, BudgetStore } from '@toolgate/contracts';
import { budgetWindow, requireText } from '@toolgate/adapter-kit-store';
import type Database from 'better-sqlite3';
import { migrateSqlite, type SqliteMigration } from './sqlite-migrations.js';

/** The schema history of the `budgets` component; append, never edit. */
export const BUDGET_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    description: 'calls used per principal per fixed window',
    up: `
      CREATE TABLE budgets (
        tenant TEXT NOT NULL,
        principal TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        used INTEGER NOT NULL CHECK (used >= 0),
        PRIMARY KEY (tenant, principal, window_start)
      ) STRICT, WITHOUT ROWID;
    `,
  },
];

/**
 * Fixed-window budgets in SQLite. A charge is one upsert that only increments while
 * `used < calls`, so two connections (two server processes on one file) cannot overspend
 * (ADR 0009). Each principal keeps at most its current and previous window.
 */
export class SqliteBudgetStore implements BudgetStore {
  readonly #used: Database.Statement<[string, string, number], { used: number }>;
  readonly #charge: Database.Statement<[Record<string, unknown>], { used: number }>;
  readonly #prune: Database.Statement<[string, string, number]>;

  constructor(db: Database.Database) {
    migrateSqlite(db, 'budgets', BUDGET_MIGRATIONS);
    this.#used = db.prepare('SELECT used FROM budgets WHERE tenant = ? AND principal = ? AND window_start = ?');
    this.#charge = db.prepare(`
      INSERT INTO budgets (tenant, principal, window_start, used) VALUES (@tenant, @principal, @start, 1)
      ON CONFLICT (tenant, principal, window_start) DO UPDATE SET used = used + 1 WHERE used < @calls
      RETURNING used`);
    this.#prune = db.prepare('DELETE FROM budgets WHERE tenant = ? AND principal = ? AND window_start < ?');
  }

  async remaining(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<number> {
    const { calls, start } = budgetWindow(policy, now);
    const row = this.#used.get(requireText('tenant', tenant), requireText('principal', principal), start);
    return Math.max(0, calls - (row?.used ?? 0));
  }

  async charge(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<boolean> {
    const { calls, windowMs, start } = budgetWindow(policy, now);
    requireText('tenant', tenant);
    requireText('principal', principal);
    // The upsert's insert branch spends one call, so a zero budget must not reach it.
    if (calls === 0) return false;
    const row = this.#charge.get({ tenant, principal, start, calls });
    if (!row) return false;
    // The first charge of a window drops windows before the previous one (kept for slow clocks).
    if (row.used === 1) this.#prune.run(tenant, principal, start - windowMs);
    return true;
  }
}
