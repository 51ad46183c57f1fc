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

/**
 * Runs async `work` whose time is spent on this thread's event loop (an in-process call, its
 * timers and promises) and says how long it took, less the time the scheduler kept this thread
 * off a CPU meanwhile (the box's load, not the work's). Where the kernel does not say, it is the
 * wall time. Time the work spends waiting on a timer or on I/O still counts; only this thread's
 * runnable-but-not-running wait is taken out, so a bound checks the same thing on a quiet box.
 */
export async function timeLessCpuWait<T>(work: () => Promise<T>): Promise<{ readonly value: T; readonly ms: number }> {
  // The wait is read inside the wall-clock window, so no wait outside it is taken out of it.
  const started = performance.now();
  const waited = threadSchedule().waitedMs;
  const value = await work();
  const waitedSince = threadSchedule().waitedMs - waited;
  const ms = performance.now() - started - waitedSince;
  return { value, ms };
}

/** A running watch on the event loop: `worstMs()` so far, `stop()` ends it and says the worst. */
export interface LoopHoldWatch {
  worstMs(): number;
  stop(): number;
}

/**
 * Watches how long the event loop is held while it runs: a timer ticks every `intervalMs`, and
 * each tick's lateness, less the time the scheduler kept this thread off a CPU since the last
 * tick, is a hold by code on this thread. The worst one is what any other caller on this process
 * would have waited. Subtracting the wait is what keeps the check true on a shared, loaded test
 * box (another project's suite on the other core), where wall-clock lateness alone is the box's
 * load, not the code's; a hold by this thread's own work (or its garbage collection) still shows.
 */
export function watchLoopHold(intervalMs = 5): LoopHoldWatch {
  let last = performance.now();
  let waited = threadSchedule().waitedMs;
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const wait = threadSchedule().waitedMs;
    worst = Math.max(worst, now - last - intervalMs - (wait - waited));
    last = now;
    waited = wait;
  }, intervalMs);
  return {
    worstMs: () => worst,
    stop: () => {
      clearInterval(timer);
      return worst;
    },
  };
}
