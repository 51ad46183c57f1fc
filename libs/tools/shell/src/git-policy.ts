import { ToolError } from '@toolgate/contracts';

/**
 * Subcommands the git tool runs: work on the repository in the workspace. Left out on purpose:
 * anything that reaches a network or another repository (clone, fetch, pull, push, remote,
 * ls-remote, submodule, archive), changes what git executes (config, worktree), or runs
 * programs by design (rebase --exec/-i, bisect run, difftool, mergetool, filter-branch,
 * send-email, daemon, upload-pack, receive-pack, instaweb).
 */
export const GIT_SUBCOMMANDS: ReadonlySet<string> = new Set([
  'add',
  'apply',
  'blame',
  'branch',
  'cat-file',
  'checkout',
  'cherry-pick',
  'clean',
  'commit',
  'describe',
  'diff',
  'grep',
  'init',
  'log',
  'ls-files',
  'merge',
  'mv',
  'reflog',
  'reset',
  'restore',
  'rev-list',
  'rev-parse',
  'revert',
  'rm',
  'shortlog',
  'show',
  'stash',
  'status',
  'switch',
  'tag',
]);

/**
 * Options refused wherever they appear, and why. (Global options such as `-c`, `-C`,
 * `--git-dir`, `--work-tree`, `--exec-path` can only come before the subcommand, where no
 * option is accepted at all.)
 */
export const REFUSED_OPTIONS: ReadonlyMap<string, string> = new Map([
  ['--git-dir', 'points git at another repository'],
  ['--work-tree', 'points git at another directory'],
  ['--exec-path', 'makes git run programs from another directory'],
  ['--namespace', 'changes which references git sees'],
  ['--super-prefix', 'is internal to git'],
  ['--config-env', 'sets configuration that can run programs'],
  ['--upload-pack', 'runs a program'],
  ['--receive-pack', 'runs a program'],
  ['--exec', 'runs a program'],
  ['--ext-diff', 'runs an external diff program'],
  ['--textconv', 'runs text conversion programs'],
  ['--open-files-in-pager', 'runs a pager program'],
  ['--template', 'copies hooks from another directory'],
  ['--separate-git-dir', 'puts the repository outside the workspace'],
  ['--output', 'writes a file; read the output instead'],
  ['--gpg-sign', 'runs gpg'],
  ['--show-signature', 'runs gpg'],
  ['--sign', 'runs gpg'],
  ['--local-user', 'runs gpg'],
]);

/** Short options refused for particular subcommands (their meaning differs between subcommands). */
const REFUSED_SHORT: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map([
  ['grep', new Map([['O', 'runs a pager program']])],
  ['commit', new Map([['S', 'runs gpg']])],
  ['merge', new Map([['S', 'runs gpg']])],
  ['revert', new Map([['S', 'runs gpg']])],
  ['cherry-pick', new Map([['S', 'runs gpg']])],
  ['tag', new Map([['s', 'runs gpg'], ['u', 'runs gpg']])],
]);

/**
 * Configuration the tool sets on every run, overriding any in the repository: no hooks, no
 * fsmonitor program, no pager, no transport at all, no credential helper.
 */
export const PROTECTIVE_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.pager=cat',
  'protocol.allow=never',
  'credential.helper=',
];

function refuse(message: string): never {
  throw new ToolError(`git: ${message}`, 'GIT_ARGUMENT_REFUSED');
}

/** Whether a value names a path outside the workspace: absolute, home-relative, or climbing with `..`. */
function reachesOutside(value: string): boolean {
  return value.startsWith('/') || value.startsWith('~') || value.split('/').includes('..');
}

/**
 * Checks git arguments before anything runs. The first must be an allowed subcommand (so no
 * global option such as `-c`, `-C` or `--git-dir` can appear); refused options are refused in
 * any spelling (`--opt`, `--opt=value`, unambiguous prefixes are not accepted by matching the
 * whole name); no argument or option value may name a path outside the workspace or a
 * `transport::address` URL (`ext::` runs programs).
 */
export function checkGitArgs(args: readonly string[]): void {
  const [subcommand, ...rest] = args;
  if (subcommand === undefined) refuse('name a subcommand, e.g. ["status"]');
  if (subcommand.startsWith('-')) {
    refuse(`'${subcommand}': options before the subcommand are not accepted (-c, -C, --git-dir, --work-tree, --exec-path and the like reach outside the workspace or run programs)`);
  }
  if (!GIT_SUBCOMMANDS.has(subcommand)) {
    refuse(`'${subcommand}' is not available through this tool; allowed: ${[...GIT_SUBCOMMANDS].join(', ')}`);
  }
  const short = REFUSED_SHORT.get(subcommand);
  let endOfOptions = false;
  for (const arg of rest) {
    if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(arg)) refuse(`'${arg}': transport URLs are not accepted (ext:: runs programs)`);
    if (!endOfOptions && arg === '--') {
      endOfOptions = true;
      continue;
    }
    if (!endOfOptions && arg.startsWith('--')) {
      const [name = '', ...valueParts] = arg.split('=');
      const why = REFUSED_OPTIONS.get(name) ?? [...REFUSED_OPTIONS].find(([option]) => name.length > 3 && option.startsWith(name))?.[1];
      if (why) refuse(`'${name}' is refused: it ${why}`);
      if (valueParts.length > 0 && reachesOutside(valueParts.join('='))) refuse(`'${arg}' names a path outside the workspace`);
      continue;
    }
    if (!endOfOptions && arg.startsWith('-') && arg.length > 1) {
      // A cluster of short flags (`-aS`); letters after the first non-letter are a value. A
      // refused letter inside an attached value (`-mSave`) is refused too: spell it `-m Save`.
      const cluster = /^-([A-Za-z]+)/.exec(arg)?.[1] ?? '';
      for (const [letter, why] of short ?? []) {
        if (cluster.includes(letter)) refuse(`'-${letter}' is refused for git ${subcommand}: it ${why} (in '${arg}')`);
      }
      // An attached value (`-F/etc/passwd`) is checked like a separate one.
      if (arg.length > 2 && reachesOutside(arg.slice(2))) refuse(`'${arg}' names a path outside the workspace`);
      continue;
    }
    if (reachesOutside(arg)) refuse(`'${arg}' names a path outside the workspace`);
  }
}
