import { token, type Token } from './token.js';

/** Time, injectable so expiry and budget windows are testable. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}
export const ClockToken: Token<Clock> = token('Clock');
