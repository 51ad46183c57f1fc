import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach } from 'vitest';

/** What a contract suite gets from an adapter's spec: a store, and how to release it. */
export interface StoreUnderTest<T> {
  readonly store: T;
  /** Closes connections or deletes files; called after every test. */
  close?(): Promise<void>;
}

/**
 * Opens a store for one test. Every test uses fresh random tenant names, so a factory may hand
 * out the same underlying database (or even the same store) each time.
 */
export type StoreFactory<T> = () => Promise<StoreUnderTest<T>>;

/** Opens a store before each test and closes it after; `current()` is the open store. */
export function useStore<T>(open: StoreFactory<T>): { current(): T } {
  let handle: StoreUnderTest<T> | undefined;
  beforeEach(async () => {
    handle = await open();
  });
  afterEach(async () => {
    const closing = handle;
    handle = undefined;
    await closing?.close?.();
  });
  return {
    current: () => {
      if (!handle) throw new Error('the store is only open inside a test');
      return handle.store;
    },
  };
}

/** A tenant name no other test (or earlier run against the same database) uses. */
export function freshTenant(label = 'tenant'): string {
  return `${label}-${randomUUID()}`;
}

/** Strings that break naive SQL, JSON or encoding handling; every store must keep them verbatim. */
export const HOSTILE_STRINGS: readonly string[] = [
  "'); DROP TABLE approvals; --",
  '"; DELETE FROM budgets; --',
  "O'Brien \\ \"quoted\" `tick` $1 ? :name @p %s",
  'émoji 🚀 RTL עברית 中文 e\u0301 \u2028\u2029 zero\u200bwidth',
  '   leading and trailing spaces   ',
  '',
];
