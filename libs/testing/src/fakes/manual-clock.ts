import type { Clock } from '@toolgate/contracts';

/** A clock that moves only when the test says so, for expiry, budget windows and backoff. */
export class ManualClock implements Clock {
  /** @param time epoch milliseconds; default 2030-01-01T12:00:00Z */
  constructor(public time: number = Date.UTC(2030, 0, 1, 12, 0, 0)) {}

  /** The current test time in epoch milliseconds. */
  now(): number {
    return this.time;
  }

  /** Moves the clock forward by `ms` (or back, for a negative `ms`). */
  advance(ms: number): void {
    this.time += ms;
  }
}
