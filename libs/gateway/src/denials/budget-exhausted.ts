import { deny } from './deny.js';

/** The refusal for a used-up window, with when it resets (the budget gate's, and the commit step's when the final charge fails). */
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
