import type { PreparedCommand, ProcessResult, ProcessRunner, ProcessSpec } from '@toolgate/contracts';

/**
 * Stands in for a process tier's runner where a test needs only `prepare` (an MCP source starts
 * long-lived processes with it): the command unchanged, with the environment a real runner gives
 * (a minimal PATH/HOME/LANG plus the spec's own variables), spawned in the workspace. It isolates
 * nothing; the tiers' own runners run the shared `testExecutor` suite. `run` always rejects.
 */
export class PassThroughRunner implements ProcessRunner {
  /** Every `prepare` call, in order. */
  readonly prepared: { readonly spec: ProcessSpec; readonly workspaceRoot: string }[] = [];

  /** Rejects: a test that reaches it is using the wrong double. */
  async run(): Promise<ProcessResult> {
    throw new Error('PassThroughRunner only prepares commands; run() is not for this double');
  }

  /** The spec as a command line, recorded in {@link prepared}. */
  prepare(spec: ProcessSpec, workspaceRoot: string): PreparedCommand {
    this.prepared.push({ spec, workspaceRoot });
    return {
      command: spec.command,
      args: [...spec.args],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: workspaceRoot, LANG: 'C.UTF-8', ...spec.env },
      cwd: workspaceRoot,
    };
  }
}
