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
  ['--recurse-submodules', 'runs git in nested repositories, whose configuration this tool does not check'],
  ['--unsafe-paths', 'writes outside the work tree'],
  ['--build-fake-ancestor', 'writes an index file wherever it is told'],
]);

/**
 * Long options refused for one subcommand only, because elsewhere the same name is harmless
 * (`ls-files --directory` lists directories; `apply --directory` moves where a patch writes).
 */
const REFUSED_LONG: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map([
  ['apply', new Map([['--directory', 'moves where the patch writes']])],
  ['diff', new Map([['--no-index', 'compares files outside the repository']])],
  ['grep', new Map([['--no-index', 'searches files outside the repository']])],
  ['init', new Map([['--bare', "puts the repository outside '.git'; this tool keeps it in the workspace's .git"]])],
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
 * Configuration the tool sets on every run, as `key=value`. It is passed in
 * `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, the command scope: it overrides
 * the repository's own configuration, and git hands it on to every git process it starts. Each
 * entry switches off a setting whose name is fixed and that runs a program (hooks, fsmonitor,
 * pager, editors, ssh, askpass, credential helpers, gpg, the add -p filter), reaches a transport,
 * starts a background process (auto gc and maintenance), reads a file outside the workspace
 * (global attributes and excludes) or descends into nested repositories. Settings
 * whose names the repository chooses (`filter.<driver>.clean`, `alias.*`, `include.path`, …)
 * cannot be switched off this way; the repository check refuses them instead. `diff.external`
 * is missing on purpose: an empty value makes git try to run "" (every diff fails); the check
 * refuses it in the repository, and no other scope is read.
 */
export const PROTECTIVE_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.pager=cat',
  'core.editor=true',
  'core.sshCommand=false',
  'core.askPass=',
  'core.attributesFile=/dev/null',
  'core.excludesFile=/dev/null',
  'sequence.editor=true',
  'credential.helper=',
  'interactive.diffFilter=',
  'protocol.allow=never',
  // A per-protocol setting beats protocol.allow, so each known protocol is closed by name too.
  'protocol.file.allow=never',
  'protocol.git.allow=never',
  'protocol.ssh.allow=never',
  'protocol.http.allow=never',
  'protocol.https.allow=never',
  'protocol.ext.allow=never',
  'gpg.program=false',
  'gpg.openpgp.program=false',
  'gpg.x509.program=false',
  'gpg.ssh.program=false',
  'gpg.ssh.defaultKeyCommand=false',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'tag.forceSignAnnotated=false',
  'log.showSignature=false',
  'merge.verifySignatures=false',
  'safe.bareRepository=explicit',
  'submodule.recurse=false',
  'status.submoduleSummary=false',
  'diff.ignoreSubmodules=all',
  'gc.auto=0',
  'gc.autoDetach=false',
  'maintenance.auto=false',
];

function refuse(message: string): never {
  throw new ToolError(`git: ${message}`, 'GIT_ARGUMENT_REFUSED');
}

/** Whether a value names a path outside the workspace: absolute, home-relative, or climbing with `..`. */
function reachesOutside(value: string): boolean {
  return value.startsWith('/') || value.startsWith('~') || value.split('/').includes('..');
}

/** Whether a value names git's own directory (`.git`, `sub/.git/x`; any case, for case-insensitive file systems). */
function namesGitDirectory(value: string): boolean {
  return value.split('/').some((part) => part.toLowerCase() === '.git');
}

/** Refuses a value that reaches outside the workspace or into `.git`; `shown` is the argument as given. */
function checkPathValue(value: string, shown: string): void {
  if (reachesOutside(value)) refuse(`'${shown}' names a path outside the workspace`);
  // `git mv x .git/config` really moves the file there; .git changes only through git's own commands.
  if (namesGitDirectory(value)) refuse(`'${shown}' names git's own directory (.git), which this tool changes only through git commands`);
}

/** The refusal reason for a long option name, exact or as an abbreviation git would accept. */
function refusedLong(name: string, refused: ReadonlyMap<string, string> | undefined): string | undefined {
  if (!refused) return undefined;
  return refused.get(name) ?? [...refused].find(([option]) => name.length > 3 && option.startsWith(name))?.[1];
}

/** Long options of `git init` whose value is the next argument (`-b main`), so that argument is no directory. */
const INIT_VALUE_OPTIONS = ['--initial-branch', '--object-format', '--template', '--separate-git-dir'];

/**
 * `git init` takes no directory: the repository is always `.git` in the workspace root (the
 * environment pins it there), and a repository in a subdirectory would be a nested one, which
 * the repository check refuses. Only `.` is accepted.
 */
function checkInitOperands(rest: readonly string[]): void {
  let endOfOptions = false;
  for (const [index, arg] of rest.entries()) {
    if (!endOfOptions && arg === '--') {
      endOfOptions = true;
      continue;
    }
    if (!endOfOptions && arg.startsWith('-')) continue;
    const previous = index > 0 && !endOfOptions ? (rest[index - 1] ?? '') : '';
    const takesValue = /^-[A-Za-z]*b$/.test(previous) || INIT_VALUE_OPTIONS.some((option) => previous.length > 3 && option.startsWith(previous));
    if (takesValue) continue;
    if (arg === '.' || arg === './') continue;
    refuse(`'${arg}': git init takes no directory here; the repository is always .git in the workspace root`);
  }
}

/**
 * Checks git arguments before anything runs. The first must be an allowed subcommand (so no
 * global option such as `-c`, `-C` or `--git-dir` can appear); refused options are refused in
 * any spelling (`--opt`, `--opt=value`, unambiguous prefixes are not accepted by matching the
 * whole name); no argument or option value may name a path outside the workspace, a path inside
 * `.git`, or a `transport::address` URL (`ext::` runs programs).
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
  const long = REFUSED_LONG.get(subcommand);
  let endOfOptions = false;
  for (const arg of rest) {
    if (arg.includes('\0')) refuse('an argument contains a NUL byte');
    if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(arg)) refuse(`'${arg}': transport URLs are not accepted (ext:: runs programs)`);
    if (!endOfOptions && arg === '--') {
      endOfOptions = true;
      continue;
    }
    if (!endOfOptions && arg.startsWith('--')) {
      const [name = '', ...valueParts] = arg.split('=');
      const why = refusedLong(name, REFUSED_OPTIONS);
      if (why) refuse(`'${name}' is refused: it ${why}`);
      const whyHere = refusedLong(name, long);
      if (whyHere) refuse(`'${name}' is refused for git ${subcommand}: it ${whyHere}`);
      if (valueParts.length > 0) checkPathValue(valueParts.join('='), arg);
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
      if (arg.length > 2) checkPathValue(arg.slice(2), arg);
      continue;
    }
    checkPathValue(arg, arg);
  }
  if (subcommand === 'init') checkInitOperands(rest);
}

/**
 * Every argument, option value (`--file=x`) and attached short value (`-Fx`) that could name a
 * file, for the check that no symbolic link in the workspace leads git outside it. A superset:
 * a commit message that happens to name such a link is refused too.
 */
export function gitPathOperands(args: readonly string[]): string[] {
  const operands: string[] = [];
  let endOfOptions = false;
  for (const arg of args.slice(1)) {
    if (!endOfOptions && arg === '--') {
      endOfOptions = true;
    } else if (!endOfOptions && arg.startsWith('--')) {
      const equals = arg.indexOf('=');
      if (equals !== -1) operands.push(arg.slice(equals + 1));
    } else if (!endOfOptions && arg.startsWith('-') && arg.length > 1) {
      if (arg.length > 2) operands.push(arg.slice(2));
    } else {
      operands.push(arg);
    }
  }
  return operands.filter((operand) => operand !== '' && operand !== '-');
}
