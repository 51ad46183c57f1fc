import { InvalidAuditEventError, type AuditEvent } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { GroupCommitQueue, type PendingAppend } from './group-commit-queue.js';

const event = (i: number): AuditEvent => ({ event: 'authorized', ts: '2026-11-30T10:00:00.000Z', tenant: 'acme', callId: `c${i}` });

function settleAll(batch: PendingAppend[], from = 0) {
  batch.forEach((p, i) => p.resolve({ seq: from + i + 1, digest: 'd' }));
}

describe('GroupCommitQueue', () => {
  it('commits appends queued together in one batch, bounded by maxBatch', async () => {
    const batches: number[] = [];
    let seq = 0;
    const queue = new GroupCommitQueue({
      maxBatch: 40,
      commit: async (batch) => {
        batches.push(batch.length);
        settleAll(batch, seq);
        seq += batch.length;
      },
      onCommitError: () => undefined,
    });
    const receipts = await Promise.all(Array.from({ length: 100 }, (_, i) => queue.enqueue(event(i))));
    expect(batches).toEqual([40, 40, 20]);
    expect(receipts.map((r) => r.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('settles a batch through onCommitError when commit throws, and goes on with the next', async () => {
    let calls = 0;
    const queue = new GroupCommitQueue({
      maxBatch: 1,
      commit: async (batch) => {
        calls += 1;
        if (calls === 1) throw new Error('disk on fire');
        settleAll(batch);
      },
      onCommitError: (batch, error) => batch.forEach((p) => p.reject(new Error(`refused: ${(error as Error).message}`))),
    });
    const [first, second] = await Promise.allSettled([queue.enqueue(event(1)), queue.enqueue(event(2))]);
    expect(first).toMatchObject({ status: 'rejected', reason: { message: 'refused: disk on fire' } });
    expect(second).toMatchObject({ status: 'fulfilled' });
  });

  it('refuses everything still queued once refusal answers, without committing', async () => {
    let committed = 0;
    const queue = new GroupCommitQueue({
      maxBatch: 10,
      commit: async (batch) => {
        committed += batch.length;
        settleAll(batch);
      },
      onCommitError: () => undefined,
      refusal: () => new Error('unhealthy'),
    });
    await expect(queue.enqueue(event(1))).rejects.toThrow('unhealthy');
    expect(committed).toBe(0);
  });

  it('refuses a malformed event before queueing it, and drain waits for the batch in flight', async () => {
    let release: () => void = () => undefined;
    const queue = new GroupCommitQueue({
      maxBatch: 10,
      commit: (batch) =>
        new Promise<void>((resolve) => {
          release = () => {
            settleAll(batch);
            resolve();
          };
        }),
      onCommitError: () => undefined,
    });
    await expect(queue.enqueue({ event: 'nonsense' } as unknown as AuditEvent)).rejects.toBeInstanceOf(InvalidAuditEventError);
    const pending = queue.enqueue(event(1));
    let drained = false;
    const draining = queue.drain().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(drained).toBe(false);
    release();
    await pending;
    await draining;
    expect(drained).toBe(true);
  });
});
