import type { JsonObject, JsonValue, ToolContext, ToolExecutor, ToolHandler } from '@toolgate/contracts';
import { BwrapRunner, type BwrapRunnerOptions } from './bwrap-runner.js';
import { executeWithProcesses } from '@toolgate/adapter-kit-process';

/**
 * Tier 2 (namespace sandbox). The handler runs in the gateway's process; every process it
 * starts runs in a bubblewrap sandbox that sees only the workspace, a read-only `/usr` and no
 * network. `check()` fails when bwrap is missing or cannot create namespaces, so a server
 * configured for this tier refuses to start instead of running tools unconfined.
 */
export class BwrapExecutor implements ToolExecutor {
  readonly tier = 'bwrap' as const;
  readonly processes: BwrapRunner;

  constructor(options: BwrapRunnerOptions = {}) {
    this.processes = new BwrapRunner(options);
  }

  check(): Promise<void> {
    return this.processes.probe();
  }

  execute(handler: ToolHandler, args: JsonObject, ctx: ToolContext, timeoutMs: number): Promise<JsonValue> {
    return executeWithProcesses(this.processes, handler, args, ctx, timeoutMs);
  }
}
