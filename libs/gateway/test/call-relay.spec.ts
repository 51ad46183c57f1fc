import { ToolError, type JsonObject, type ProgressUpdate, type ToolContext } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { PROGRESS_MESSAGE_CHARS } from '../src/steps/call-relay.js';
import { denialOf, harness, testTool } from './harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The detail of the call's last audit record (its outcome, or the refusal). */
function lastDetail(h: ReturnType<typeof harness>): string | undefined {
  return h.audit.records.at(-1)?.detail;
}

describe('progress relay', () => {
  it('hands the tool a progress function only when the caller asked for progress', async () => {
    let seen: ToolContext | undefined;
    const tool = testTool({ name: 'p' }, (_args, ctx) => {
      seen = ctx;
      return null;
    });
    const h = harness({ tools: [tool] });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'p', args: {} });
    expect(seen?.progress).toBeUndefined();
    expect(seen?.caller).toBeUndefined();
    const got: ProgressUpdate[] = [];
    await h.gateway.invoke(h.who('worker-1'), { tool: 'p', args: {} }, { progress: (u) => got.push(u) });
    expect(typeof seen?.progress).toBe('function');
    seen?.progress?.({ progress: 1 });
    expect(got).toEqual([]);
  });

  it('relays a first-party tool\'s progress, and records how much in the outcome', async () => {
    const tool = testTool({ name: 'p' }, async (_args, ctx) => {
      ctx.progress?.({ progress: 1, total: 2, message: 'half' });
      await sleep(120);
      ctx.progress?.({ progress: 2, total: 2 });
      return null;
    });
    const h = harness({ tools: [tool] });
    const got: ProgressUpdate[] = [];
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'p', args: {} }, { progress: (u) => got.push(u) });
    expect(result.ok).toBe(true);
    expect(got).toEqual([{ progress: 1, total: 2, message: 'half' }, { progress: 2, total: 2 }]);
    expect(h.audit.records.at(-1)).toMatchObject({ event: 'succeeded', detail: 'relayed to the caller: progress 2' });
  });
});

describe('progress flood', () => {
  it('relays at most about 10 updates a second, and always the last one before the result', async () => {
    const tool = testTool({ name: 'flood', timeoutMs: 5000 }, async (_args, ctx) => {
      for (let i = 1; i <= 5000; i += 1) {
        ctx.progress?.({ progress: i, total: 5000 });
        if (i % 500 === 0) await sleep(20);
      }
      return 'done';
    });
    const h = harness({ tools: [tool] });
    const got: ProgressUpdate[] = [];
    const started = performance.now();
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'flood', args: {} }, { progress: (u) => got.push(u) });
    const seconds = (performance.now() - started) / 1000;
    expect(result.ok).toBe(true);
    expect(got.length).toBeGreaterThanOrEqual(2);
    expect(got.length).toBeLessThanOrEqual(Math.ceil(seconds * 10) + 2);
    expect(got.at(-1)).toEqual({ progress: 5000, total: 5000 });
    // Progress only grows, as MCP requires.
    for (let i = 1; i < got.length; i += 1) expect(got[i]!.progress).toBeGreaterThan(got[i - 1]!.progress);
    expect(lastDetail(h)).toMatch(/^relayed to the caller: progress \d+ \(\d+ dropped\)$/);
  });

  it('drops malformed, decreasing and repeated updates', async () => {
    const tool = testTool({ name: 'bad', timeoutMs: 5000 }, async (_args, ctx) => {
      const send = ctx.progress as (u: unknown) => void;
      for (const u of [{ progress: Number.NaN }, { progress: -1 }, { progress: Infinity }, { progress: '3' }, null, 7, { progress: 5, total: 2 }]) {
        send(u);
        await sleep(110);
      }
      send({ progress: 4 });
      await sleep(110);
      send({ progress: 4 });
      return null;
    });
    const h = harness({ tools: [tool] });
    const got: ProgressUpdate[] = [];
    await h.gateway.invoke(h.who('worker-1'), { tool: 'bad', args: {} }, { progress: (u) => got.push(u) });
    // The total smaller than the progress is left out; the progress stands.
    expect(got).toEqual([{ progress: 5 }]);
    expect(lastDetail(h)).toBe('relayed to the caller: progress 1 (8 dropped)');
  });

  it('flattens and caps a hostile message: control characters, bidi overrides, line separators, megabytes', async () => {
    const spellings = ['a\u0000b\u001b[31mred', 'x\u202eevil\u202c', 'l1\u2028l2\u2029l3', `${'A'.repeat(1_000_000)}`, '\r\n\t  spaced  '];
    const tool = testTool({ name: 'msg', timeoutMs: 5000 }, async (_args, ctx) => {
      let n = 0;
      for (const message of spellings) {
        ctx.progress?.({ progress: (n += 1), message });
        await sleep(110);
      }
      return null;
    });
    const h = harness({ tools: [tool] });
    const got: ProgressUpdate[] = [];
    await h.gateway.invoke(h.who('worker-1'), { tool: 'msg', args: {} }, { progress: (u) => got.push(u) });
    expect(got.map((u) => u.message)).toEqual(['a b [31mred', 'x evil', 'l1 l2 l3', `${'A'.repeat(PROGRESS_MESSAGE_CHARS - 1)}…`, 'spaced']);
  });

  it('relays nothing once the call is over, however long the tool keeps sending', async () => {
    let later: ((u: ProgressUpdate) => void) | undefined;
    const tool = testTool({ name: 'late' }, (_args, ctx) => {
      later = ctx.progress;
      ctx.progress?.({ progress: 1 });
      return null;
    });
    const h = harness({ tools: [tool] });
    const got: ProgressUpdate[] = [];
    await h.gateway.invoke(h.who('worker-1'), { tool: 'late', args: {} }, { progress: (u) => got.push(u) });
    later?.({ progress: 2 });
    await sleep(250);
    later?.({ progress: 3 });
    expect(got).toEqual([{ progress: 1 }]);
  });

  it('a face whose progress sink throws does not fail the call', async () => {
    const tool = testTool({ name: 'p' }, (_args, ctx) => {
      ctx.progress?.({ progress: 1 });
      return 'ok';
    });
    const h = harness({ tools: [tool] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'p', args: {} }, {
      progress: () => {
        throw new Error('stream closed');
      },
    });
    expect(result).toMatchObject({ ok: true, output: 'ok' });
  });
});

