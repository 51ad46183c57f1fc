import { ToolAbortedError } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { WorkspaceLocks } from './workspace-lock.js';

/** Resolves on the next turns of the loop, so granted waiters have run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('WorkspaceLocks', () => {
  it('lets shared holders run together and an exclusive one only alone', async () => {
    const locks = new WorkspaceLocks();
    const order: string[] = [];
    const r1 = await locks.acquire('/w', 'shared');
    const r2 = await locks.acquire('/w', 'shared');
    const writer = locks.acquire('/w', 'exclusive').then((release) => (order.push('writer'), release));
    await settle();
    expect(order).toEqual([]);
    r1();
    await settle();
    expect(order).toEqual([]);
    r2();
    const w = await writer;
    expect(order).toEqual(['writer']);
    // Held alone: a reader waits.
    const reader = locks.acquire('/w', 'shared').then((release) => (order.push('reader'), release));
    await settle();
    expect(order).toEqual(['writer']);
    w();
    (await reader)();
    expect(order).toEqual(['writer', 'reader']);
    expect(locks.active).toBe(0);
  });

  it('serves waiters in arrival order: a waiting writer is not overtaken by later readers', async () => {
    const locks = new WorkspaceLocks();
    const order: string[] = [];
    const first = await locks.acquire('/w', 'shared');
    const writer = locks.acquire('/w', 'exclusive').then((release) => (order.push('writer'), release));
    const late = locks.acquire('/w', 'shared').then((release) => (order.push('late reader'), release));
    first();
    (await writer)();
    (await late)();
    expect(order).toEqual(['writer', 'late reader']);
  });

  it('keeps workspaces apart', async () => {
    const locks = new WorkspaceLocks();
    const a = await locks.acquire('/tenant-a', 'exclusive');
    const b = await locks.acquire('/tenant-b', 'exclusive');
    a();
    b();
    expect(locks.active).toBe(0);
  });

  it('drops an aborted waiter, lets those behind it on, and holds nothing for it', async () => {
    const locks = new WorkspaceLocks();
    const reader = await locks.acquire('/w', 'shared');
    const controller = new AbortController();
    const writer = locks.acquire('/w', 'exclusive', controller.signal);
    const behind = locks.acquire('/w', 'shared');
    controller.abort();
    await expect(writer).rejects.toBeInstanceOf(ToolAbortedError);
    // The reader behind the aborted writer shares with the first one at once.
    (await behind)();
    reader();
    expect(locks.active).toBe(0);
    await expect(locks.acquire('/w', 'shared', AbortSignal.abort())).rejects.toBeInstanceOf(ToolAbortedError);
    expect(locks.active).toBe(0);
  });

  it('ignores a second release', async () => {
    const locks = new WorkspaceLocks();
    const release = await locks.acquire('/w', 'shared');
    release();
    release();
    const writer = await locks.acquire('/w', 'exclusive');
    writer();
    expect(locks.active).toBe(0);
  });
});
