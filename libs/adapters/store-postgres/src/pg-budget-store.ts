import type { BudgetPolicy, BudgetStore } from '@toolgate/contracts';
import { budgetWindow, requireText } from '@toolgate/adapter-kit-store';
import type { Pool } from 'pg';
import type { PgMigration } from './pg-migrations.js';

/** The schema history of the `budgets` component; append, never edit. */
export const PG_BUDGET_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    description: 'calls used per principal per fixed window',
    up: `
      CREATE TABLE budgets (
        tenant TEXT NOT NULL,
        principal TEXT NOT NULL,
        window_start BIGINT NOT NULL,
        used INTEGER NOT NULL CHECK (used >= 0),
        PRIMARY KEY (tenant, principal, window_start)
      );
    `,
  },
];

/**
 * Fixed-window budgets in PostgreSQL. A charge is one `INSERT … ON CONFLICT DO UPDATE … WHERE
 * used < calls`: PostgreSQL serialises concurrent upserts of one row, so any number of server
 * processes together never spend more than `calls` (ADR 0009). Each principal keeps at most
 * its current and previous window.
 */
export class PgBudgetStore implements BudgetStore {
  constructor(private readonly pool: Pool) {}

  async remaining(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<number> {
    const { calls, start } = budgetWindow(policy, now);
    const { rows } = await this.pool.query<{ used: number }>(
      'SELECT used FROM budgets WHERE tenant = $1 AND principal = $2 AND window_start = $3',
      [requireText('tenant', tenant), requireText('principal', principal), start],
    );
    return Math.max(0, calls - (rows[0]?.used ?? 0));
  }

  async charge(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<boolean> {
    const { calls, windowMs, start } = budgetWindow(policy, now);
    requireText('tenant', tenant);
    requireText('principal', principal);
    // The upsert's insert branch spends one call, so a zero budget must not reach it.
    if (calls === 0) return false;
    const { rows } = await this.pool.query<{ used: number }>(
      `INSERT INTO budgets AS b (tenant, principal, window_start, used) VALUES ($1, $2, $3, 1)
       ON CONFLICT (tenant, principal, window_start) DO UPDATE SET used = b.used + 1 WHERE b.used < $4
       RETURNING used`,
      [tenant, principal, start, calls],
    );
    const used = rows[0]?.used;
    if (used === undefined) return false;
    // The first charge of a window drops windows before the previous one (kept for slow clocks).
    // Pruning is housekeeping, not part of the charge: a failure here must not refuse the call.
    if (used === 1) {
      await this.pool
        .query('DELETE FROM budgets WHERE tenant = $1 AND principal = $2 AND window_start < $3', [tenant, principal, start - windowMs])
        .catch(() => undefined);
    }
    return true;
  }
}