describe('caller requests', () => {
  const mcpTool = (run: (ctx: ToolContext) => Promise<unknown>) =>
    testTool({ name: 'up__ask', provenance: 'mcp:up', risk: 'medium', timeoutMs: 5000 }, async (_args, ctx) => (await run(ctx)) as never);

  it('offers only the capabilities the caller declared', async () => {
    let seen: ToolContext | undefined;
    const h = harness({ tools: [mcpTool(async (ctx) => void (seen = ctx))] });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'up__ask', args: {} });
    // An MCP source's tool always gets a caller, to report what it refused, but no capability.
    expect(seen?.caller?.elicit).toBeUndefined();
    expect(seen?.caller?.sample).toBeUndefined();
    await h.gateway.invoke(h.who('worker-1'), { tool: 'up__ask', args: {} }, { caller: { elicit: async () => ({ action: 'cancel' }) } });
    expect(typeof seen?.caller?.elicit).toBe('function');
    expect(seen?.caller?.sample).toBeUndefined();
  });

  it('relays an elicitation to the caller and records it in the outcome', async () => {
    const asked: JsonObject[] = [];
    const tool = mcpTool(async (ctx) => ctx.caller?.elicit?.({ message: 'name?' }, ctx.signal));
    const h = harness({ tools: [tool] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'up__ask', args: {} }, {
      caller: {
        elicit: async (params) => {
          asked.push(params);
          return { action: 'accept', content: { name: 'Ada' } };
        },
      },
    });
    expect(result).toMatchObject({ ok: true, output: { action: 'accept', content: { name: 'Ada' } } });
    expect(asked).toEqual([{ message: 'name?' }]);
    expect(lastDetail(h)).toBe('relayed to the caller: elicitation 1: 1 answered');
  });

  it('records a request the tool refused because the caller lacks the capability', async () => {
    const tool = mcpTool(async (ctx) => {
      ctx.caller?.refused?.('sampling', 'the calling client did not declare sampling');
      return 'refused';
    });
    const h = harness({ tools: [tool] });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'up__ask', args: {} });
    expect(lastDetail(h)).toBe('relayed to the caller: sampling 1: 0 answered, 1 refused (the calling client did not declare sampling)');
  });

  it('records a request the face refused before its client saw it as refused, not failed', async () => {
    const tool = mcpTool(async (ctx) => ctx.caller?.elicit?.({ mode: 'url', message: 'open', url: 'https://example.org' }, ctx.signal).catch((e: Error) => e.message));
    const h = harness({ tools: [tool] });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'up__ask', args: {} }, {
      caller: { elicit: async () => Promise.reject(new ToolError('the calling client did not declare elicitation in url mode', 'RELAY_REFUSED')) },
    });
    expect(lastDetail(h)).toBe('relayed to the caller: elicitation 1: 0 answered, 1 refused (the calling client did not declare elicitation in url mode)');
  });

  it('refuses a request made after the call ended, and never hands it to the caller', async () => {
    let late: ToolContext | undefined;
    let asked = 0;
    const tool = mcpTool(async (ctx) => void (late = ctx));
    const h = harness({ tools: [tool] });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'up__ask', args: {} }, { caller: { elicit: async () => ((asked += 1), { action: 'accept' }) } });
    await expect(late?.caller?.elicit?.({ message: 'too late' }, new AbortController().signal)).rejects.toMatchObject({ reason: 'RELAY_AFTER_CALL' });
    expect(asked).toBe(0);
  });

  it('aborts a request still waiting for its answer when the call ends at its deadline', async () => {
    let relaySignal: AbortSignal | undefined;
    const tool = testTool({ name: 'up__wait', provenance: 'mcp:up', risk: 'medium', timeoutMs: 100 }, async (_args, ctx) => {
      await ctx.caller?.elicit?.({ message: 'wait' }, ctx.signal);
      return null;
    });
    const h = harness({ tools: [tool] });
    const denial = denialOf(
      await h.gateway.invoke(h.who('worker-1'), { tool: 'up__wait', args: {} }, {
        caller: {
          elicit: (_params, signal) => {
            relaySignal = signal;
            return new Promise(() => undefined);
          },
        },
      }),
    );
    expect(denial.code).toBe('TIMEOUT');
    expect(relaySignal?.aborted).toBe(true);
    expect(lastDetail(h)).toMatch(/relayed to the caller: elicitation 1: 0 answered/);
  });
});

