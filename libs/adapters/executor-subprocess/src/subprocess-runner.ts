import { spawn, type ChildProcess } from 'node:child_process';
import {
  ToolAbortedError,
  ToolError,
  type PreparedCommand,
  type ProcessLimits,
  type ProcessResult,
  type ProcessRunner,
  type ProcessSpec,
} from '@toolgate/contracts';
import { CappedOutput } from './capped-output.js';
import { resolveWorkingDirectory, validateLimits, validateSpec } from './process-spec.js';

/** Tuning of the tier-1 runner. Every field has a default fit for tool calls. */
export interface SubprocessRunnerOptions {
  /** `PATH` of every process. Default `/usr/local/bin:/usr/bin:/bin`. */
  readonly path?: string;
  /** `LANG` of every process. Default `C.UTF-8` (built into glibc ≥ 2.35, needs no locale files). */
  readonly lang?: string;
  /** Between SIGTERM and SIGKILL when a deadline or an abort stops a process. Default 1000 ms. */
  readonly killGraceMs?: number;
  /**
   * A stream that produces more than `maxOutputBytes × floodFactor` bytes gets its process group
   * killed: the caller sees only the cap anyway, so the rest is wasted work. Default 4.
   */
  readonly floodFactor?: number;
  /**
   * After the process exits, how long to wait for its output pipes to close. Only a descendant
   * that left the process group (`setsid`) can hold them longer; it is then cut off. Default 500 ms.
   */
  readonly drainMs?: number;
}

type StopReason = 'timeout' | 'abort' | 'flood';

/**
 * Tier 1: runs each process directly on the host, in its own process group, with a scrubbed
 * environment, a working directory inside the workspace, capped output and a deadline that kills
 * the whole group. It does NOT confine the file system or the network: the process can read and
 * write whatever the server's user can. Use the bwrap or container tier for that.
 */
export class SubprocessRunner implements ProcessRunner {
  private readonly path: string;
  private readonly lang: string;
  private readonly killGraceMs: number;
  private readonly floodFactor: number;
  private readonly drainMs: number;

  constructor(options: SubprocessRunnerOptions = {}) {
    this.path = options.path ?? '/usr/local/bin:/usr/bin:/bin';
    this.lang = options.lang ?? 'C.UTF-8';
    this.killGraceMs = options.killGraceMs ?? 1000;
    this.floodFactor = options.floodFactor ?? 4;
    this.drainMs = options.drainMs ?? 500;
    if (process.platform === 'win32') throw new Error('the subprocess tier needs POSIX process groups');
  }

  /**
   * The exact environment of a process: the minimal base (`PATH`, `HOME` = the workspace, `LANG`)
   * and what the spec names, which may override the base. Nothing is inherited from the server.
   */
  private environment(home: string, env: ProcessSpec['env']): Record<string, string> {
    return { PATH: this.path, HOME: home, LANG: this.lang, ...env };
  }

  /**
   * The command line of `spec` with its environment and resolved working directory. The caller
   * owns the process: start it with `detached: true` (its own process group) and kill that group
   * when done, because tier 1 has no other way to reach the descendants.
   */
  prepare(spec: ProcessSpec, workspaceRoot: string): PreparedCommand {
    validateSpec(spec);
    const where = resolveWorkingDirectory(workspaceRoot, spec.cwd);
    return { command: spec.command, args: [...spec.args], env: this.environment(where.root, spec.env), cwd: where.cwd };
  }

  run(spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult> {
    try {
      validateSpec(spec);
      validateLimits(limits);
      if (limits.signal?.aborted) throw new ToolAbortedError('the call was aborted before the process started');
      const where = resolveWorkingDirectory(limits.workspaceRoot, spec.cwd);
      return this.spawnAndWait(spec, limits, where.cwd, this.environment(where.root, spec.env));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private spawnAndWait(
    spec: ProcessSpec,
    limits: ProcessLimits,
    cwd: string,
    env: Record<string, string>,
  ): Promise<ProcessResult> {
    return new Promise<ProcessResult>((resolve, reject) => {
      const started = performance.now();
      let child: ChildProcess;
      try {
        // Never `shell: true`: the command runs as given; a shell runs only if the spec names one.
        child = spawn(spec.command, [...spec.args], {
          cwd,
          env,
          detached: true,
          stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        });
      } catch (error) {
        reject(spawnFailure(spec.command, error));
        return;
      }

      const stdout = new CappedOutput(limits.maxOutputBytes);
      const stderr = new CappedOutput(limits.maxOutputBytes);
      const floodLimit = limits.maxOutputBytes * this.floodFactor;
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
        timers.push(setTimeout(() => killGroup('SIGKILL'), this.killGraceMs));
      };
      const onAbort = (): void => stop('abort', true);

      const finish = (): void => {
        if (finished) return;
        finished = true;
        for (const timer of timers) clearTimeout(timer);
        limits.signal?.removeEventListener('abort', onAbort);
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
      if (spec.stdin !== undefined && child.stdin) {
        // A process that exits without reading its input makes the write fail with EPIPE; that is not an error of the run.
        child.stdin.on('error', () => undefined);
        child.stdin.end(spec.stdin);
      }

      child.once('error', (error) => {
        if (finished || exit) return;
        finished = true;
        for (const timer of timers) clearTimeout(timer);
        limits.signal?.removeEventListener('abort', onAbort);
        killGroup('SIGKILL');
        reject(spawnFailure(spec.command, error));
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
          }, this.drainMs),
        );
      });
      child.once('close', finish);

      timers.push(setTimeout(() => stop('timeout', true), limits.timeoutMs));
      limits.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** A spawn failure as the caller should read it: the command as given, never an errno dump. */
function spawnFailure(command: string, error: unknown): ToolError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return new ToolError(`command '${command}' was not found on the PATH`, 'COMMAND_NOT_FOUND');
  if (code === 'EACCES') return new ToolError(`command '${command}' is not executable`, 'COMMAND_NOT_EXECUTABLE');
  return new ToolError(`command '${command}' could not be started${code ? ` (${code})` : ''}`, 'COMMAND_FAILED');
}
