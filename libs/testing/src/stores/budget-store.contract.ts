import type { BudgetPolicy, BudgetStore } from '@toolgate/contracts';
import { expect, it } from 'vitest';
import { freshTenant, HOSTILE_STRINGS, useStore, type StoreFactory } from './store-under-test.js';

const MINUTE: BudgetPolicy = { calls: 3, windowSeconds: 60 };
/** The start of a one-minute window, far from the epoch so 64-bit storage is exercised. */
const W = Math.floor(Date.UTC(2030, 0, 1, 12) / 60_000) * 60_000;

/** The behaviour every `BudgetStore` adapter must share. */
export function testBudgetStore(open: StoreFactory<BudgetStore>): void {
  const opened = useStore(open);
  const store = () => opened.current();

  it('starts every window with the full budget', async () => {
    expect(await store().remaining(freshTenant(), 'alice', MINUTE, W)).toBe(3);
  });

  it('spends one call per charge and refuses, spending nothing, once the window is used up', async () => {
    const tenant = freshTenant();
    expect(await store().charge(tenant, 'alice', MINUTE, W)).toBe(true);
    expect(await store().remaining(tenant, 'alice', MINUTE, W + 1)).toBe(2);
    expect(await store().charge(tenant, 'alice', MINUTE, W + 2)).toBe(true);
    expect(await store().charge(tenant, 'alice', MINUTE, W + 3)).toBe(true);
    expect(await store().remaining(tenant, 'alice', MINUTE, W + 4)).toBe(0);
    for (let i = 0; i < 5; i++) expect(await store().charge(tenant, 'alice', MINUTE, W + 5 + i)).toBe(false);
    expect(await store().remaining(tenant, 'alice', MINUTE, W + 59_999)).toBe(0);
  });

  it('uses fixed windows: floor(now / window); the last millisecond is the old window, the next a new one', async () => {
    const tenant = freshTenant();
    for (let i = 0; i < 3; i++) expect(await store().charge(tenant, 'alice', MINUTE, W + 59_999)).toBe(true);
    expect(await store().charge(tenant, 'alice', MINUTE, W + 59_999)).toBe(false);
    expect(await store().remaining(tenant, 'alice', MINUTE, W + 60_000)).toBe(3);
    expect(await store().charge(tenant, 'alice', MINUTE, W + 60_000)).toBe(true);
    expect(await store().remaining(tenant, 'alice', MINUTE, W + 119_999)).toBe(2);
  });

  it('keeps the previous window after a new one starts, so a slightly slow clock cannot respend it', async () => {
    const tenant = freshTenant();
    for (let i = 0; i < 3; i++) await store().charge(tenant, 'alice', MINUTE, W + 10);
    expect(await store().charge(tenant, 'alice', MINUTE, W + 60_010)).toBe(true);
    expect(await store().remaining(tenant, 'alice', MINUTE, W + 20)).toBe(0);
    expect(await store().charge(tenant, 'alice', MINUTE, W + 30)).toBe(false);
  });

  it('keeps counting correctly across many windows (old windows may be pruned)', async () => {
    const tenant = freshTenant();
    for (let window = 0; window < 20; window++) {
      const start = W + window * 60_000;
      expect(await store().charge(tenant, 'alice', MINUTE, start + 5)).toBe(true);
      expect(await store().remaining(tenant, 'alice', MINUTE, start + 6)).toBe(2);
    }
  });

  it('counts each principal of each tenant separately', async () => {
    const a = freshTenant('a');
    const b = freshTenant('b');
    const one = { calls: 1, windowSeconds: 3600 };
    expect(await store().charge(a, 'alice', one, W)).toBe(true);
    expect(await store().charge(a, 'alice', one, W)).toBe(false);
    expect(await store().charge(a, 'bob', one, W)).toBe(true);
    expect(await store().charge(b, 'alice', one, W)).toBe(true);
    expect(await store().remaining(b, 'carol', one, W)).toBe(1);
  });

  it('never lets a zero budget through', async () => {
    const tenant = freshTenant();
    const none = { calls: 0, windowSeconds: 60 };
    expect(await store().remaining(tenant, 'alice', none, W)).toBe(0);
    expect(await store().charge(tenant, 'alice', none, W)).toBe(false);
    expect(await store().remaining(tenant, 'alice', MINUTE, W)).toBe(3);
  });

  it('reports a smaller budget as used up, never negative, when the policy shrinks mid-window', async () => {
    const tenant = freshTenant();
    for (let i = 0; i < 3; i++) await store().charge(tenant, 'alice', MINUTE, W);
    const smaller = { calls: 1, windowSeconds: 60 };
    expect(await store().remaining(tenant, 'alice', smaller, W)).toBe(0);
    expect(await store().charge(tenant, 'alice', smaller, W)).toBe(false);
  });

  it('rejects a malformed policy or time instead of guessing', async () => {
    const tenant = freshTenant();
    await expect(store().charge(tenant, 'alice', { calls: -1, windowSeconds: 60 }, W)).rejects.toThrow(/calls/);
    await expect(store().charge(tenant, 'alice', { calls: 1.5, windowSeconds: 60 }, W)).rejects.toThrow(/calls/);
    await expect(store().charge(tenant, 'alice', { calls: 1, windowSeconds: 0 }, W)).rejects.toThrow(/windowSeconds/);
    await expect(store().remaining(tenant, 'alice', { calls: 1, windowSeconds: Number.NaN }, W)).rejects.toThrow(/windowSeconds/);
    await expect(store().charge(tenant, 'alice', MINUTE, Number.NaN)).rejects.toThrow(/now/);
    expect(await store().remaining(tenant, 'alice', MINUTE, W)).toBe(3);
  });

  it('lets exactly `calls` of 50 concurrent charges through', async () => {
    const tenant = freshTenant();
    const policy = { calls: 7, windowSeconds: 60 };
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store().charge(tenant, 'alice', policy, W + i)));
    expect(results.filter(Boolean)).toHaveLength(7);
    expect(await store().remaining(tenant, 'alice', policy, W)).toBe(0);
  });

  it('keeps SQL-like, quoted and unicode names apart and intact', async () => {
    const tenant = freshTenant("t'); DROP TABLE budgets; --");
    const one = { calls: 1, windowSeconds: 60 };
    for (const name of HOSTILE_STRINGS) expect(await store().charge(tenant, name, one, W)).toBe(true);
    for (const name of HOSTILE_STRINGS) expect(await store().remaining(tenant, name, one, W)).toBe(0);
    expect(await store().remaining(tenant, 'someone-else', one, W)).toBe(1);
    await expect(store().charge(tenant, 'nul\u0000name', one, W)).rejects.toThrow(/well-formed Unicode/);
  });
}
