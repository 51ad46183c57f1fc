import { describe, expect, it } from 'vitest';
import { RestartBackoff } from './restart-backoff.js';

describe('RestartBackoff', () => {
  const policy = { initialMs: 500, maxMs: 30_000, stableMs: 60_000 };

  it('doubles from the initial delay up to the ceiling', () => {
    const backoff = new RestartBackoff(policy, { now: () => 0 });
    const delays = Array.from({ length: 9 }, () => backoff.next());
    expect(delays.map((d) => d.delayMs)).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(delays.map((d) => d.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('keeps backing off when a restarted server dies again quickly, and resets after a stable run', () => {
    let now = 0;
    const backoff = new RestartBackoff(policy, { now: () => now });
    backoff.crashed(0);
    expect(backoff.next()).toEqual({ attempt: 1, delayMs: 500 });
    now = 10_000; // came up at 1 s, died at 10 s: not stable
    backoff.crashed(1_000);
    expect(backoff.next()).toEqual({ attempt: 2, delayMs: 1000 });
    now = 200_000; // came up at 100 s, died at 200 s: stable
    backoff.crashed(100_000);
    expect(backoff.next()).toEqual({ attempt: 1, delayMs: 500 });
  });

  it('stays finite however long the server stays down', () => {
    const backoff = new RestartBackoff(policy, { now: () => 0 });
    for (let i = 0; i < 2000; i++) backoff.next();
    expect(backoff.next().delayMs).toBe(30_000);
  });

  it('refuses a policy that cannot work', () => {
    expect(() => new RestartBackoff({ initialMs: 0, maxMs: 10, stableMs: 0 }, { now: () => 0 })).toThrow(/initialMs/);
    expect(() => new RestartBackoff({ initialMs: 100, maxMs: 10, stableMs: 0 }, { now: () => 0 })).toThrow(/initialMs/);
  });
});
