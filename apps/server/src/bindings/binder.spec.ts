import { token, type Token } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { Binder } from './binder.js';

/** A resource that records when it opens and closes, as an adapter would hold a file or a pool. */
interface Resource {
  readonly name: string;
  close(): Promise<void>;
}

function tracker() {
  const events: string[] = [];
  const open = async (name: string, delayMs = 0): Promise<Resource> => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    events.push(`open ${name}`);
    return {
      name,
      close: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        events.push(`close ${name}`);
      },
    };
  };
  const logs: string[] = [];
  const log = (level: string, message: string) => void logs.push(`${level} ${message}`);
  return { events, open, logs, log };
}

const A: Token<Resource> = token('A');
const B: Token<Resource> = token('B');
const C: Token<Resource> = token('C');
const D: Token<Resource> = token('D');

describe('Binder', () => {
  it('hands a factory the values its needs name, under the same names', async () => {
    const binder = new Binder();
    const Name: Token<string> = token('Name');
    const Count: Token<number> = token('Count');
    const Line: Token<string> = token('Line');
    binder.constant(Name, 'bus');
    binder.resolved(Count, {}, async () => 3);
    binder.resolved(Line, { count: Count, name: Name }, ({ name, count }) => `${name} x${count}`);
    expect(await binder.get(Line)).toBe('bus x3');
  });

  it('makes each value once, however many ask for it', async () => {
    const binder = new Binder();
    let made = 0;
    const Shared: Token<object> = token('Shared');
    const Left: Token<object> = token('Left');
    const Right: Token<object> = token('Right');
    binder.resolved(Shared, {}, async () => ({ n: ++made }));
    binder.resolved(Left, { shared: Shared }, ({ shared }) => shared);
    binder.resolved(Right, { shared: Shared }, ({ shared }) => shared);
    const [left, right] = await Promise.all([binder.get(Left), binder.get(Right)]);
    expect(left).toBe(right);
    expect(made).toBe(1);
  });

  describe('closing', () => {
    it('closes in the reverse order the values were made, not the order they were bound', async () => {
      const { events, open, log } = tracker();
      const binder = new Binder();
      // Bound A, B, C, D; made D, B, then C (which needs A, so A before C).
      binder.resolved(A, {}, () => open('A')).onDeactivation((r) => r.close());
      binder.resolved(B, {}, () => open('B')).onDeactivation((r) => r.close());
      binder.resolved(C, { a: A }, () => open('C')).onDeactivation((r) => r.close());
      binder.resolved(D, {}, () => open('D')).onDeactivation((r) => r.close());
      await binder.get(D);
      await binder.get(B);
      await binder.get(C);
      await binder.close(log);
      expect(events).toEqual(['open D', 'open B', 'open A', 'open C', 'close C', 'close A', 'close B', 'close D']);
    });

    it('waits for each close before the next, even when the later one is slower', async () => {
      const events: string[] = [];
      const binder = new Binder();
      const slowClose = (name: string, ms: number) => async () => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        events.push(`closed ${name}`);
      };
      binder.resolved(A, {}, () => ({ name: 'A', close: slowClose('A', 1) })).onDeactivation((r) => r.close());
      binder.resolved(B, { a: A }, () => ({ name: 'B', close: slowClose('B', 30) })).onDeactivation((r) => r.close());
      await binder.get(B);
      await binder.close(() => undefined);
      expect(events).toEqual(['closed B', 'closed A']);
    });

    it('closes nothing that was never made', async () => {
      const { events, open, log } = tracker();
      const binder = new Binder();
      binder.resolved(A, {}, () => open('A')).onDeactivation((r) => r.close());
      binder.resolved(B, {}, () => open('B')).onDeactivation((r) => r.close());
      await binder.get(A);
      await binder.close(log);
      expect(events).toEqual(['open A', 'close A']);
    });

    // inversify 8.2.3 keeps a failed singleton's rejected promise and its unbindAllAsync rejects on
    // it, leaving the values made before it open: the reason Binder closes one token at a time.
    it('closes everything made before a factory that failed, and skips the failed one', async () => {
      const { events, open, logs, log } = tracker();
      const binder = new Binder();
      binder.resolved(A, {}, () => open('A')).onDeactivation((r) => r.close());
      binder.resolved(B, { a: A }, () => open('B', 5)).onDeactivation((r) => r.close());
      binder
        .resolved(C, { a: A, b: B }, async () => {
          throw new Error('the servers file is damaged');
        })
        .onDeactivation((r) => r.close());
      await expect(binder.get(C)).rejects.toThrow('the servers file is damaged');
      await binder.close(log);
      expect(events).toEqual(['open A', 'open B', 'close B', 'close A']);
      expect(logs).toEqual([]);
    });

    it('closes the rest when one close fails, and logs the failure', async () => {
      const { events, open, logs, log } = tracker();
      const binder = new Binder();
      binder.resolved(A, {}, () => open('A')).onDeactivation((r) => r.close());
      binder
        .resolved(B, {}, () => open('B'))
        .onDeactivation(async () => {
          throw new Error('the pool is already gone');
        });
      binder.resolved(C, {}, () => open('C')).onDeactivation((r) => r.close());
      await binder.get(A);
      await binder.get(B);
      await binder.get(C);
      await binder.close(log);
      expect(events).toEqual(['open A', 'open B', 'open C', 'close C', 'close A']);
      expect(logs).toEqual(['warn closing failed: the pool is already gone']);
    });

    it('closes once: a second close finds nothing left to close', async () => {
      const { events, open, log } = tracker();
      const binder = new Binder();
      binder.resolved(A, {}, () => open('A')).onDeactivation((r) => r.close());
      await binder.get(A);
      await binder.close(log);
      await binder.close(log);
      expect(events).toEqual(['open A', 'close A']);
    });

    it('closes values of synchronous factories in the same order as async ones', async () => {
      const events: string[] = [];
      const binder = new Binder();
      const sync = (name: string): Resource => {
        events.push(`open ${name}`);
        return { name, close: async () => void events.push(`close ${name}`) };
      };
      binder.resolved(A, {}, () => sync('A')).onDeactivation((r) => r.close());
      binder.resolved(B, { a: A }, async () => sync('B')).onDeactivation((r) => r.close());
      binder.resolved(C, { b: B }, () => sync('C')).onDeactivation((r) => r.close());
      await binder.get(C);
      await binder.close(() => undefined);
      expect(events).toEqual(['open A', 'open B', 'open C', 'close C', 'close B', 'close A']);
    });
  });
});
