import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  ExecutionOutcome,
  ExecutorIsolation,
  JsonObject,
  ProcessRunner,
  ToolContext,
  ToolExecutor,
  ToolHandler,
} from '@toolgate/contracts';
import { executeWithProcesses } from '@toolgate/adapter-kit-process';
import { SubprocessRunner, type SubprocessRunnerOptions } from './subprocess-runner.js';

/**
 * Tier 1, named `unisolated` because it is not a sandbox. The handler runs in the gateway's process (like tier 0); every process it starts goes
 * through a {@link SubprocessRunner}: own process group, scrubbed environment, workspace as the
 * working directory, capped output, the whole group killed at the deadline. No file-system or
 * network confinement: a process can read and write whatever the server's user can (its data dir,
 * principals and keys included) and signal the server. Choose the bwrap or container tier for
 * untrusted commands.
 */
export class SubprocessExecutor implements ToolExecutor {
  readonly tier = 'unisolated' as const;
  readonly isolation: ExecutorIsolation = {
    summary: "It runs UNISOLATED as a host process with the server's user: it can read, write and signal whatever the server can, far beyond the workspace (tier 1).",
  };
  readonly processes: ProcessRunner;

  constructor(options: SubprocessRunnerOptions = {}) {
    this.processes = new SubprocessRunner(options);
  }

  /** Proves a process can be started and waited for in a scratch workspace. */
  async check(): Promise<void> {
    const scratch = await mkdtemp(join(tmpdir(), 'toolgate-check-'));
    try {
      const result = await this.processes
        .run({ command: 'sh', args: ['-c', 'exit 0'] }, { workspaceRoot: scratch, timeoutMs: 5000, maxOutputBytes: 4096 })
        .catch((error: unknown) => {
          throw new Error(`the unisolated tier cannot start 'sh': ${(error as Error).message}`);
        });
      if (result.exitCode !== 0) {
        throw new Error(`the unisolated tier cannot run 'sh' (${result.exitCode ?? result.signal}): ${result.stderr.trim()}`);
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  execute(handler: ToolHandler, args: JsonObject, ctx: ToolContext, timeoutMs: number): Promise<ExecutionOutcome> {
    return executeWithProcesses(this.processes, handler, args, ctx, timeoutMs);
  }
}
