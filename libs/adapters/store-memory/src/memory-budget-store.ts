import type { BudgetPolicy, BudgetStore } from '@toolgate/contracts';
import { budgetWindow, requireText } from '@toolgate/adapter-kit-store';

/**
 * Fixed-window call budgets in a map. Each principal keeps at most its current and previous
 * window; older counters are dropped when a new window is charged.
 */
export class MemoryBudgetStore implements BudgetStore {
  /** `tenant\0principal` → window start (epoch ms) → calls used. */
  readonly #used = new Map<string, Map<number, number>>();

  async remaining(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<number> {
    const { calls, start } = budgetWindow(policy, now);
    const used = this.#used.get(key(tenant, principal))?.get(start) ?? 0;
    return Math.max(0, calls - used);
  }

  async charge(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<boolean> {
    const { calls, windowMs, start } = budgetWindow(policy, now);
    const k = key(tenant, principal);
    let windows = this.#used.get(k);
    if (!windows) {
      windows = new Map();
      this.#used.set(k, windows);
    }
    const used = windows.get(start) ?? 0;
    if (used >= calls) return false;
    windows.set(start, used + 1);
    if (used === 0) {
      // Keep the previous window so a slightly slow clock still sees what was spent in it.
      for (const old of windows.keys()) if (old < start - windowMs) windows.delete(old);
    }
    return true;
  }
}

function key(tenant: string, principal: string): string {
  requireText('tenant', tenant);
  requireText('principal', principal);
  return `${tenant}\u0000${principal}`;
}
