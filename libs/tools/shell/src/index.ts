import type { ToolDefinition } from '@toolgate/contracts';
import { bashTool } from './bash.tool.js';
import { gitTool } from './git.tool.js';
import { shellLimits, type ShellToolsOptions } from './shell-limits.js';
import { WorkspaceLocks } from './workspace-lock.js';

export { DEADLINE_RESERVE_MS, type ShellToolsOptions } from './shell-limits.js';
export { GIT_SUBCOMMANDS, REFUSED_OPTIONS, PROTECTIVE_CONFIG, checkGitArgs } from './git-policy.js';
export { MAX_BASH_COMMAND_BYTES } from './bash.tool.js';

/**
 * The `bash` and `git` tools at the tier of the given executor (`TOOLGATE_SHELL_TIER`). Both are
 * `high` risk (every call needs an approval) with the `exec` permission, and run every process
 * through the call's `ctx.process`, so the tier's isolation applies to what actually runs; their
 * descriptions quote the executor's own isolation summary rather than describing sandboxes here.
 */
export function createShellTools(options: ShellToolsOptions): ToolDefinition[] {
  const limits = shellLimits(options);
  // One set of locks for both tools: a git call must exclude bash calls of its workspace too.
  const locks = new WorkspaceLocks();
  return [bashTool(limits, locks), gitTool(limits, locks)];
}
