import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PathEscapeError,
  ToolAbortedError,
  ToolError,
  type ExecutorTier,
  type JsonValue,
  type ProcessLimits,
  type ProcessSpec,
  type ProcessRunner,
  type ToolContext,
  type ToolExecutor,
  type ToolHandler,
} from '@toolgate/contracts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testToolContext } from '../fakes/tool-context.js';
import { livingProcesses, sleepMarker, untilEmpty } from './processes.js';

export { livingProcesses, livingGroupMembers, sleepMarker, untilEmpty } from './processes.js';

/** Polls until `done()` holds or `withinMs` passes. */
async function untilSettled(done: () => boolean, withinMs: number): Promise<void> {
  const until = Date.now() + withinMs;
  while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}

/** How to build the executor under test. */
export interface ExecutorSuiteOptions {
  /** The tier the executor must report. */
  readonly tier: ExecutorTier;
  /** Called once for the suite; `check()` must resolve on this machine. */
  readonly create: () => ToolExecutor | Promise<ToolExecutor>;
}

const SECRET_NAME = 'TOOLGATE_TEST_SECRET';
const SECRET_VALUE = 'hunter2-must-never-reach-a-tool';
/** Variables a sandbox may set itself; anything else equal to the server's value is a leak. */
const SANDBOX_OWN = new Set(['PATH', 'HOME', 'LANG', 'PWD', 'OLDPWD', 'SHLVL', '_', 'HOSTNAME', 'USER', 'LOGNAME', 'TMPDIR', 'TERM', 'container']);

/**
 * The behaviour every `ToolExecutor` must show, tier 0 included: its isolation summary, outcomes
 * for every way a handler can end, and the call deadline it owns (ADR 0033): reported at the
 * deadline for a handler that ignores its signal or never settles, never for a handler that
 * throws `ToolAbortedError` itself. Process tiers also run the `ProcessRunner` part: scrubbed
 * environment, confined working directory, stdin, output caps, floods, deadlines that leave no
 * process behind (SIGTERM ignored or not), and `prepare` for long-lived processes. Isolation a
 * tier adds on top (file system, network) is tested by that tier's own spec.
 */
