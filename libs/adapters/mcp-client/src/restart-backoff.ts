import type { Clock } from '@toolgate/contracts';

/** How quickly a crashed MCP server is started again. */
export interface BackoffPolicy {
  /** Delay before the first restart attempt. */
  readonly initialMs: number;
  /** Ceiling of the doubling delay. */
  readonly maxMs: number;
  /** A server that ran this long before it crashed starts again from `initialMs`. */
  readonly stableMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000, stableMs: 60_000 };

/**
 * Exponential restart delays: `initialMs`, doubling per failed attempt up to `maxMs`. The count
 * survives a short-lived restart, so a server that comes up and dies again at once keeps backing
 * off instead of being hammered; only a stable run resets it.
 */
export class RestartBackoff {
  private attempts = 0;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly clock: Clock,
  ) {
    if (!(policy.initialMs > 0) || !(policy.maxMs >= policy.initialMs) || !(policy.stableMs >= 0)) {
      throw new Error('backoff needs 0 < initialMs <= maxMs and stableMs >= 0');
    }
  }

  /** A running server went down; `upSinceMs` is when it last came up (epoch ms). */
  crashed(upSinceMs: number): void {
    if (this.clock.now() - upSinceMs >= this.policy.stableMs) this.attempts = 0;
  }

  /** Counts the next restart attempt and returns its number (from 1) and the delay before it. */
  next(): { attempt: number; delayMs: number } {
    this.attempts += 1;
    // The exponent is capped so the arithmetic stays finite however long the server stays down.
    const delayMs = Math.min(this.policy.initialMs * 2 ** Math.min(this.attempts - 1, 30), this.policy.maxMs);
    return { attempt: this.attempts, delayMs };
  }
}
