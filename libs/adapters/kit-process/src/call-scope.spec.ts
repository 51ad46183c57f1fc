import {
  ToolAbortedError,
  ToolError,
  type JsonValue,
  type PreparedCommand,
  type ProcessLimits,
  type ProcessResult,
  type ProcessRunner,
  type ProcessSpec,
  type ToolContext,
  type ToolHandler,
} from '@toolgate/contracts';
import { testToolContext, timeLessCpuWait } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { executeWithProcesses, scopeRunner } from './call-scope.js';

const WORKSPACE = '/srv/toolgate/workspaces/tenant-a';
const RESULT: ProcessResult = { exitCode: 0, signal: null, stdout: '', stderr: '', stdoutTruncated: false, stderrTruncated: false, timedOut: false, durationMs: 1 };

/** A runner that records what reaches it; the scoping, not the running, is under test here. */
class RecordingRunner implements ProcessRunner {
  readonly runs: ProcessLimits[] = [];
  readonly prepared: string[] = [];
  async run(_spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult> {
    this.runs.push(limits);
    return RESULT;
  }
  prepare(spec: ProcessSpec, workspaceRoot: string): PreparedCommand {
    this.prepared.push(workspaceRoot);
    return { command: spec.command, args: spec.args, env: {}, cwd: workspaceRoot };
  }
}

const echo: ProcessSpec = { command: 'echo', args: [] };
const limits = (extra: Partial<ProcessLimits> = {}): ProcessLimits => ({ workspaceRoot: WORKSPACE, timeoutMs: 1000, maxOutputBytes: 64, ...extra });
const context = (signal: AbortSignal = new AbortController().signal): ToolContext => testToolContext({ signal, workspaceRoot: WORKSPACE });
const handler = (invoke: ToolHandler['invoke']): ToolHandler => ({ invoke });
const never = (): Promise<JsonValue> => new Promise(() => undefined);

describe('scopeRunner', () => {
  it("refuses another workspace with a rejected promise (not a throw) and never reaches the runner", async () => {
    const inner = new RecordingRunner();
    const scoped = scopeRunner(inner, WORKSPACE, new AbortController().signal);
    const running = scoped.run(echo, limits({ workspaceRoot: '/srv/toolgate/workspaces/tenant-b' }));
    await expect(running).rejects.toThrow(ToolError);
    await expect(running).rejects.toMatchObject({ reason: 'WORKSPACE_MISMATCH' });
    await expect(scoped.run(echo, limits({ workspaceRoot: 42 as unknown as string }))).rejects.toMatchObject({ reason: 'WORKSPACE_MISMATCH' });
    expect(inner.runs).toEqual([]);
  });

  it('accepts the same workspace spelled differently', async () => {
    const inner = new RecordingRunner();
    const scoped = scopeRunner(inner, WORKSPACE, new AbortController().signal);
    await scoped.run(echo, limits({ workspaceRoot: `${WORKSPACE}/sub/../` }));
    expect(inner.runs).toHaveLength(1);
  });

  it("hands the call's signal to every process when the handler passes none", async () => {
    const inner = new RecordingRunner();
    const call = new AbortController();
    await scopeRunner(inner, WORKSPACE, call.signal).run(echo, limits());
    expect(inner.runs[0]?.signal).toBe(call.signal);
  });

  it("combines the handler's own signal with the call's: either one stops the process", async () => {
    const inner = new RecordingRunner();
    const call = new AbortController();
    const own = new AbortController();
    await scopeRunner(inner, WORKSPACE, call.signal).run(echo, limits({ signal: own.signal }));
    const passed = inner.runs[0]?.signal;
    expect(passed?.aborted).toBe(false);
    call.abort(new ToolAbortedError('deadline'));
    expect(passed?.aborted).toBe(true);

    const second = new RecordingRunner();
    const otherOwn = new AbortController();
    await scopeRunner(second, WORKSPACE, new AbortController().signal).run(echo, limits({ signal: otherOwn.signal }));
    otherOwn.abort();
    expect(second.runs[0]?.signal?.aborted).toBe(true);
  });

  it('prepares only in the same workspace, throwing for another one', () => {
    const inner = new RecordingRunner();
    const scoped = scopeRunner(inner, WORKSPACE, new AbortController().signal);
    expect(scoped.prepare(echo, WORKSPACE).cwd).toBe(WORKSPACE);
    expect(() => scoped.prepare(echo, '/tmp')).toThrow("a process may only run in the call's own workspace");
    expect(inner.prepared).toEqual([WORKSPACE]);
  });
});

describe('executeWithProcesses', () => {
  it('reports the output and gives the handler a scoped runner and its own signal', async () => {
    const inner = new RecordingRunner();
    const caller = new AbortController();
    let seen: ToolContext | undefined;
    const output = await executeWithProcesses(
      inner,
      handler(async (args, ctx) => {
        seen = ctx;
        await ctx.process?.run(echo, limits());
        await expect(ctx.process?.run(echo, limits({ workspaceRoot: '/elsewhere' }))).rejects.toMatchObject({ reason: 'WORKSPACE_MISMATCH' });
        return { got: args['n'] ?? null };
      }),
      { n: 1 },
      context(caller.signal),
      1000,
    );
    expect(output).toEqual({ status: 'returned', output: { got: 1 } });
    expect(seen?.signal).not.toBe(caller.signal);
    expect(seen?.principal.id).toBe('worker-1');
    expect(inner.runs).toHaveLength(1);
    expect(inner.runs[0]?.signal).toBe(seen?.signal);
  });

  it('reports the deadline and aborts the handler signal with a ToolAbortedError saying so', async () => {
    let handlerSignal: AbortSignal | undefined;
    const running = executeWithProcesses(
      new RecordingRunner(),
      handler((_args, ctx) => {
        handlerSignal = ctx.signal;
        return never();
      }),
      {},
      context(),
      50,
    );
    const { ms } = await timeLessCpuWait(() => expect(running).resolves.toEqual({ status: 'deadline', timeoutMs: 50 }));
    expect(ms).toBeLessThan(2000);
    expect(handlerSignal?.aborted).toBe(true);
    expect(handlerSignal?.reason).toBeInstanceOf(ToolAbortedError);
    expect((handlerSignal?.reason as Error).message).toBe('timed out after 50 ms');
  });

  it("reports the caller's signal firing, and does not start a call whose signal already fired", async () => {
    const caller = new AbortController();
    let handlerSignal: AbortSignal | undefined;
    const running = executeWithProcesses(
      new RecordingRunner(),
      handler((_args, ctx) => {
        handlerSignal = ctx.signal;
        return never();
      }),
      {},
      context(caller.signal),
      10_000,
    );
    caller.abort();
    await expect(running).resolves.toEqual({ status: 'aborted' });
    expect(handlerSignal?.aborted).toBe(true);
    expect((handlerSignal?.reason as Error).message).toBe('the call was aborted');

    let invoked = false;
    const late = executeWithProcesses(
      new RecordingRunner(),
      handler(async () => {
        invoked = true;
        return null;
      }),
      {},
      context(caller.signal),
      10_000,
    );
    await expect(late).resolves.toEqual({ status: 'aborted' });
    expect(invoked).toBe(false);
  });

  it('reports the very error a handler throws, synchronously or not', async () => {
    const boom = new ToolError('boom', 'BOOM');
    const sync = handler(() => {
      throw boom;
    });
    const thrown = await executeWithProcesses(new RecordingRunner(), sync, {}, context(), 1000);
    expect(thrown).toEqual({ status: 'threw', error: boom });
    expect(thrown.status === 'threw' && thrown.error).toBe(boom);
    const rejected = await executeWithProcesses(new RecordingRunner(), handler(() => Promise.reject(boom)), {}, context(), 1000);
    expect(rejected.status === 'threw' && rejected.error).toBe(boom);
  });

  it.each([0, -5, Number.NaN, Number.POSITIVE_INFINITY])('refuses the timeout %s with RangeError', async (timeoutMs) => {
    await expect(executeWithProcesses(new RecordingRunner(), handler(async () => null), {}, context(), timeoutMs)).rejects.toThrow(RangeError);
  });

  it('treats a deadline beyond what setTimeout holds as the longest one, not as an immediate timeout', async () => {
    const output = await executeWithProcesses(
      new RecordingRunner(),
      handler(() => new Promise((resolve) => setTimeout(() => resolve('done'), 30))),
      {},
      context(),
      2 ** 31 + 10,
    );
    expect(output).toEqual({ status: 'returned', output: 'done' });
  });
});
