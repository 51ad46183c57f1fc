import { dirname } from 'node:path';
import { ToolError, type JsonObject, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
import { checkGitArgs, PROTECTIVE_CONFIG } from './git-policy.js';
import type { ShellToolLimits } from './shell-limits.js';
import { processTimeout, runInWorkspace, shellManifestBounds, timeoutArgSchema } from './shell-run.js';

export const MAX_GIT_ARGS = 64;
export const MAX_GIT_ARG_LENGTH = 4096;

/** A principal id or tenant as it may appear in a commit identity. */
function identityPart(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'unknown';
}

/**
 * The environment of every git run: no system or global configuration, no prompts, no pager or
 * editor, no repository discovery above the workspace, and commits attributed to the calling
 * principal (so the audit trail and the history agree).
 */
function gitEnvironment(ctx: ToolContext): Record<string, string> {
  const name = identityPart(ctx.principal.id);
  const email = `${name}@${identityPart(ctx.principal.tenant)}.toolgate.invalid`;
  return {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
    // At tier 1 the workspace sits inside the host's file system: never find a repository above it.
    GIT_CEILING_DIRECTORIES: dirname(ctx.workspaceRoot),
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
}

/** `git <args>` on the repository in the workspace, at the configured tier, with a refusal list. */
export function gitTool(limits: ShellToolLimits): ToolDefinition {
  return {
    manifest: {
      name: 'git',
      version: '1.0.0',
      description: `Runs git in the workspace, e.g. {"args": ["status"]} or {"args": ["commit", "-am", "message"]}. Local subcommands only (no clone, fetch, pull, push, config, submodule); options that run programs or reach outside the workspace are refused. Commits are attributed to the calling principal. ${limits.tierNote}`,
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
        const config = PROTECTIVE_CONFIG.flatMap((setting) => ['-c', setting]);
        return runInWorkspace(ctx, { command: 'git', args: [...config, ...gitArgs], env: gitEnvironment(ctx) }, timeoutMs, limits.maxOutputBytes);
      },
    },
  };
}
