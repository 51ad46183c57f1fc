import { token, type Token } from './token.js';

/** Time, injectable so expiry and budget windows are testable. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}
/** The clock every time-dependent decision reads; `apps/server` binds the system clock. */
export const ClockToken: Token<Clock> = token('Clock');
