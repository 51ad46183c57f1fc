import type { BudgetPolicy, BudgetStore } from '@toolgate/contracts';
import { requireInteger, requireText } from './text-rules.js';

/**
 * Fixed-window call budgets in a map. Each principal keeps at most its current and previous
 * window; older counters are dropped when a new window is charged.
 */
export class MemoryBudgetStore implements BudgetStore {
  /** `tenant\0principal` → window start (epoch ms) → calls used. */
  readonly #used = new Map<string, Map<number, number>>();

  async remaining(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<number> {
    const { calls, windowMs } = checkPolicy(policy);
    const start = windowStart(requireInteger('now', now), windowMs);
    const used = this.#used.get(key(tenant, principal))?.get(start) ?? 0;
    return Math.max(0, calls - used);
  }

  async charge(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<boolean> {
    const { calls, windowMs } = checkPolicy(policy);
    const start = windowStart(requireInteger('now', now), windowMs);
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

/** The start of the fixed window holding `now`, in epoch ms: `floor(now / window) * window`. */
function windowStart(now: number, windowMs: number): number {
  return Math.floor(now / windowMs) * windowMs;
}

function checkPolicy(policy: BudgetPolicy): { calls: number; windowMs: number } {
  if (!Number.isSafeInteger(policy.calls) || policy.calls < 0) throw new RangeError('budget calls must be a non-negative integer');
  if (!Number.isSafeInteger(policy.windowSeconds) || policy.windowSeconds <= 0) {
    throw new RangeError('budget windowSeconds must be a positive integer');
  }
  return { calls: policy.calls, windowMs: policy.windowSeconds * 1000 };
}
