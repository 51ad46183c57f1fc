import type { BudgetPolicy } from '@toolgate/contracts';
import { requireInteger } from './text-rules.js';

/** The fixed window a budget call falls in, with the policy it was checked against. */
export interface BudgetWindow {
  /** Calls allowed per window; `0` allows none. */
  readonly calls: number;
  readonly windowMs: number;
  /** The start of the window holding `now`, in epoch ms: `floor(now / windowMs) * windowMs`. */
  readonly start: number;
}

/**
 * Checks a budget policy and the caller's clock reading and names the window they select. Every
 * budget store counts per `(tenant, principal, start)`, so the stores agree on which calls share
 * a window and a principal moved between stores keeps its count. Throws `RangeError` for a policy
 * no configuration should produce and `TypeError` for a `now` the SQL stores could not store.
 */
export function budgetWindow(policy: BudgetPolicy, now: number): BudgetWindow {
  if (!Number.isSafeInteger(policy.calls) || policy.calls < 0) throw new RangeError('budget calls must be a non-negative integer');
  if (!Number.isSafeInteger(policy.windowSeconds) || policy.windowSeconds <= 0) {
    throw new RangeError('budget windowSeconds must be a positive integer');
  }
  const windowMs = policy.windowSeconds * 1000;
  return { calls: policy.calls, windowMs, start: Math.floor(requireInteger('now', now) / windowMs) * windowMs };
}
