import { ToolError } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { FairQueue, type FairQueueBounds } from './fair-queue.js';

const BOUNDS: FairQueueBounds = { maxRunningPerKey: 1, maxQueuedPerKey: 50, maxQueued: 500 };

/** Takes items until none may start, without finishing any. */
function takeAll(queue: FairQueue<string>): string[] {
  const taken: string[] = [];
  for (let next = queue.next(); next; next = queue.next()) taken.push(next.item);
  return taken;
}

function refusal(run: () => void): ToolError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error('expected a refusal');
}

describe('FairQueue', () => {
  describe('one tenant starves another', () => {
    it('serves a tenant that arrives behind a long queue within one turn of each other tenant', () => {
      const queue = new FairQueue<string>({ ...BOUNDS, maxRunningPerKey: 3 });
      for (let i = 0; i < 20; i++) queue.enqueue('a', `a${i}`);
      expect(queue.next()?.item).toBe('a0');
      queue.enqueue('b', 'b0');
      // b joined the rotation behind a, so a has one more turn; then a went behind b.
      expect(queue.next()?.item).toBe('a1');
      expect(queue.next()?.item).toBe('b0');
      expect(queue.next()?.item).toBe('a2');
      expect(queue.next()).toBeUndefined();
    });

    it('starts the other tenant at once while the flooding one is at its running cap', () => {
      const queue = new FairQueue<string>(BOUNDS);
      for (let i = 0; i < 20; i++) queue.enqueue('a', `a${i}`);
      expect(queue.next()?.item).toBe('a0');
      expect(queue.next()).toBeUndefined();
      queue.enqueue('b', 'b0');
      expect(queue.next()?.item).toBe('b0');
    });

    it('rotates between many tenants, one item each per round, whatever each queued', () => {
      const queue = new FairQueue<string>({ ...BOUNDS, maxRunningPerKey: 100 });
      const counts = { a: 30, b: 1, c: 5, d: 2 };
      for (const [key, n] of Object.entries(counts)) for (let i = 0; i < n; i++) queue.enqueue(key, `${key}${i}`);
      expect(takeAll(queue).slice(0, 10)).toEqual(['a0', 'b0', 'c0', 'd0', 'a1', 'c1', 'd1', 'a2', 'c2', 'a3']);
    });

    it('serves a tenant that arrived while the other ran before the other runs again', () => {
      // One worker: nothing more is taken while a0 runs.
      const queue = new FairQueue<string>(BOUNDS);
      for (let i = 0; i < 5; i++) queue.enqueue('a', `a${i}`);
      expect(queue.next()?.item).toBe('a0');
      queue.enqueue('b', 'b0');
      queue.enqueue('b', 'b1');
      queue.done('a');
      expect(queue.next()?.item).toBe('b0');
      queue.done('b');
      expect(queue.next()?.item).toBe('a1');
      queue.done('a');
      expect(queue.next()?.item).toBe('b1');
    });

    it('holds a tenant at its running cap while others start, and releases it when one ends', () => {
      const queue = new FairQueue<string>(BOUNDS);
      for (let i = 0; i < 5; i++) queue.enqueue('a', `a${i}`);
      queue.enqueue('b', 'b0');
      queue.enqueue('b', 'b1');
      expect(takeAll(queue)).toEqual(['a0', 'b0']);
      expect(queue.count('a')).toEqual({ waiting: 4, running: 1 });
      queue.done('b');
      expect(takeAll(queue)).toEqual(['b1']);
      queue.done('a');
      expect(takeAll(queue)).toEqual(['a1']);
    });

    it('keeps each tenant first in, first out', () => {
      const queue = new FairQueue<string>(BOUNDS);
      for (let i = 0; i < 5; i++) queue.enqueue('a', `a${i}`);
      const order: string[] = [];
      for (let next = queue.next(); next; next = queue.next()) {
        order.push(next.item);
        queue.done(next.key);
      }
      expect(order).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    });
  });

  describe('queue flooding', () => {
    it('refuses the item past a tenant bound with QUERY_RATE_LIMITED, keeps nothing of it, and serves others', () => {
      const queue = new FairQueue<string>({ ...BOUNDS, maxQueuedPerKey: 3 });
      expect(queue.next()).toBeUndefined();
      for (let i = 0; i < 3; i++) queue.enqueue('a', `a${i}`);
      for (let i = 0; i < 10; i++) {
        const error = refusal(() => queue.enqueue('a', 'flood'));
        expect(error.reason).toBe('QUERY_RATE_LIMITED');
        expect(error.message).toBe('too many queries are waiting: this tenant already has 3 queued; wait for their answers before sending more');
      }
      expect(queue.queued).toBe(3);
      queue.enqueue('b', 'b0');
      expect(takeAll(queue)).toEqual(['a0', 'b0']);
      // A running item does not count against the bound: a tenant at its cap may queue again.
      queue.enqueue('a', 'a3');
      expect(queue.count('a')).toEqual({ waiting: 3, running: 1 });
    });

    it('refuses past the total bound, whichever tenants filled it', () => {
      const queue = new FairQueue<string>({ ...BOUNDS, maxQueuedPerKey: 4, maxQueued: 6 });
      for (const key of ['a', 'b', 'c']) for (let i = 0; i < 2; i++) queue.enqueue(key, `${key}${i}`);
      for (const key of ['a', 'd', 'a tenant never seen']) {
        const error = refusal(() => queue.enqueue(key, 'x'));
        expect(error.reason).toBe('QUERY_RATE_LIMITED');
        expect(error.message).toBe('the knowledge graph has 6 queries waiting; try again in a few seconds');
      }
      expect(queue.next()?.item).toBe('a0');
      queue.enqueue('d', 'd0');
      expect(queue.queued).toBe(6);
    });

    it('drains every waiting item and forgets it, leaving running ones to finish', () => {
      const queue = new FairQueue<string>(BOUNDS);
      for (let i = 0; i < 3; i++) queue.enqueue('a', `a${i}`);
      queue.enqueue('b', 'b0');
      expect(queue.next()?.item).toBe('a0');
      expect(queue.drain().sort()).toEqual(['a1', 'a2', 'b0']);
      expect(queue.queued).toBe(0);
      expect(queue.next()).toBeUndefined();
      queue.done('a');
      expect(queue.count('a')).toEqual({ waiting: 0, running: 0 });
    });

    it('refuses to finish an item that was never started', () => {
      const queue = new FairQueue<string>(BOUNDS);
      expect(() => queue.done('a')).toThrow(/no item of this key is running/);
      queue.enqueue('a', 'a0');
      expect(() => queue.done('a')).toThrow(/no item of this key is running/);
    });
  });
});
