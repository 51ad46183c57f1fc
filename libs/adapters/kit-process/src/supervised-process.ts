import { spawn, type ChildProcess } from 'node:child_process';
import { ToolAbortedError, ToolError, type ProcessLimits, type ProcessResult } from '@toolgate/contracts';
import { CappedOutput } from './capped-output.js';

/** One host process to start: everything already validated and resolved. */
export interface SupervisedCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Absolute host directory. */
  readonly cwd: string;
  /** The complete environment; nothing is inherited. */
  readonly env: Readonly<Record<string, string>>;
  readonly stdin?: string;
}

/** How a supervised process is stopped. */
export interface Supervision {
  /** Between SIGTERM and SIGKILL when a deadline or an abort stops the process. */
  readonly killGraceMs: number;
  /** A stream producing more than `maxOutputBytes × floodFactor` bytes gets the group killed. */
  readonly floodFactor: number;
  /** After the process exits, how long to wait for a descendant that left the group to release the pipes. */
  readonly drainMs: number;
}

export const DEFAULT_SUPERVISION: Supervision = { killGraceMs: 1000, floodFactor: 4, drainMs: 500 };

/**
 * The supervision a runner's options ask for, each unset field at its default. Takes the
 * options object as given (a runner's options extend `Partial<Supervision>`) and keeps only
 * the supervision fields.
 */
export function supervisionFrom(options: Partial<Supervision>): Supervision {
  return {
    killGraceMs: options.killGraceMs ?? DEFAULT_SUPERVISION.killGraceMs,
    floodFactor: options.floodFactor ?? DEFAULT_SUPERVISION.floodFactor,
    drainMs: options.drainMs ?? DEFAULT_SUPERVISION.drainMs,
  };
}

type StopReason = 'timeout' | 'abort' | 'flood';

/**
 * Starts a process as the leader of its own process group and waits for it under the limits:
 * output kept up to the cap per stream (the rest counted and dropped; a flood past
 * `floodFactor × cap` kills the group), the group sent SIGTERM then SIGKILL at the deadline or
 * on abort, and whatever is left of the group killed as soon as the leader exits, so nothing the
 * command started outlives the call. Rejects with `ToolAbortedError` on abort (after the group
 * is dead) and with a `ToolError` if the command cannot be started.
 */
export function superviseProcess(cmd: SupervisedCommand, limits: ProcessLimits, supervision: Supervision): Promise<ProcessResult> {
  return new Promise<ProcessResult>((resolve, reject) => {
    if (limits.signal?.aborted) {
      reject(new ToolAbortedError('the call was aborted before the process started'));
      return;
    }
    const started = performance.now();
    let child: ChildProcess;
    try {
      // Never `shell: true`: the command runs as given; a shell runs only if it is the command.
      child = spawn(cmd.command, [...cmd.args], {
        cwd: cmd.cwd,
        env: { ...cmd.env },
        detached: true,
        stdio: [cmd.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
    } catch (error) {
      reject(spawnFailure(cmd.command, error));
      return;
    }

    const stdout = new CappedOutput(limits.maxOutputBytes);
    const stderr = new CappedOutput(limits.maxOutputBytes);
    const floodLimit = limits.maxOutputBytes * supervision.floodFactor;
    const timers: NodeJS.Timeout[] = [];
    let stopped: StopReason | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let finished = false;

    // A negative pid signals the whole group: the command and everything it started.
    const killGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const stop = (reason: StopReason, graceful: boolean): void => {
      if (stopped) return;
      stopped = reason;
      if (!graceful) return killGroup('SIGKILL');
      killGroup('SIGTERM');
      timers.push(setTimeout(() => killGroup('SIGKILL'), supervision.killGraceMs));
    };
    const onAbort = (): void => stop('abort', true);
    const release = (): void => {
      finished = true;
      for (const timer of timers) clearTimeout(timer);
      limits.signal?.removeEventListener('abort', onAbort);
    };

    const finish = (): void => {
      if (finished) return;
      release();
      if (stopped === 'abort') {
        reject(new ToolAbortedError('the call was aborted; its process was stopped'));
        return;
      }
      resolve({
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        timedOut: stopped === 'timeout',
        durationMs: Math.round(performance.now() - started),
      });
    };

    const collect = (into: CappedOutput) => (chunk: Buffer) => {
      into.push(chunk);
      if (into.seen > floodLimit) stop('flood', false);
    };
    child.stdout?.on('data', collect(stdout));
    child.stderr?.on('data', collect(stderr));
    if (cmd.stdin !== undefined && child.stdin) {
      // A process that exits without reading its input makes the write fail with EPIPE; not an error of the run.
      child.stdin.on('error', () => undefined);
      child.stdin.end(cmd.stdin);
    }

    child.once('error', (error) => {
      if (finished || exit) return;
      release();
      killGroup('SIGKILL');
      reject(spawnFailure(cmd.command, error));
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      // Nothing the command started may outlive it: whatever is left of its group dies now.
      killGroup('SIGKILL');
      timers.push(
        setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish();
        }, supervision.drainMs),
      );
    });
    child.once('close', finish);

    timers.push(setTimeout(() => stop('timeout', true), limits.timeoutMs));
    limits.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A spawn failure as the caller should read it: the command as given, never an errno dump. */
function spawnFailure(command: string, error: unknown): ToolError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return new ToolError(`command '${command}' was not found on the PATH`, 'COMMAND_NOT_FOUND');
  if (code === 'EACCES') return new ToolError(`command '${command}' is not executable`, 'COMMAND_NOT_EXECUTABLE');
  return new ToolError(`command '${command}' could not be started${code ? ` (${code})` : ''}`, 'COMMAND_FAILED');
}
