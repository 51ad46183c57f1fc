import { describe, expect, it } from 'vitest';
import { threadSchedule, timeOnThread } from './thread-schedule.js';

describe('timing on the thread', () => {
  it('counts the CPU time synchronous work holds the thread', () => {
    const { ms } = timeOnThread(() => {
      const until = performance.now() + 60;
      while (performance.now() < until) {
        // Busy on this thread.
      }
    });
    expect(ms).toBeGreaterThanOrEqual(40);
    expect(ms).toBeLessThan(5_000);
  });

  it('does not count time spent waiting that is not work', async () => {
    const start = threadSchedule();
    await new Promise((resolve) => setTimeout(resolve, 80));
    if (start.ranMs > 0) expect(threadSchedule().ranMs - start.ranMs).toBeLessThan(60);
  });
});
