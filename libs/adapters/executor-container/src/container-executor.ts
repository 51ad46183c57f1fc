import type { ExecutionOutcome, ExecutorIsolation, JsonObject, ToolContext, ToolExecutor, ToolHandler } from '@toolgate/contracts';
import { ContainerRunner, type ContainerRunnerOptions } from './container-runner.js';
import { executeWithProcesses } from '@toolgate/adapter-kit-process';

/**
 * The container tier. The handler runs in the gateway's process; every process it starts runs
 * in a fresh, network-less, read-only, capability-less container with the workspace as its only
 * mount. `check()` rejects when no engine answers, the image is missing, or one trial container
 * from it cannot be started with the confinement every run uses, so a server configured for this
 * tier refuses to start (and never offers the tier) instead of failing every call or falling back
 * to a weaker tier.
 */
export class ContainerExecutor implements ToolExecutor {
  readonly tier = 'container' as const;
  readonly isolation: ExecutorIsolation = {
    summary: 'It runs in a container that sees only the workspace (at /workspace), with no network (container tier).',
  };
  readonly processes: ContainerRunner;

  constructor(options: ContainerRunnerOptions) {
    this.processes = new ContainerRunner(options);
  }

  check(): Promise<void> {
    return this.processes.probe();
  }

  execute(handler: ToolHandler, args: JsonObject, ctx: ToolContext, timeoutMs: number): Promise<ExecutionOutcome> {
    return executeWithProcesses(this.processes, handler, args, ctx, timeoutMs);
  }
}
