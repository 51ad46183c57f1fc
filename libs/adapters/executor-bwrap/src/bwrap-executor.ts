import type { ExecutionOutcome, ExecutorIsolation, JsonObject, ToolContext, ToolExecutor, ToolHandler } from '@toolgate/contracts';
import { BwrapRunner, type BwrapRunnerOptions, type ResourceCapReport } from './bwrap-runner.js';
import { executeWithProcesses } from '@toolgate/adapter-kit-process';

/**
 * Tier 2 (namespace sandbox). The handler runs in the gateway's process; every process it
 * starts runs in a bubblewrap sandbox that sees only the workspace, a read-only `/usr` and no
 * network. `check()` fails when bwrap is missing or cannot create namespaces, so a server
 * configured for this tier refuses to start instead of running tools unconfined.
 */
export class BwrapExecutor implements ToolExecutor {
  readonly tier = 'bwrap' as const;
  readonly isolation: ExecutorIsolation = {
    summary: 'It runs in a sandbox that sees only the workspace (at /workspace), a read-only /usr and no network (tier 2).',
  };
  readonly processes: BwrapRunner;

  constructor(options: BwrapRunnerOptions = {}) {
    this.processes = new BwrapRunner(options);
  }

  check(): Promise<void> {
    return this.processes.probe();
  }

  /** Which per-call process and memory caps this host applies (decided once, by trial). */
  resourceCaps(): Promise<ResourceCapReport> {
    return this.processes.resourceCaps();
  }

  /**
   * The one warning line an operator must see at start when a call's processes or memory are not
   * capped by the kernel here, or undefined when both are.
   */
  async resourceCapWarning(): Promise<string | undefined> {
    return capWarning(await this.resourceCaps());
  }

  execute(handler: ToolHandler, args: JsonObject, ctx: ToolContext, timeoutMs: number): Promise<ExecutionOutcome> {
    return executeWithProcesses(this.processes, handler, args, ctx, timeoutMs);
  }
}

/** The start-up warning for a cap report, or undefined when both caps are cgroup caps. */
export function capWarning(report: ResourceCapReport): string | undefined {
  const { processes, memory, problems } = report;
  if (processes !== 'none' && memory !== 'rlimit' && memory !== 'none') return undefined;
  const why = problems.join('; ');
  const remedy = 'run the server as root on a host with the pids and memory cgroup controllers, or in a delegated cgroup v2 subtree with both enabled';
  if (processes === 'none' && memory === 'none') {
    return `no per-call process/memory cap: ${why}. One bash call can fork until the host's process table is full and allocate until the OOM killer picks another process (${remedy})`;
  }
  if (processes === 'none') {
    const mem = memory === 'rlimit' ? 'memory is capped only per process (RLIMIT_AS via prlimit)' : `memory is capped by ${memory}`;
    return `no per-call process cap: ${why}. One bash call can fork until the host's process table is full; ${mem} (${remedy})`;
  }
  if (memory === 'rlimit') {
    return `no per-call memory cap (only RLIMIT_AS per process via prlimit): ${why}. Many processes of one call can together exhaust the host's memory; processes are capped by ${processes} (${remedy})`;
  }
  return `no per-call memory cap: ${why}. One bash call can allocate until the OOM killer picks another process; processes are capped by ${processes} (${remedy})`;
}
