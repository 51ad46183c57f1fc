import { describe, expect, it } from 'vitest';
import { budgetWindow } from './budget-window.js';

describe('budgetWindow', () => {
  const minute = { calls: 5, windowSeconds: 60 };

  it('names the fixed window holding now, its bounds included on the left only', () => {
    expect(budgetWindow(minute, 120_000)).toEqual({ calls: 5, windowMs: 60_000, start: 120_000 });
    expect(budgetWindow(minute, 179_999).start).toBe(120_000);
    expect(budgetWindow(minute, 180_000).start).toBe(180_000);
    expect(budgetWindow(minute, 119_999).start).toBe(60_000);
  });

  it('floors towards the past for instants before the epoch, so windows stay 60 s wide', () => {
    expect(budgetWindow(minute, -1).start).toBe(-60_000);
    expect(budgetWindow(minute, -60_000).start).toBe(-60_000);
  });

  it('puts every instant of one window on the same start for real clock readings', () => {
    const now = Date.UTC(2026, 10, 30, 12, 34, 56, 789);
    const { start, windowMs } = budgetWindow({ calls: 1, windowSeconds: 3600 }, now);
    expect(start).toBe(Date.UTC(2026, 10, 30, 12));
    expect(budgetWindow({ calls: 1, windowSeconds: 3600 }, start + windowMs - 1).start).toBe(start);
  });

  it('allows a zero budget (no calls at all)', () => {
    expect(budgetWindow({ calls: 0, windowSeconds: 1 }, 5).calls).toBe(0);
  });

  it.each([
    [{ calls: -1, windowSeconds: 60 }, 'budget calls must be a non-negative integer'],
    [{ calls: 1.5, windowSeconds: 60 }, 'budget calls must be a non-negative integer'],
    [{ calls: 5, windowSeconds: 0 }, 'budget windowSeconds must be a positive integer'],
    [{ calls: 5, windowSeconds: 0.5 }, 'budget windowSeconds must be a positive integer'],
    [{ calls: 5, windowSeconds: Number.NaN }, 'budget windowSeconds must be a positive integer'],
  ])('refuses the policy %j with RangeError', (policy, message) => {
    expect(() => budgetWindow(policy, 0)).toThrow(new RangeError(message));
  });

  it('refuses a clock reading the SQL stores could not store, after checking the policy', () => {
    expect(() => budgetWindow(minute, 1.5)).toThrow(new TypeError('now must be an integer (epoch milliseconds or a count)'));
    expect(() => budgetWindow({ calls: -1, windowSeconds: 60 }, 1.5)).toThrow(RangeError);
  });
});
