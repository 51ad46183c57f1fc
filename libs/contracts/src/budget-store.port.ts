import type { BudgetPolicy } from './principal.js';
import { token, type Token } from './token.js';

/**
 * Call budgets in fixed windows (`floor(now / window)`). `charge` is one atomic
 * check-and-increment, so concurrent calls cannot overspend.
 */
export interface BudgetStore {
  /** Calls left in the current window. */
  remaining(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<number>;
  /** Spends one call; false (and nothing spent) when the window is used up. */
  charge(tenant: string, principal: string, policy: BudgetPolicy, now: number): Promise<boolean>;
}
/** The budget store `apps/server` binds by `TOOLGATE_STORE` (SQLite or PostgreSQL). */
export const BudgetStoreToken: Token<BudgetStore> = token('BudgetStore');
