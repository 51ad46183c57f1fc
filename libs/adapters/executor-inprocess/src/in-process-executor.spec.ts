import { ToolAbortedError, ToolError, type ToolContext, type ToolExecutor, type ToolHandler } from '@toolgate/contracts';
import { testToolContext, threadSchedule } from '@toolgate/testing';
import { describe, expect, it, vi } from 'vitest';
import { InProcessExecutor } from './in-process-executor.js';

// Ids other than the fake's defaults, so a handler seeing them shows the context was passed through.
function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  return testToolContext({ signal, principal: { id: 'p', tenant: 't', roles: [] }, callId: 'c1' });
}

const executor = new InProcessExecutor();

describe('InProcessExecutor', () => {
  it('is tier 0 with no process runner and is always available', async () => {
    expect(executor.tier).toBe('inprocess');
    expect((executor as ToolExecutor).processes).toBeUndefined();
    await expect(executor.check()).resolves.toBeUndefined();
  });

  it('says it isolates nothing', () => {
    expect(executor.isolation.summary).toContain("the gateway's own process with no isolation");
    expect(executor.isolation.summary).toContain('memory, files and network');
  });

  it('returns the handler output and passes args and context through', async () => {
    const seen: unknown[] = [];
    const handler: ToolHandler = {
      async invoke(args, ctx) {
        seen.push(args, ctx.callId, ctx.principal.id, ctx.signal.aborted);
        return { echo: args['x'] ?? null };
      },
    };
    await expect(executor.execute(handler, { x: 1 }, context(), 1000)).resolves.toEqual({ status: 'returned', output: { echo: 1 } });
    expect(seen).toEqual([{ x: 1 }, 'c1', 'p', false]);
  });

  it('reports the handler error, including synchronous throws', async () => {
    const asyncThrow: ToolHandler = { invoke: async () => Promise.reject(new ToolError('nope')) };
    await expect(executor.execute(asyncThrow, {}, context(), 1000)).resolves.toMatchObject({ status: 'threw', error: { message: 'nope' } });
    const syncThrow: ToolHandler = {
      invoke: () => {
        throw new Error('sync');
      },
    };
    await expect(executor.execute(syncThrow, {}, context(), 1000)).resolves.toMatchObject({ status: 'threw', error: { message: 'sync' } });
  });

  it('reports the deadline even when the handler ignores its signal, and aborts the signal', async () => {
    let handlerSignal: AbortSignal | undefined;
    const stubborn: ToolHandler = {
      invoke: (_args, ctx) => {
        handlerSignal = ctx.signal;
        return new Promise((resolve) => setTimeout(() => resolve({ late: true }), 500));
      },
    };
    const waited = threadSchedule().waitedMs;
    const started = performance.now();
    const outcome = await executor.execute(stubborn, {}, context(), 30);
    const elapsed = performance.now() - started;
    expect(outcome).toEqual({ status: 'deadline', timeoutMs: 30 });
    // Not before the deadline (wall time); soon after it, less the time the box kept this thread off a CPU.
    expect(elapsed).toBeGreaterThanOrEqual(25);
    expect(elapsed - (threadSchedule().waitedMs - waited)).toBeLessThan(400);
    expect(handlerSignal?.aborted).toBe(true);
    expect(handlerSignal?.reason).toBeInstanceOf(ToolAbortedError);
    expect((handlerSignal?.reason as Error).message).toBe('timed out after 30 ms');
  });

  it('reports the caller aborting, and refuses to start on an aborted signal', async () => {
    const caller = new AbortController();
    const waits: ToolHandler = { invoke: () => new Promise(() => undefined) };
    const pending = executor.execute(waits, {}, context(caller.signal), 5000);
    caller.abort();
    await expect(pending).resolves.toEqual({ status: 'aborted' });

    let ran = false;
    const marks: ToolHandler = {
      invoke: async () => {
        ran = true;
        return null;
      },
    };
    await expect(executor.execute(marks, {}, context(caller.signal), 5000)).resolves.toEqual({ status: 'aborted' });
    expect(ran).toBe(false);
  });

  it('refuses a non-positive or non-finite timeout', async () => {
    const handler: ToolHandler = { invoke: async () => null };
    await expect(executor.execute(handler, {}, context(), 0)).rejects.toThrow(RangeError);
    await expect(executor.execute(handler, {}, context(), Number.NaN)).rejects.toThrow(RangeError);
  });

  it('clears its timer and caller listener once the handler settles', async () => {
    vi.useFakeTimers();
    try {
      const caller = new AbortController();
      let listeners = 0;
      const add = caller.signal.addEventListener.bind(caller.signal);
      const remove = caller.signal.removeEventListener.bind(caller.signal);
      caller.signal.addEventListener = ((...a: Parameters<typeof add>) => (listeners++, add(...a))) as typeof add;
      caller.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (listeners--, remove(...a))) as typeof remove;
      const handler: ToolHandler = { invoke: async () => 'done' };
      await expect(executor.execute(handler, {}, context(caller.signal), 60_000)).resolves.toEqual({ status: 'returned', output: 'done' });
      expect(vi.getTimerCount()).toBe(0);
      expect(listeners).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('InProcessExecutor signal', () => {
  it('hands a handler that reads its signal late an already-aborted signal', async () => {
    let read: (() => AbortSignal) | undefined;
    const handler: ToolHandler = {
      invoke: (_args, ctx) => {
        read = () => ctx.signal;
        return new Promise(() => undefined);
      },
    };
    await expect(executor.execute(handler, {}, context(), 10)).resolves.toEqual({ status: 'deadline', timeoutMs: 10 });
    const late = read?.();
    expect(late?.aborted).toBe(true);
    expect(late?.reason).toBeInstanceOf(ToolAbortedError);
  });

  it('keeps the signal when the handler spreads its context', async () => {
    const handler: ToolHandler = {
      invoke: async (_args, ctx) => {
        const copy = { ...ctx };
        return copy.signal instanceof AbortSignal && copy.callId === 'c1';
      },
    };
    await expect(executor.execute(handler, {}, context(), 1000)).resolves.toEqual({ status: 'returned', output: true });
  });
});