describe('cancellation audit', () => {
  it('records a call the caller cancelled as cancelled, keeping EXECUTION_FAILED', async () => {
    const caller = new AbortController();
    const tool = testTool({ name: 'slow', timeoutMs: 5000 }, () => {
      setTimeout(() => caller.abort(), 10);
      return new Promise(() => undefined);
    });
    const h = harness({ tools: [tool] });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'slow', args: {} }, { signal: caller.signal }));
    expect(denial).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED', data: { reason: 'CANCELLED' } });
    expect(h.audit.records.at(-1)).toMatchObject({ event: 'denied', gate: 'execute', code: 'EXECUTION_FAILED', detail: 'cancelled by the caller' });
  });

  it('records a call cancelled before it ran the same way', async () => {
    const caller = new AbortController();
    caller.abort();
    const h = harness({ tools: [testTool({ name: 't' })] });
    denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 't', args: {} }, { signal: caller.signal }));
    expect(h.audit.records.at(-1)).toMatchObject({ event: 'denied', code: 'EXECUTION_FAILED', detail: 'cancelled by the caller' });
  });

  it('says what a cancelled call had relayed', async () => {
    const caller = new AbortController();
    const tool = testTool({ name: 'slow', timeoutMs: 5000 }, (_args, ctx) => {
      ctx.progress?.({ progress: 1 });
      setTimeout(() => caller.abort(), 10);
      return new Promise(() => undefined);
    });
    const h = harness({ tools: [tool] });
    await h.gateway.invoke(h.who('worker-1'), { tool: 'slow', args: {} }, { signal: caller.signal, progress: () => undefined });
    expect(lastDetail(h)).toBe('cancelled by the caller; relayed to the caller: progress 1');
  });

  it('a deadline is still TIMEOUT, not a cancellation', async () => {
    const tool = testTool({ name: 'slow', timeoutMs: 30 }, () => new Promise(() => undefined));
    const h = harness({ tools: [tool] });
    denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'slow', args: {} }, { signal: new AbortController().signal }));
    expect(h.audit.records.at(-1)).toMatchObject({ event: 'failed', code: 'TIMEOUT' });
    expect(h.audit.records.at(-1)?.detail).not.toMatch(/cancelled/);
  });
});
