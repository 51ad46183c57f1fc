import { dirname } from 'node:path';
import type { ToolContext } from '@toolgate/contracts';
import { PROTECTIVE_CONFIG } from './git-policy.js';

/**
 * Where git finds the repository and the work tree, relative to the working directory (always
 * the workspace root). Relative on purpose: the tiers show the workspace at different paths
 * (the host path at tier 1, `/workspace` in the sandboxes), and git resolves both against the
 * directory the process runs in, so the same values are right at every tier.
 */
export const GIT_DIR = '.git';
export const GIT_WORK_TREE = '.';

/** A principal id or tenant as it may appear in a commit identity. */
function identityPart(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'unknown';
}

/** {@link PROTECTIVE_CONFIG} as `GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_n`, `GIT_CONFIG_VALUE_n`. */
function commandScopeConfig(): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(PROTECTIVE_CONFIG.length) };
  for (const [index, setting] of PROTECTIVE_CONFIG.entries()) {
    const equals = setting.indexOf('=');
    env[`GIT_CONFIG_KEY_${index}`] = setting.slice(0, equals);
    env[`GIT_CONFIG_VALUE_${index}`] = setting.slice(equals + 1);
  }
  return env;
}

/**
 * The complete git-specific environment of every git run (the runner adds only PATH, LANG and
 * its own HOME, which this replaces). It pins the repository to `.git` and the work tree to the
 * workspace root, so git never discovers a repository: not a bare layout that file writes laid
 * out in the workspace root, not one above the workspace. It reads no system or global
 * configuration (HOME and XDG_CONFIG_HOME lead nowhere, so no `~/.gitconfig` or
 * `~/.config/git/*` written into the workspace counts), overrides every fixed-name setting that
 * runs a program ({@link PROTECTIVE_CONFIG}, highest precedence, inherited by every git process
 * git starts), allows no transport at all (`GIT_ALLOW_PROTOCOL` empty beats any configuration),
 * never prompts, and attributes commits to the calling principal (so the audit trail and the
 * history agree).
 */
export function gitEnvironment(principal: ToolContext['principal'], workspaceRoot: string): Record<string, string> {
  const name = identityPart(principal.id);
  const email = `${name}@${identityPart(principal.tenant)}.toolgate.invalid`;
  return {
    GIT_DIR,
    GIT_WORK_TREE,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    HOME: '/dev/null',
    XDG_CONFIG_HOME: '/dev/null',
    ...commandScopeConfig(),
    GIT_ALLOW_PROTOCOL: '',
    GIT_PROTOCOL_FROM_USER: '0',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
    // The pinned GIT_DIR already stops discovery; this also holds for any git process that is
    // started without it, at tier 1 where the workspace sits inside the host's file system.
    GIT_CEILING_DIRECTORIES: dirname(workspaceRoot),
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
}
