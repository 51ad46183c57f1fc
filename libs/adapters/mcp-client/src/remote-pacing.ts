import type { ReconnectionScheduler } from '@modelcontextprotocol/client';

/** Shortest wait before the SDK re-opens a stream, whatever `retry:` the server sent. */
export const REMOTE_RECONNECT_FLOOR_MS = 1_000;
/** Longest wait between two re-openings. */
export const REMOTE_RECONNECT_MAX_MS = 30_000;
/** Stream re-openings one connection may make in a burst; one more is earned each minute. */
export const REMOTE_RECONNECT_BUDGET = 30;
const RECONNECT_REFILL_MS = 60_000;

/**
 * The SDK transport's reconnection scheduler for one connection. The SDK takes the server's
 * `retry:` over its own backoff and restarts its attempt count whenever a stream opens, so a
 * server closing every stream at once would set the request rate; here every re-opening waits
 * at least {@link REMOTE_RECONNECT_FLOOR_MS}, doubling with each recent one up to
 * {@link REMOTE_RECONNECT_MAX_MS}, and past the budget the stream is given up (logged once).
 */
export function reconnectionPacer(server: string, log: (message: string) => void, signal: AbortSignal, now: () => number = () => performance.now()): ReconnectionScheduler {
  let tokens = REMOTE_RECONNECT_BUDGET;
  let refilledAt = now();
  let gaveUp = false;
  return (reconnect, delay) => {
    if (signal.aborted) return undefined;
    const at = now();
    tokens = Math.min(REMOTE_RECONNECT_BUDGET, tokens + (at - refilledAt) / RECONNECT_REFILL_MS);
    refilledAt = at;
    if (tokens < 1) {
      if (!gaveUp) {
        gaveUp = true;
        log(`MCP server '${server}' (remote): its event streams closed ${REMOTE_RECONNECT_BUDGET} times in a row; a closed stream is no longer re-opened on this connection`);
      }
      return undefined;
    }
    tokens -= 1;
    const recent = Math.min(5, Math.floor(REMOTE_RECONNECT_BUDGET - tokens) - 1);
    const wait = Math.min(REMOTE_RECONNECT_MAX_MS, Math.max(Number.isFinite(delay) ? delay : 0, REMOTE_RECONNECT_FLOOR_MS * 2 ** Math.max(0, recent)));
    const timer = setTimeout(reconnect, wait);
    timer.unref?.();
    return () => clearTimeout(timer);
  };
}

/**
 * A log rate for one connection's errors (a token bucket): a burst of `burst`, then one per
 * `everyMs`, so a flood spends the budget for a while, not for the connection's life, and later,
 * different errors still reach the operator. Returns the count suppressed since the last one
 * admitted, or `undefined` when this one is not logged.
 */
export class LogRate {
  private tokens: number;
  private refilledAt: number;
  private suppressed = 0;

  constructor(
    private readonly burst: number,
    private readonly everyMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  /** One more line to log: the lines left out before it (0 or more), or `undefined` to leave it out. */
  admit(): number | undefined {
    const at = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (at - this.refilledAt) / this.everyMs);
    this.refilledAt = at;
    if (this.tokens < 1) {
      this.suppressed += 1;
      return undefined;
    }
    this.tokens -= 1;
    const left = this.suppressed;
    this.suppressed = 0;
    return left;
  }
}
