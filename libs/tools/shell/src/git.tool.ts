import { ToolError, type JsonObject, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
import { gitEnvironment } from './git-environment.js';
import { checkGitArgs, gitPathOperands } from './git-policy.js';
import { checkRepositoryConfig } from './git-repository-config.js';
import { checkPathOperands, inspectWorkspace, refuseRepository } from './git-repository-guard.js';
import type { ShellToolLimits } from './shell-limits.js';
import { processTimeout, runInWorkspace, shellManifestBounds, timeoutArgSchema } from './shell-run.js';
import type { WorkspaceLocks } from './workspace-lock.js';

export const MAX_GIT_ARGS = 64;
export const MAX_GIT_ARG_LENGTH = 4096;

/** Cap of the config listing read before a run; a real `.git/config` is a few KiB. */
const CONFIG_LISTING_BYTES = 256 * 1024;
/** Longest the config listing may take, out of the call's process deadline. */
const CONFIG_CHECK_MS = 10_000;

/**
 * Reads `.git/config` with git's own parser (so what is checked is what git will use), through
 * the call's runner and with the same pinned environment, without following includes and
 * without running anything, then refuses any setting off the allowlist. Any failure refuses.
 */
async function checkConfig(ctx: ToolContext, env: Record<string, string>, timeoutMs: number): Promise<void> {
  const listing = await runInWorkspace(
    ctx,
    { command: 'git', args: ['config', '--file', '.git/config', '--no-includes', '--list', '-z'], env },
    Math.min(timeoutMs, CONFIG_CHECK_MS),
    CONFIG_LISTING_BYTES,
  );
  if (listing.timed_out || listing.signal !== null) refuseRepository('the repository config (.git/config) could not be read in time');
  if (listing.truncated) refuseRepository(`the repository config (.git/config) is larger than ${CONFIG_LISTING_BYTES} bytes`);
  if (listing.exit_code !== 0) {
    const line = /bad config line (\d+)/.exec(listing.stderr)?.[1];
    refuseRepository(`git cannot parse the repository config (.git/config)${line ? ` (bad config line ${line})` : ''}`);
  }
  checkRepositoryConfig(listing.stdout);
}

/** `git <args>` on the repository in the workspace, at the configured tier, with a refusal list. */
export function gitTool(limits: ShellToolLimits, locks: WorkspaceLocks): ToolDefinition {
  return {
    manifest: {
      name: 'git',
      version: '1.0.0',
      description: `Runs git in the workspace root on its .git repository, e.g. {"args": ["status"]} or {"args": ["commit", "-am", "message"]}. Local subcommands only (no clone, fetch, pull, push, config, submodule); options that run programs or reach outside the workspace are refused, and so are repositories whose configuration runs programs (filters, diff/merge drivers, aliases, includes) or that nest other repositories. Commits are attributed to the calling principal. ${limits.tierNote}`,
      provenance: 'first-party',
      risk: 'high',
      permissions: [{ type: 'exec', scope: '*' }],
      input: {
        type: 'object',
        properties: {
          args: {
            type: 'array',
            items: { type: 'string', maxLength: MAX_GIT_ARG_LENGTH },
            minItems: 1,
            maxItems: MAX_GIT_ARGS,
            description: 'Arguments after `git`, starting with the subcommand.',
          },
          timeout_ms: timeoutArgSchema(limits, 'git'),
        },
        required: ['args'],
        additionalProperties: false,
      },
      ...shellManifestBounds(limits),
    },
    handler: {
      async invoke(args: JsonObject, ctx: ToolContext) {
        const gitArgs = args['args'];
        if (!Array.isArray(gitArgs) || !gitArgs.every((a): a is string => typeof a === 'string')) {
          throw new ToolError("'args' must be a list of strings", 'INVALID_ARGUMENT');
        }
        if (gitArgs.length === 0 || gitArgs.length > MAX_GIT_ARGS) {
          throw new ToolError(`'args' must hold 1 to ${MAX_GIT_ARGS} items`, 'INVALID_ARGUMENT');
        }
        const tooLong = gitArgs.findIndex((a) => a.length > MAX_GIT_ARG_LENGTH);
        if (tooLong !== -1) throw new ToolError(`argument ${tooLong} is longer than ${MAX_GIT_ARG_LENGTH} characters`, 'INVALID_ARGUMENT');
        checkGitArgs(gitArgs);
        const timeoutMs = processTimeout(args, limits.maxProcessTimeoutMs);
        if (!ctx.process) {
          throw new ToolError('this tool runs processes and needs a process tier, but it was given no process runner', 'NO_PROCESS_RUNNER');
        }
        const started = Date.now();
        // Alone in the workspace from the first check until git exits: no other bash or git call
        // of the tenant can change what was checked before git reads it (WorkspaceLocks).
        const release = await locks.acquire(ctx.workspaceRoot, 'exclusive', ctx.signal);
        try {
          // Everything a file write could have planted is checked before git starts, in this order:
          // the layout (cheap, no process), the arguments' targets, then the config through git.
          const layout = await inspectWorkspace(ctx.workspaceRoot, { signal: ctx.signal });
          await checkPathOperands(ctx.workspaceRoot, gitPathOperands(gitArgs));
          const env = gitEnvironment(ctx.principal, ctx.workspaceRoot);
          const checkMs = Math.max(1, timeoutMs - (Date.now() - started));
          if (layout.config) await checkConfig(ctx, env, checkMs);
          const remainingMs = Math.max(1, timeoutMs - (Date.now() - started));
          return await runInWorkspace(ctx, { command: 'git', args: gitArgs, env }, remainingMs, limits.maxOutputBytes);
        } finally {
          release();
        }
      },
    },
  };
}
