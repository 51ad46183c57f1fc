import { readFileSync } from 'node:fs';

/** How long the calling thread has run on a CPU and waited, runnable, for one. */
export interface ThreadSchedule {
  readonly ranMs: number;
  readonly waitedMs: number;
}

/**
 * This thread's scheduler statistics (Linux `/proc/thread-self/schedstat`), or zeros where the
 * kernel does not say. Test boxes are shared: time the scheduler kept a thread off a CPU is the
 * box's load, and time it ran is what the code under test cost, so timing checks read these
 * instead of the wall clock alone.
 */
export function threadSchedule(): ThreadSchedule {
  try {
    const [ran, waited] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return { ranMs: (ran ?? 0) / 1e6 || 0, waitedMs: (waited ?? 0) / 1e6 || 0 };
  } catch {
    return { ranMs: 0, waitedMs: 0 };
  }
}

/**
 * Runs synchronous `work` and says how long it held the thread: its CPU time where the kernel
 * reports it (so a loaded box does not stretch it), else the wall time.
 */
export function timeOnThread<T>(work: () => T): { readonly value: T; readonly ms: number } {
  const start = threadSchedule();
  const wall = performance.now();
  const value = work();
  const ms = start.ranMs > 0 ? threadSchedule().ranMs - start.ranMs : performance.now() - wall;
  return { value, ms };
}
