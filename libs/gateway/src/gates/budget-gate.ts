import { deny, type CallGate } from '../call.js';

/**
 * Gate 3: the principal has calls left in its current window. Nothing is spent here (explain and
 * refused calls must cost nothing); the audit gate charges atomically once every check passed.
 * A principal without a budget policy is unlimited.
 */
export const budgetGate: CallGate = {
  name: 'budget',
  check(call, { deps }) {
    const { principal } = call;
    const policy = deps.directory.get(principal.tenant, principal.id)?.budget;
    // No policy, no store round trip: unlimited principals stay on the synchronous path.
    if (!policy) return undefined;
    const now = deps.clock.now();
    return deps.budgets.remaining(principal.tenant, principal.id, policy, now).then((remaining) => {
      if (remaining <= 0) return budgetExhausted(policy.calls, policy.windowSeconds, now);
      call.budget = policy;
      return undefined;
    });
  },
};

/** The refusal for a used-up window, with when it resets (also used when the final charge fails). */
export function budgetExhausted(calls: number, windowSeconds: number, now: number) {
  const windowMs = windowSeconds * 1000;
  const resetsAt = new Date((Math.floor(now / windowMs) + 1) * windowMs).toISOString();
  return deny(
    'budget',
    'BUDGET_EXHAUSTED',
    `Your budget of ${calls} calls per ${windowSeconds} s is used up.`,
    `It resets at ${resetsAt}.`,
    { calls, windowSeconds, resetsAt },
  );
}
