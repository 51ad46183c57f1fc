import { describe, expect, it } from 'vitest';
// The helper is internal to the pipeline: tested here, not exported from the package.
import { portView } from '../src/gate-pipeline.js';

/** A store with state behind `this`, like every real adapter, and methods that spend. */
class CountingStore {
  spent = 0;
  remaining(): number {
    return 10 - this.spent;
  }
  charge(): void {
    this.spent += 1;
  }
  consume(): void {
    this.spent += 100;
  }
}

describe('the store views handed to preflight gates', () => {
  it('hold only the members named, bound to the store', () => {
    const store = new CountingStore();
    const view = portView(store, 'remaining');
    expect(Object.keys(view)).toEqual(['remaining']);
    store.spent = 3;
    expect(view.remaining()).toBe(7);
  });

  it('call the store method of that name as it is when called, as a replaced method is', () => {
    const store = new CountingStore();
    const view = portView(store, 'remaining');
    store.remaining = () => 42;
    expect(view.remaining()).toBe(42);
  });

  it('give a cast no way back to the members that spend', () => {
    const store = new CountingStore();
    const view = portView(store, 'remaining') as unknown as Record<string, unknown>;
    for (const spending of ['charge', 'consume', 'spent']) expect(view[spending]).toBeUndefined();
    // Nothing reaches the store through the view's prototype or by assigning to it.
    expect(Object.getPrototypeOf(view)).toBe(Object.prototype);
    expect(() => {
      view['charge'] = () => store.charge();
    }).toThrow(TypeError);
    expect(store.spent).toBe(0);
  });
});
