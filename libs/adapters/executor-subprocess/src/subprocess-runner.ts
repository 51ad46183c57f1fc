import type { PreparedCommand, ProcessLimits, ProcessResult, ProcessRunner, ProcessSpec } from '@toolgate/contracts';
import { resolveWorkingDirectory, superviseProcess, supervisionFrom, validateLimits, validateSpec, type Supervision } from '@toolgate/adapter-kit-process';

/** Tuning of the tier-1 runner. Every field has a default fit for tool calls. */
export interface SubprocessRunnerOptions extends Partial<Supervision> {
  /** `PATH` of every process. Default `/usr/local/bin:/usr/bin:/bin`. */
  readonly path?: string;
  /** `LANG` of every process. Default `C.UTF-8` (built into glibc ≥ 2.35, needs no locale files). */
  readonly lang?: string;
}

/**
 * Tier 1: runs each process directly on the host, in its own process group, with a scrubbed
 * environment, a working directory inside the workspace, capped output and a deadline that kills
 * the whole group. It does NOT confine the file system or the network: the process can read and
 * write whatever the server's user can. Use the bwrap or container tier for that.
 */
export class SubprocessRunner implements ProcessRunner {
  private readonly path: string;
  private readonly lang: string;
  private readonly supervision: Supervision;

  constructor(options: SubprocessRunnerOptions = {}) {
    if (process.platform === 'win32') throw new Error('the unisolated tier needs POSIX process groups');
    this.path = options.path ?? '/usr/local/bin:/usr/bin:/bin';
    this.lang = options.lang ?? 'C.UTF-8';
    this.supervision = supervisionFrom(options);
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
      const where = resolveWorkingDirectory(limits.workspaceRoot, spec.cwd);
      const env = this.environment(where.root, spec.env);
      return superviseProcess({ command: spec.command, args: spec.args, cwd: where.cwd, env, stdin: spec.stdin }, limits, this.supervision);
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
