import { setImmediate } from 'node:timers/promises';

/**
 * Most time a tool spends on the event loop before it lets other callers in. Every workspace tool
 * runs in the gateway's process (tier 0), so a long synchronous stretch (a huge directory, many
 * replacements) would stall every tenant's calls and `/healthz` with it.
 */
export const SLICE_MS = 4;

/**
 * A budget of synchronous work: `due()` reads the clock (ask it every step of a coarse loop, or
 * every thousand steps of a tight one), and `yield()` hands the event loop to everyone else
 * (timers and I/O included, not only microtasks) and starts a new slice.
 */
export class TimeSlice {
  private started = performance.now();

  /** Whether the slice is spent. */
  due(): boolean {
    return performance.now() - this.started >= SLICE_MS;
  }

  async yield(): Promise<void> {
    await setImmediate();
    this.started = performance.now();
  }

  /** Yields if the slice is spent. */
  async pause(): Promise<void> {
    if (this.due()) await this.yield();
  }
}

const RUN = 1024;

/**
 * Sorts `items` in place without holding the event loop: runs of 1024 are sorted natively, then
 * merged pairwise, yielding whenever the slice is spent. A directory of 200,000 names takes a
 * few hundred milliseconds to sort; in one piece that would be a stall.
 */
export async function sortYielding<T>(items: T[], compare: (a: T, b: T) => number, slice = new TimeSlice()): Promise<void> {
  for (let start = 0; start < items.length; start += RUN) {
    const run = items.slice(start, start + RUN).sort(compare);
    for (let k = 0; k < run.length; k++) items[start + k] = run[k] as T;
    if (slice.due()) await slice.yield();
  }
  let from = items;
  let to: T[] = new Array<T>(items.length);
  for (let width = RUN; width < items.length; width *= 2) {
    for (let left = 0; left < items.length; left += 2 * width) {
      const mid = Math.min(left + width, items.length);
      const end = Math.min(left + 2 * width, items.length);
      let i = left;
      let j = mid;
      for (let k = left; k < end; k++) {
        // Stable: on equal keys the left run goes first.
        if (i < mid && (j >= end || compare(from[i] as T, from[j] as T) <= 0)) to[k] = from[i++] as T;
        else to[k] = from[j++] as T;
        if ((k & 1023) === 1023 && slice.due()) await slice.yield();
      }
    }
    [from, to] = [to, from];
  }
  if (from !== items) for (let k = 0; k < items.length; k++) items[k] = from[k] as T;
}