export function testExecutor(options: ExecutorSuiteOptions): void {
  let executor: ToolExecutor;
  let base: string;
  let workspace: string;
  let markerText: string;

  beforeAll(async () => {
    process.env[SECRET_NAME] = SECRET_VALUE;
    executor = await options.create();
  });
  afterAll(() => {
    delete process.env[SECRET_NAME];
  });
  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-executor-')));
    workspace = join(base, 'tenant-a');
    markerText = `MARKER-${Math.random().toString(36).slice(2)}`;
    await mkdir(join(workspace, 'sub'), { recursive: true });
    await mkdir(join(base, 'outside'));
    await writeFile(join(workspace, 'marker.txt'), markerText);
    await writeFile(join(workspace, 'sub', 'here.txt'), 'in the subdirectory');
    await writeFile(join(base, 'outside', 'secret.txt'), 'outside the workspace');
    await symlink('../outside', join(workspace, 'escape'));
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  const context = (signal: AbortSignal = new AbortController().signal): ToolContext => testToolContext({ signal, workspaceRoot: workspace });
  const limits = (extra: Partial<ProcessLimits> = {}): ProcessLimits => ({
    workspaceRoot: workspace,
    timeoutMs: 10_000,
    maxOutputBytes: 64 * 1024,
    ...extra,
  });
  const runner = (): ProcessRunner => {
    if (!executor.processes) throw new Error(`tier ${options.tier} has no process runner`);
    return executor.processes;
  };
  const processTier = options.tier !== 'inprocess';

  /** Runs a handler; the outcome and how long the executor took to report it. */
  const timed = async (handler: ToolHandler, timeoutMs: number, ctx: ToolContext = context()) => {
    const started = performance.now();
    const outcome = await executor.execute(handler, {}, ctx, timeoutMs);
    return { outcome, elapsed: performance.now() - started };
  };

  describe('executing handlers', () => {
    it('reports its tier, passes its check, and has a process runner exactly at process tiers', async () => {
      expect(executor.tier).toBe(options.tier);
      await expect(executor.check()).resolves.toBeUndefined();
      expect(executor.processes !== undefined).toBe(processTier);
    });

    // What each tier's sentence must say is held by that tier's own spec; this is its shape, which
    // the tools that quote it (the shell tools' descriptions) rely on.
    it('describes what it isolates in one sentence that names the tier', () => {
      const { summary } = executor.isolation;
      expect(typeof summary).toBe('string');
      expect(summary.trim()).toBe(summary);
      expect(summary).toMatch(/^It runs [^\n]+\(([^()]*tier[^()]*)\)\.$/);
      expect(summary.length).toBeLessThan(240);
    });

    it('returns the handler output and passes the arguments and the context through', async () => {
      const seen: JsonValue[] = [];
      const handler: ToolHandler = {
        async invoke(args, ctx) {
          seen.push(args, ctx.callId, ctx.principal.id, ctx.workspaceRoot, ctx.signal.aborted);
          return { echo: args['x'] ?? null };
        },
      };
      await expect(executor.execute(handler, { x: [1, 'two'] }, context(), 5000)).resolves.toEqual({ status: 'returned', output: { echo: [1, 'two'] } });
      expect(seen).toEqual([{ x: [1, 'two'] }, 'call-1', 'worker-1', workspace, false]);
    });

    // An MCP source's tool relays its upstream's progress and requests through these (ADR 0054).
    it("passes the caller's progress sink and requests through to the handler unchanged", async () => {
      const progress = (): void => undefined;
      const caller = { elicit: async () => ({ action: 'decline' }) };
      const handler: ToolHandler = { invoke: async (_args, ctx) => ctx.progress === progress && ctx.caller === caller };
      await expect(executor.execute(handler, {}, { ...context(), progress, caller }, 5000)).resolves.toEqual({ status: 'returned', output: true });
    });

    it('gives the handler a process runner at process tiers and none at tier 0', async () => {
      const handler: ToolHandler = { invoke: async (_args, ctx) => ctx.process !== undefined };
      await expect(executor.execute(handler, {}, context(), 5000)).resolves.toEqual({ status: 'returned', output: processTier });
    });

    it('reports the very error the handler threw, including a synchronous throw, and never rejects for it', async () => {
      const failure = new ToolError('the file is locked', 'LOCKED');
      const rejected = await executor.execute({ invoke: () => Promise.reject(failure) }, {}, context(), 5000);
      expect(rejected).toEqual({ status: 'threw', error: failure });
      expect(rejected.status === 'threw' && rejected.error).toBe(failure);
      const sync: ToolHandler = {
        invoke: () => {
          throw new Error('synchronous');
        },
      };
      await expect(executor.execute(sync, {}, context(), 5000)).resolves.toMatchObject({ status: 'threw', error: { message: 'synchronous' } });
    });

    describe('the call deadline (the executor owns it)', () => {
      it('reports the deadline for a handler that ignores its signal, aborts that signal, and discards the late result', async () => {
        let signal: AbortSignal | undefined;
        let finished = false;
        const stubborn: ToolHandler = {
          invoke: (_args, ctx) => {
            signal = ctx.signal;
            return new Promise((resolve) =>
              setTimeout(() => {
                finished = true;
                resolve('late');
              }, 600),
            );
          },
        };
        const { outcome, elapsed } = await timed(stubborn, 50);
        expect(outcome).toEqual({ status: 'deadline', timeoutMs: 50 });
        expect(elapsed).toBeGreaterThanOrEqual(45);
        expect(elapsed).toBeLessThan(500);
        expect(finished).toBe(false);
        expect(signal?.aborted).toBe(true);
        expect(signal?.reason).toBeInstanceOf(ToolAbortedError);
        expect((signal?.reason as Error).message).toMatch(/timed out after 50 ms/);
      });

      it('reports the deadline for a handler that never settles at all', async () => {
        const { outcome, elapsed } = await timed({ invoke: () => new Promise(() => undefined) }, 60);
        expect(outcome).toEqual({ status: 'deadline', timeoutMs: 60 });
        expect(elapsed).toBeGreaterThanOrEqual(55);
        expect(elapsed).toBeLessThan(500);
      });

      it('reports the deadline, not the error, for a handler that gives up with ToolAbortedError when its signal fires', async () => {
        const obedient: ToolHandler = {
          invoke: (_args, ctx) =>
            new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new ToolAbortedError('I stopped')), { once: true })),
        };
        await expect(timed(obedient, 50).then((r) => r.outcome)).resolves.toEqual({ status: 'deadline', timeoutMs: 50 });
      });

      it.each([
        ['throws', () => Promise.reject(new ToolAbortedError('late'))],
        ['throws synchronously', () => {
          throw new Error('late');
        }],
      ] as const)('reports the deadline for a handler that holds the event loop past it and then %s', async (_how, end) => {
        // No timer can fire while the loop is held, so only the executor's clock sees the deadline pass.
        const blocking: ToolHandler = {
          invoke: () => {
            const until = performance.now() + 150;
            while (performance.now() < until) {
              // Busy: the deadline passes with the loop held.
            }
            return end();
          },
        };
        await expect(timed(blocking, 40).then((r) => r.outcome)).resolves.toEqual({ status: 'deadline', timeoutMs: 40 });
      });

      describe('forged timeouts', () => {
        const forgeries: [string, () => Error][] = [
          ['a ToolAbortedError naming a timeout', () => new ToolAbortedError('timed out after 50 ms')],
          ['a plain ToolAbortedError', () => new ToolAbortedError()],
          ['a ToolError with reason ABORTED', () => new ToolError('timed out after 50 ms', 'ABORTED')],
          ['a ToolError with reason TIMEOUT', () => new ToolError('timed out', 'TIMEOUT')],
          ['an AbortError DOMException', () => new DOMException('This operation was aborted', 'AbortError')],
        ];
        for (const [name, forge] of forgeries) {
          it(`reports ${name} thrown early as the handler's error, not as the deadline`, async () => {
            const error = forge();
            const { outcome, elapsed } = await timed({ invoke: () => Promise.reject(error) }, 5000);
            expect(outcome).toEqual({ status: 'threw', error });
            expect(elapsed).toBeLessThan(1000);
          });
        }

        it('reports a handler that returns something shaped like a deadline outcome as its output', async () => {
          const shaped = { status: 'deadline', timeoutMs: 5000 };
          await expect(executor.execute({ invoke: async () => shaped }, {}, context(), 5000)).resolves.toEqual({ status: 'returned', output: shaped });
        });
      });

      it('treats a deadline beyond what a timer holds as the longest one, not as an immediate timeout', async () => {
        const handler: ToolHandler = { invoke: () => new Promise((resolve) => setTimeout(() => resolve('done'), 30)) };
        await expect(executor.execute(handler, {}, context(), 2 ** 31 + 10)).resolves.toEqual({ status: 'returned', output: 'done' });
      });
    });

    it("reports the caller's signal firing as aborted, never as the deadline, and never starts a call whose signal already fired", async () => {
      const caller = new AbortController();
      let signal: AbortSignal | undefined;
      const pending = executor.execute(
        {
          invoke: (_args, ctx) => {
            signal = ctx.signal;
            return new Promise(() => undefined);
          },
        },
        {},
        context(caller.signal),
        10_000,
      );
      setTimeout(() => caller.abort(), 20);
      await expect(pending).resolves.toEqual({ status: 'aborted' });
      expect(signal?.aborted).toBe(true);

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

    it('refuses a timeout that is not a positive number', async () => {
      const handler: ToolHandler = { invoke: async () => null };
      for (const timeoutMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(executor.execute(handler, {}, context(), timeoutMs), String(timeoutMs)).rejects.toThrow(RangeError);
      }
    });
  });

  // Process tests are registered only for process tiers: at tier 0 they do not apply, and a
  // skipped test would read as something left untested.
  if (processTier) describe('running processes', () => {
    it('runs a command in the workspace and returns its exit code and output', async () => {
      const result = await runner().run({ command: 'cat', args: ['marker.txt'] }, limits());
      expect(result).toMatchObject({ exitCode: 0, signal: null, stdout: markerText, stderr: '', timedOut: false });
      expect(result.stdoutTruncated || result.stderrTruncated).toBe(false);
      expect(result.durationMs).toBeGreaterThanOrEqual(0);
    });

    it('reports a failing exit code and stderr', async () => {
      const result = await runner().run({ command: 'sh', args: ['-c', 'echo out; echo err >&2; exit 3'] }, limits());
      expect(result).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false });
    });

    it('feeds stdin to the process', async () => {
      const result = await runner().run({ command: 'sh', args: ['-c', 'tr a-z A-Z'], stdin: 'hello\nworld\n' }, limits());
      expect(result.stdout).toBe('HELLO\nWORLD\n');
    });

    it('gives a process an empty stdin when none is specified', async () => {
      const result = await runner().run({ command: 'sh', args: ['-c', 'cat; echo done'] }, limits({ timeoutMs: 5000 }));
      expect(result).toMatchObject({ exitCode: 0, stdout: 'done\n', timedOut: false });
    });

    it("never passes the server's environment on: only the spec's variables and a minimal PATH/HOME/LANG", async () => {
      const result = await runner().run({ command: 'env', args: [], env: { GREETING: 'hello there' } }, limits());
      expect(result.exitCode).toBe(0);
      expect(result.stdout).not.toContain(SECRET_VALUE);
      expect(result.stdout).not.toContain(SECRET_NAME);
      const seen = new Map(
        result.stdout
          .split('\n')
          .filter((line) => line.includes('='))
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const),
      );
      expect(seen.get('GREETING')).toBe('hello there');
      expect(seen.get('PATH')).toBeTruthy();
      expect(seen.get('PATH')).not.toContain('node_modules');
      for (const [name, value] of Object.entries(process.env)) {
        if (SANDBOX_OWN.has(name) || value === undefined || value === '') continue;
        expect(seen.get(name), `server variable ${name} leaked`).not.toBe(value);
      }
    });

    it('sets HOME to the workspace', async () => {
      const result = await runner().run({ command: 'sh', args: ['-c', 'cat "$HOME/marker.txt"'] }, limits());
      expect(result.stdout).toBe(markerText);
    });

    it('runs in a subdirectory of the workspace given relative to it', async () => {
      const result = await runner().run({ command: 'cat', args: ['here.txt'], cwd: 'sub' }, limits());
      expect(result.stdout).toBe('in the subdirectory');
      const dotted = await runner().run({ command: 'cat', args: ['here.txt'], cwd: './sub/../sub/' }, limits());
      expect(dotted.stdout).toBe('in the subdirectory');
    });

    it('refuses a working directory outside the workspace, naming the path as given', async () => {
      for (const cwd of ['..', '../outside', 'sub/../../outside', join(base, 'outside'), '/', 'escape', 'escape/']) {
        const error = await runner()
          .run({ command: 'true', args: [], cwd }, limits())
          .catch((e: unknown) => e);
        expect(error, cwd).toBeInstanceOf(PathEscapeError);
        expect((error as Error).message).toContain(`'${cwd}'`);
      }
      const missing = await runner()
        .run({ command: 'true', args: [], cwd: 'no-such-dir' }, limits())
        .catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(ToolError);
      expect((missing as ToolError).reason).toBe('NOT_FOUND');
      expect((missing as Error).message).not.toContain(base);
    });

    it('refuses malformed specs before starting anything', async () => {
      const cases: ProcessSpec[] = [
        { command: '', args: [] },
        { command: 'echo', args: ['a\0b'] },
        { command: 'env', args: [], env: { 'BAD-NAME': 'x' } },
        { command: 'env', args: [], env: { 'A=B': 'x' } },
        { command: 'env', args: [], env: { OK: 'nul\0byte' } },
      ];
      for (const spec of cases) {
        const error = await runner()
          .run(spec, limits())
          .catch((e: unknown) => e);
        expect(error, JSON.stringify(spec)).toBeInstanceOf(ToolError);
      }
    });

    it('reports a command that does not exist as COMMAND_NOT_FOUND', async () => {
      const error = await runner()
        .run({ command: 'toolgate-no-such-command', args: [] }, limits())
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ToolError);
      expect((error as ToolError).reason).toBe('COMMAND_NOT_FOUND');
      expect((error as Error).message).toContain('toolgate-no-such-command');
    });

    it('writes inside the workspace', async () => {
      const result = await runner().run({ command: 'sh', args: ['-c', 'echo written > sub/new.txt'] }, limits());
      expect(result.exitCode).toBe(0);
      await expect(readFile(join(workspace, 'sub', 'new.txt'), 'utf8')).resolves.toBe('written\n');
    });

    it('cuts output at the cap per stream, marks it truncated, and never splits a UTF-8 character', async () => {
      const result = await runner().run(
        { command: 'sh', args: ['-c', 'head -c 3000 /dev/zero | tr "\\0" a; head -c 10 /dev/zero | tr "\\0" b >&2'] },
        limits({ maxOutputBytes: 1000 }),
      );
      expect(result.stdout).toBe('a'.repeat(1000));
      expect(result.stdoutTruncated).toBe(true);
      expect(result.stderr).toBe('b'.repeat(10));
      expect(result.stderrTruncated).toBe(false);

      // 'é' is two bytes: a cap of 1001 bytes holds 500 whole characters and half of one more.
      const accents = await runner().run(
        { command: 'sh', args: ['-c', 'i=0; while [ $i -lt 100 ]; do printf "éééééééééé"; i=$((i+1)); done'] },
        limits({ maxOutputBytes: 1001 }),
      );
      expect(accents.stdoutTruncated).toBe(true);
      expect(accents.stdout).toBe('é'.repeat(500));
    });

    it('stops a process that floods its output, with bounded output and well before the deadline', async () => {
      const result = await runner().run({ command: 'yes', args: [] }, limits({ maxOutputBytes: 1024, timeoutMs: 15_000 }));
      expect(result.stdout.length).toBe(1024);
      expect(result.stdoutTruncated).toBe(true);
      expect(result.timedOut).toBe(false);
      expect(result.signal !== null || result.exitCode !== 0).toBe(true);
      expect(result.durationMs).toBeLessThan(5000);
    });

    it('kills the whole process tree at the deadline, even children that ignore SIGTERM, and leaves no process behind', async () => {
      const marker = sleepMarker();
      const started = performance.now();
      // Long enough for a container to start on a loaded machine, so the shell is running when it hits.
      const result = await runner().run(
        { command: 'sh', args: ['-c', `trap "" TERM; echo started; sleep ${marker} & sleep ${marker} & wait`] },
        limits({ timeoutMs: 1500 }),
      );
      const elapsed = performance.now() - started;
      expect(result.timedOut).toBe(true);
      expect(result.stdout).toBe('started\n');
      expect(elapsed).toBeGreaterThanOrEqual(1490);
      expect(elapsed).toBeLessThan(9200);
      expect(await untilEmpty(() => livingProcesses(marker), 2000)).toEqual([]);
    });

    it('stops the process and rejects with ToolAbortedError when the limits signal fires', async () => {
      const marker = sleepMarker();
      const controller = new AbortController();
      const pending = runner().run({ command: 'sh', args: ['-c', `sleep ${marker} & wait`] }, limits({ signal: controller.signal }));
      setTimeout(() => controller.abort(), 200);
      await expect(pending).rejects.toBeInstanceOf(ToolAbortedError);
      expect(await untilEmpty(() => livingProcesses(marker), 3000)).toEqual([]);

      const already = new AbortController();
      already.abort();
      await expect(runner().run({ command: 'true', args: [] }, limits({ signal: already.signal }))).rejects.toBeInstanceOf(
        ToolAbortedError,
      );
    });

    it("kills processes a handler started when the call's deadline passes, even if the handler did not pass its signal on", async () => {
      const marker = sleepMarker();
      const careless: ToolHandler = {
        async invoke(_args, ctx) {
          if (!ctx.process) throw new Error('no runner');
          const result = await ctx.process.run(
            { command: 'sleep', args: [marker] },
            { workspaceRoot: ctx.workspaceRoot, timeoutMs: 60_000, maxOutputBytes: 1024 },
          );
          return result.exitCode;
        },
      };
      await expect(executor.execute(careless, {}, context(), 400)).resolves.toEqual({ status: 'deadline', timeoutMs: 400 });
      expect(await untilEmpty(() => livingProcesses(marker), 4000)).toEqual([]);
    });

    it("kills a call's processes that ignore SIGTERM at the call's deadline, well before their own timeout", async () => {
      const marker = sleepMarker();
      let result: unknown;
      const stubborn: ToolHandler = {
        async invoke(_args, ctx) {
          if (!ctx.process) throw new Error('no runner');
          // The process asks for a minute of its own; the call allows 400 ms.
          result = await ctx.process
            .run(
              { command: 'sh', args: ['-c', `trap "" TERM; sleep ${marker} & sleep ${marker} & wait; wait`] },
              { workspaceRoot: ctx.workspaceRoot, timeoutMs: 60_000, maxOutputBytes: 1024, signal: ctx.signal },
            )
            .catch((e: unknown) => e);
          return 'finished';
        },
      };
      const { outcome, elapsed } = await timed(stubborn, 400);
      expect(outcome).toEqual({ status: 'deadline', timeoutMs: 400 });
      expect(elapsed).toBeLessThan(2000);
      // Past the kill grace the group is SIGKILLed: nothing is left, and the run reports the abort.
      expect(await untilEmpty(() => livingProcesses(marker), 5000)).toEqual([]);
      await untilSettled(() => result !== undefined, 5000);
      expect(result).toBeInstanceOf(ToolAbortedError);
    });

    it('keeps a process timeout a tool asks for its own: the process is killed at it and the handler reports', async () => {
      const marker = sleepMarker();
      const patient: ToolHandler = {
        async invoke(_args, ctx) {
          if (!ctx.process) throw new Error('no runner');
          const run = await ctx.process.run(
            { command: 'sh', args: ['-c', `sleep ${marker}`] },
            { workspaceRoot: ctx.workspaceRoot, timeoutMs: 300, maxOutputBytes: 1024, signal: ctx.signal },
          );
          return { timedOut: run.timedOut };
        },
      };
      await expect(executor.execute(patient, {}, context(), 10_000)).resolves.toEqual({ status: 'returned', output: { timedOut: true } });
      expect(await untilEmpty(() => livingProcesses(marker), 3000)).toEqual([]);
    });

    it("lets a handler's processes run only in the call's own workspace", async () => {
      const elsewhere: ToolHandler = {
        async invoke(_args, ctx) {
          if (!ctx.process) throw new Error('no runner');
          await ctx.process.run({ command: 'true', args: [] }, { workspaceRoot: join(base, 'outside'), timeoutMs: 1000, maxOutputBytes: 10 });
          return 'ran';
        },
      };
      const refused = await executor.execute(elsewhere, {}, context(), 5000);
      expect(refused.status === 'threw' && refused.error).toBeInstanceOf(ToolError);
      const inside: ToolHandler = {
        async invoke(_args, ctx) {
          if (!ctx.process) throw new Error('no runner');
          const result = await ctx.process.run({ command: 'cat', args: ['marker.txt'] }, { workspaceRoot: ctx.workspaceRoot, timeoutMs: 5000, maxOutputBytes: 1024 });
          return result.stdout;
        },
      };
      await expect(executor.execute(inside, {}, context(), 10_000)).resolves.toEqual({ status: 'returned', output: markerText });
    });

    it('prepares a long-lived command that runs in the workspace with the scrubbed environment', async () => {
      const prepared = runner().prepare(
        { command: 'sh', args: ['-c', 'cat marker.txt; echo; read line; echo "got $line"; env'], env: { GREETING: 'hi' } },
        workspace,
      );
      expect(Object.values(prepared.env)).not.toContain(SECRET_VALUE);
      const child = spawn(prepared.command, [...prepared.args], {
        cwd: prepared.cwd,
        env: { ...prepared.env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const output: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
      child.stdin.end('PING\n');
      const code = await new Promise<number | null>((resolve, reject) => {
        const timer = setTimeout(() => {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
          reject(new Error('the prepared command did not finish'));
        }, 10_000);
        child.once('close', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      const text = Buffer.concat(output).toString('utf8');
      expect(code).toBe(0);
      expect(text).toContain(`${markerText}\ngot PING\n`);
      expect(text).toContain('GREETING=hi');
      expect(text).not.toContain(SECRET_VALUE);

      expect(() => runner().prepare({ command: 'true', args: [], cwd: '../outside' }, workspace)).toThrow(PathEscapeError);
      expect(() => runner().prepare({ command: 'true', args: [], cwd: 'escape' }, workspace)).toThrow(PathEscapeError);
      expect(() => runner().prepare({ command: 'env', args: [], env: { 'NOT VALID': '1' } }, workspace)).toThrow(ToolError);
    });
  });
}
