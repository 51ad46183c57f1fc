import { randomUUID } from 'node:crypto';
import type { BusMessage, MessageBus } from '@toolgate/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** A bus opened for one test, and how to release it. */
export interface BusUnderTest {
  readonly bus: MessageBus;
  /** Closes the database or deletes files; called after every test. */
  close?(): Promise<void>;
}

/**
 * The behaviour every `MessageBus` adapter must show. Each test uses fresh random tenant names,
 * so a factory may hand out one shared database (or even one shared bus) each time.
 */
export function testMessageBus(open: () => Promise<BusUnderTest>): void {
  let handle: BusUnderTest | undefined;
  beforeEach(async () => {
    handle = await open();
  });
  afterEach(async () => {
    const closing = handle;
    handle = undefined;
    await closing?.close?.();
  });
  const bus = (): MessageBus => {
    if (!handle) throw new Error('the bus is only open inside a test');
    return handle.bus;
  };

  let clock = 1_700_000_000_000;
  const publish = (tenant: string, channel: string, body: string, sender = 'planner'): Promise<BusMessage> =>
    bus().publish({ id: randomUUID(), tenant, channel, sender, body, publishedAt: clock++ });
  const bodies = (messages: readonly BusMessage[]): string[] => messages.map((m) => m.body);

  describe('publish and readNew', () => {
    it('returns what was published, oldest first, with every field intact', async () => {
      const tenant = freshTenant();
      const id = randomUUID();
      const first = await bus().publish({ id, tenant, channel: 'log', sender: 'planner', body: 'one', publishedAt: 1234 });
      expect(first).toEqual({ id, tenant, channel: 'log', sender: 'planner', body: 'one', publishedAt: 1234, seq: first.seq });
      await publish(tenant, 'log', 'two');
      await publish(tenant, 'task', 'three');

      const read = await bus().readNew(tenant, 'worker-1', { limit: 10 });
      expect(bodies(read)).toEqual(['one', 'two', 'three']);
      expect(read[0]).toEqual(first);
      expect(read.map((m) => m.channel)).toEqual(['log', 'log', 'task']);
    });

    it('gives strictly increasing seq numbers in publish order', async () => {
      const tenant = freshTenant();
      const published: BusMessage[] = [];
      for (let i = 0; i < 5; i++) published.push(await publish(tenant, 'log', `m${i}`));
      for (let i = 1; i < published.length; i++) expect(published[i]!.seq).toBeGreaterThan(published[i - 1]!.seq);
    });

    it('round-trips a large body with non-ASCII text byte for byte', async () => {
      const tenant = freshTenant();
      const body = `{"summary":"${'Größe ✓ 日本 '.repeat(100_000)}"}`;
      expect(body.length).toBeGreaterThan(1_000_000);
      await publish(tenant, 'review', body);
      const [read] = await bus().readNew(tenant, 'worker-1', { limit: 1 });
      expect(read?.body).toBe(body);
    });

    it('refuses text an SQL store could not keep exactly, and empty names', async () => {
      const tenant = freshTenant();
      await expect(publish(tenant, 'log', 'nul \u0000 inside')).rejects.toThrow(/body/);
      await expect(publish(tenant, 'log', 'lone \ud800 surrogate')).rejects.toThrow(/body/);
      await expect(publish(tenant, '', 'no channel')).rejects.toThrow(/channel/);
      await expect(publish(tenant, 'log', 'no sender', '')).rejects.toThrow(/sender/);
      expect(await bus().readNew(tenant, 'worker-1', { limit: 10 })).toEqual([]);
    });

    it('rejects a limit that is not a positive integer', async () => {
      const tenant = freshTenant();
      await publish(tenant, 'log', 'kept');
      for (const limit of [0, -1, 1.5, Number.NaN]) {
        await expect(bus().readNew(tenant, 'worker-1', { limit })).rejects.toThrow(/limit/);
      }
      // A refused read moved no cursor.
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 5 }))).toEqual(['kept']);
    });
  });

  describe('cursors', () => {
    it('advances a reader only past what it returned, honouring the limit', async () => {
      const tenant = freshTenant();
      for (let i = 1; i <= 5; i++) await publish(tenant, 'log', `m${i}`);
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 2 }))).toEqual(['m1', 'm2']);
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 2 }))).toEqual(['m3', 'm4']);
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 2 }))).toEqual(['m5']);
      expect(await bus().readNew(tenant, 'worker-1', { limit: 2 })).toEqual([]);
      await publish(tenant, 'log', 'm6');
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 2 }))).toEqual(['m6']);
    });

    it('keeps one cursor per reader', async () => {
      const tenant = freshTenant();
      await publish(tenant, 'log', 'a');
      await publish(tenant, 'log', 'b');
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 10 }))).toEqual(['a', 'b']);
      expect(bodies(await bus().readNew(tenant, 'worker-2', { limit: 1 }))).toEqual(['a']);
      expect(bodies(await bus().readNew(tenant, 'planner', { limit: 10 }))).toEqual(['a', 'b']);
      expect(bodies(await bus().readNew(tenant, 'worker-2', { limit: 10 }))).toEqual(['b']);
    });

    it('reads only the requested channels and never skips the others', async () => {
      const tenant = freshTenant();
      await publish(tenant, 'log', 'log-1');
      await publish(tenant, 'task', 'task-1');
      await publish(tenant, 'log', 'log-2');
      await publish(tenant, 'review', 'review-1');
      await publish(tenant, 'task', 'task-2');

      expect(bodies(await bus().readNew(tenant, 'worker-1', { channels: ['task'], limit: 10 }))).toEqual(['task-1', 'task-2']);
      // The log messages published before the task messages are still unread.
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 10 }))).toEqual(['log-1', 'log-2', 'review-1']);
    });

    it('reads a set of channels in seq order', async () => {
      const tenant = freshTenant();
      await publish(tenant, 'log', 'log-1');
      await publish(tenant, 'task:worker-1', 'inbox-1');
      await publish(tenant, 'task:worker-2', 'other-inbox');
      await publish(tenant, 'control', 'control-1');
      await publish(tenant, 'task:worker-1', 'inbox-2');

      const read = await bus().readNew(tenant, 'worker-1', { channels: ['task:worker-1', 'log'], limit: 10 });
      expect(bodies(read)).toEqual(['log-1', 'inbox-1', 'inbox-2']);
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 10 }))).toEqual(['other-inbox', 'control-1']);
    });

    it('leaves no gap when a limited read spans several channels', async () => {
      const tenant = freshTenant();
      await publish(tenant, 'log', 'log-1');
      await publish(tenant, 'task', 'task-1');
      await publish(tenant, 'log', 'log-2');
      await publish(tenant, 'task', 'task-2');
      await publish(tenant, 'log', 'log-3');

      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 2 }))).toEqual(['log-1', 'task-1']);
      expect(bodies(await bus().readNew(tenant, 'worker-1', { channels: ['log'], limit: 10 }))).toEqual(['log-2', 'log-3']);
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 10 }))).toEqual(['task-2']);
      expect(await bus().readNew(tenant, 'worker-1', { limit: 10 })).toEqual([]);
    });

    it('reads nothing, and moves nothing, for an empty channel list or an unknown channel', async () => {
      const tenant = freshTenant();
      await publish(tenant, 'log', 'a');
      expect(await bus().readNew(tenant, 'worker-1', { channels: [], limit: 10 })).toEqual([]);
      expect(await bus().readNew(tenant, 'worker-1', { channels: ['review'], limit: 10 })).toEqual([]);
      expect(bodies(await bus().readNew(tenant, 'worker-1', { limit: 10 }))).toEqual(['a']);
    });

    it('never hands one message to two concurrent reads of the same reader', async () => {
      const tenant = freshTenant();
      for (let i = 0; i < 20; i++) await publish(tenant, 'log', `m${i}`);
      const reads = await Promise.all(Array.from({ length: 8 }, () => bus().readNew(tenant, 'worker-1', { limit: 3 })));
      const seen = reads.flatMap(bodies);
      expect(new Set(seen).size).toBe(seen.length);
      const rest = await bus().readNew(tenant, 'worker-1', { limit: 100 });
      expect(seen.length + rest.length).toBe(20);
    });
  });

  describe('tenant isolation', () => {
    it('never shows one tenant the messages of another, whatever the reader or channel', async () => {
      const red = freshTenant('red');
      const blue = freshTenant('blue');
      await publish(red, 'log', 'red secret');
      await publish(red, 'task:worker-1', 'red task');

      expect(await bus().readNew(blue, 'worker-1', { limit: 10 })).toEqual([]);
      expect(await bus().readNew(blue, 'worker-1', { channels: ['log', 'task:worker-1'], limit: 10 })).toEqual([]);
      await publish(blue, 'log', 'blue note');
      const blueRead = await bus().readNew(blue, 'worker-1', { limit: 10 });
      expect(bodies(blueRead)).toEqual(['blue note']);
      expect(blueRead.every((m) => m.tenant === blue)).toBe(true);
      // The same reader name in the other tenant has its own cursor.
      expect(bodies(await bus().readNew(red, 'worker-1', { limit: 10 }))).toEqual(['red secret', 'red task']);
    });

    it('does not confuse tenants whose names share a prefix', async () => {
      const base = freshTenant('acme');
      await publish(base, 'log', 'for acme');
      await publish(`${base}-labs`, 'log', 'for acme-labs');
      expect(bodies(await bus().readNew(base, 'r', { limit: 10 }))).toEqual(['for acme']);
      expect(bodies(await bus().readNew(`${base}-labs`, 'r', { limit: 10 }))).toEqual(['for acme-labs']);
    });
  });

  describe('concurrency', () => {
    it('keeps seq increasing and loses nothing under concurrent publishers', async () => {
      const tenant = freshTenant();
      const senders = ['planner', 'worker-1', 'worker-2', 'reviewer', 'worker-3'];
      const perSender = 20;
      await Promise.all(
        senders.map(async (sender) => {
          for (let i = 0; i < perSender; i++) await publish(tenant, i % 2 ? 'log' : 'task', `${sender}#${i}`, sender);
        }),
      );

      const read = await bus().readNew(tenant, 'observer', { limit: 1000 });
      expect(read).toHaveLength(senders.length * perSender);
      for (let i = 1; i < read.length; i++) expect(read[i]!.seq).toBeGreaterThan(read[i - 1]!.seq);
      for (const sender of senders) {
        // Each publisher's own messages come back in the order it published them.
        const own = read.filter((m) => m.sender === sender).map((m) => Number(m.body.split('#')[1]));
        expect(own).toEqual(Array.from({ length: perSender }, (_, i) => i));
      }
    });
  });
}

function freshTenant(label = 'tenant'): string {
  return `${label}-${randomUUID()}`;
}
