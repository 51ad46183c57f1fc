import { BwrapExecutor } from '@toolgate/adapter-executor-bwrap';
import { ContainerExecutor } from '@toolgate/adapter-executor-container';
import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { SubprocessExecutor } from '@toolgate/adapter-executor-subprocess';
import { ToolExecutorsToken, type ExecutorTier, type ProcessTier, type ToolExecutor } from '@toolgate/contracts';
import type { ServerConfig } from '../config.js';
import type { Log } from '../logger.js';
import { StartupError } from '../startup-error.js';
import { ConfigToken, LogToken, McpServersToken, ProcessTiersToken, ShellExecutorToken, type ProcessTiers } from '../tokens.js';
import type { Binder } from './binder.js';

/**
 * How each process tier's executor is built from the configuration: one row per `PROCESS_TIERS`
 * entry (the `satisfies` makes a tier without a row a type error). Tier 0 (`inprocess`) always runs.
 */
const PROCESS_EXECUTORS = {
  unisolated: () => new SubprocessExecutor(),
  bwrap: (config) =>
    new BwrapExecutor({ bwrapPath: config.bwrapPath, maxProcesses: config.sandboxMaxProcesses, memoryBytes: config.sandboxMemoryMb * 1024 * 1024 }),
  container: (config) => new ContainerExecutor({ image: config.containerImage }),
} satisfies Record<ProcessTier, (config: ServerConfig) => ToolExecutor>;

/**
 * Tier 0 always runs; a process tier only when the shell tools or an MCP server ask for it, and
 * only if its `check()` passes. An explicitly chosen shell tier that cannot run stops the server.
 * The default one (`bwrap`) that cannot run leaves bash and git out, said at start; an MCP
 * server whose tier cannot run is not started. Nothing ever falls back to a weaker tier.
 */
async function openExecutors(config: ServerConfig, mcpTiers: readonly ProcessTier[], log: Log): Promise<ProcessTiers> {
  const executors: ToolExecutor[] = [new InProcessExecutor()];
  const unusable = new Map<ExecutorTier, string>();
  for (const tier of new Set<ProcessTier>([config.shellTier, ...mcpTiers])) {
    const executor = PROCESS_EXECUTORS[tier](config);
    try {
      await executor.check();
      executors.push(executor);
      // A sandbox without kernel caps still runs (hosts without cgroups), but never silently.
      const capWarning = executor instanceof BwrapExecutor ? await executor.resourceCapWarning() : undefined;
      if (capWarning) log('warn', `sandbox tier 'bwrap': ${capWarning}`);
    } catch (error) {
      const reason = (error as Error).message;
      if (tier === config.shellTier && config.shellTierExplicit) {
        throw new StartupError(`sandbox tier '${tier}' (TOOLGATE_SHELL_TIER=${config.shellTier}) cannot run here: ${reason}`);
      }
      unusable.set(tier, reason);
    }
  }
  const shellUnusable = unusable.get(config.shellTier);
  if (shellUnusable !== undefined) {
    log(
      'warn',
      `bash and git are NOT offered: the default sandbox tier 'bwrap' cannot run here (${shellUnusable}). ` +
        'To offer them, install bubblewrap and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces > 0), ' +
        'or set TOOLGATE_SHELL_TIER=unisolated to run them as host processes that can read and signal whatever the server can',
    );
  } else if (config.shellTier === 'unisolated') {
    log(
      'warn',
      "TOOLGATE_SHELL_TIER=unisolated: bash and git run UNISOLATED as host processes with the server's user; they can read its data dir, principals and keys and signal it. Every call still needs an approval",
    );
  }
  return { executors, unusable };
}

/**
 * Port `ToolExecutor`: the executors of the tiers this server runs, checked at start (MCP
 * servers' tiers come from the servers file), and the one bash and git run at. Executors hold
 * nothing open between calls, so there is nothing to close.
 */
export function bindExecutors(binder: Binder): void {
  binder.resolved(ProcessTiersToken, { config: ConfigToken, log: LogToken, mcpServers: McpServersToken }, ({ config, log, mcpServers }) =>
    openExecutors(config, mcpServers.map((server) => server.tier), log),
  );
  binder.resolved(ToolExecutorsToken, { tiers: ProcessTiersToken }, ({ tiers }) => tiers.executors);
  binder.resolved(ShellExecutorToken, { config: ConfigToken, tiers: ProcessTiersToken }, ({ config, tiers }) =>
    tiers.executors.find((executor) => executor.tier === config.shellTier),
  );
}
