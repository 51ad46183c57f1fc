import type { BudgetStore, Clock, PrincipalDirectory } from '@toolgate/contracts';
import type { CallGate } from '../call.js';
import { budgetExhausted } from '../denials/budget-exhausted.js';

/**
 * What the budget gate reads: the principal's policy and what is left of it. Only `remaining`:
 * a preflight gate cannot spend (the commit step charges).
 */
export interface BudgetNeeds {
  readonly directory: Pick<PrincipalDirectory, 'get'>;
  readonly budgets: Pick<BudgetStore, 'remaining'>;
  readonly clock: Clock;
}

/**
 * Gate 3: the principal has calls left in its current window. Nothing is spent here (explain and
 * refused calls must cost nothing); the audit gate charges atomically once every check passed.
 * A principal without a budget policy is unlimited.
 */
export function budgetGate({ directory, budgets, clock }: BudgetNeeds): CallGate {
  return {
    name: 'budget',
    check(call) {
      const { principal } = call;
      const policy = directory.get(principal.tenant, principal.id)?.budget;
      // No policy, no store round trip: unlimited principals stay on the synchronous path.
      if (!policy) return undefined;
      const now = clock.now();
      return budgets.remaining(principal.tenant, principal.id, policy, now).then((remaining) => {
        if (remaining <= 0) return budgetExhausted(policy.calls, policy.windowSeconds, now);
        call.budget = policy;
        return undefined;
      });
    },
  };
}
