import { ToolError } from '@toolgate/contracts';

/**
 * Settings a repository's own `.git/config` may hold for the git tool to run on it: an
 * allowlist, because the settings that run programs include names the repository chooses
 * (`filter.<driver>.clean`, `diff.<driver>.textconv`, `merge.<driver>.driver`, `alias.*`,
 * `trailer.<token>.cmd`, …) and names a future git may add. Each entry is `section.name` or
 * `section.*.name` (any subsection); section and name are compared in lower case, as git does.
 * None of these runs a program, names a file git reads, or points git at another directory.
 */
export const HARMLESS_CONFIG_KEYS: ReadonlySet<string> = new Set([
  // What `git init` and ordinary use write.
  'core.repositoryformatversion',
  'core.filemode',
  'core.bare',
  'core.logallrefupdates',
  'core.symlinks',
  'core.ignorecase',
  'core.precomposeunicode',
  'core.sharedrepository',
  // Line endings, display and performance switches with no program or path in them.
  'core.autocrlf',
  'core.eol',
  'core.safecrlf',
  'core.quotepath',
  'core.abbrev',
  'core.whitespace',
  'core.checkstat',
  'core.trustctime',
  'core.untrackedcache',
  'core.splitindex',
  'core.preloadindex',
  'core.commitgraph',
  'core.multipackindex',
  'core.compression',
  'core.loosecompression',
  'core.bigfilethreshold',
  'core.warnambiguousrefs',
  'core.protecthfs',
  'core.protectntfs',
  'core.sparsecheckout',
  'core.sparsecheckoutcone',
  'extensions.objectformat',
  'index.version',
  'feature.manyfiles',
  'init.defaultbranch',
  'user.name',
  'user.email',
  // Branches and remotes as `git clone`, `git branch --track` and `git switch -c` write them.
  // A remote's URL is inert: no subcommand of the tool reaches a remote and every transport is off.
  'branch.*.remote',
  'branch.*.merge',
  'branch.*.rebase',
  'branch.*.description',
  'branch.*.pushremote',
  'remote.*.url',
  'remote.*.pushurl',
  'remote.*.fetch',
  'remote.*.push',
  'remote.*.tagopt',
  'remote.*.prune',
  'remote.*.mirror',
  'pull.rebase',
  'pull.ff',
  'push.default',
  'push.autosetupremote',
  'fetch.prune',
  'fetch.prunetags',
  'merge.ff',
  'merge.conflictstyle',
  'merge.log',
  'rerere.enabled',
  'rerere.autoupdate',
  'diff.renames',
  'diff.renamelimit',
  'diff.algorithm',
  'diff.mnemonicprefix',
  'diff.noprefix',
  'diff.context',
  'diff.interhunkcontext',
  'diff.indentheuristic',
  'diff.colormoved',
  'diff.statgraphwidth',
  'status.showuntrackedfiles',
  'status.short',
  'status.branch',
  'status.relativepaths',
  'status.aheadbehind',
  'log.date',
  'log.decorate',
  'log.abbrevcommit',
  'commit.verbose',
  'commit.cleanup',
  'commit.status',
  'i18n.commitencoding',
  'i18n.logoutputencoding',
]);

/** Sections whose every key is harmless (hints and colours). */
const HARMLESS_SECTIONS: ReadonlySet<string> = new Set(['advice', 'color']);

/** One setting of a config listing: the key as git prints it, and its value (null for a bare `key`). */
export interface ConfigEntry {
  readonly key: string;
  readonly value: string | null;
}

/**
 * Parses `git config --list -z`: entries end with NUL; an entry is `key\nvalue`, or `key` alone
 * for a key written without `=` (an implicit true). git prints the section and the name in lower
 * case and the subsection as written.
 */
export function parseConfigListing(listing: string): ConfigEntry[] {
  return listing
    .split('\0')
    .filter((entry) => entry !== '')
    .map((entry) => {
      const newline = entry.indexOf('\n');
      return newline === -1 ? { key: entry, value: null } : { key: entry.slice(0, newline), value: entry.slice(newline + 1) };
    });
}

interface KeyParts {
  readonly section: string;
  /** Between the first and the last dot (it may hold dots itself, e.g. a branch `feature.x`); null if none. */
  readonly subsection: string | null;
  readonly name: string;
}

function keyParts(key: string): KeyParts {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first === -1) return { section: key.toLowerCase(), subsection: null, name: '' };
  return {
    section: key.slice(0, first).toLowerCase(),
    subsection: first === last ? null : key.slice(first + 1, last),
    name: key.slice(last + 1).toLowerCase(),
  };
}

/** Whether the tool runs git on a repository whose config sets `key`. */
export function isHarmlessConfigKey(key: string): boolean {
  const { section, subsection, name } = keyParts(key);
  if (HARMLESS_SECTIONS.has(section)) return true;
  return HARMLESS_CONFIG_KEYS.has(subsection === null ? `${section}.${name}` : `${section}.*.${name}`);
}

/** Settings that run a program, whatever their subsection. */
const PROGRAM_KEYS: ReadonlySet<string> = new Set([
  'core.fsmonitor',
  'core.pager',
  'core.editor',
  'core.sshcommand',
  'core.askpass',
  'core.gitproxy',
  'core.hookspath',
  'core.alternaterefscommand',
  'diff.external',
  'diff.textconv',
  'diff.command',
  'merge.driver',
  'filter.clean',
  'filter.smudge',
  'filter.process',
  'sequence.editor',
  'interactive.difffilter',
  'gpg.program',
  'gpg.defaultkeycommand',
  'credential.helper',
  'remote.uploadpack',
  'remote.receivepack',
  'remote.vcs',
  'remote.proxy',
  'trailer.command',
  'trailer.cmd',
  'uploadpack.packobjectshook',
  'hook.command',
]);

/** Settings that name a file git reads, or point git at another directory. */
const PATH_KEYS: ReadonlyMap<string, string> = new Map([
  ['core.worktree', 'points git at another work tree'],
  ['core.attributesfile', 'makes git read a file that may lie outside the workspace'],
  ['core.excludesfile', 'makes git read a file that may lie outside the workspace'],
  ['commit.template', 'makes git read a file that may lie outside the workspace'],
  ['mailmap.file', 'makes git read a file that may lie outside the workspace'],
  ['blame.ignorerevsfile', 'makes git read a file that may lie outside the workspace'],
  ['diff.orderfile', 'makes git read a file that may lie outside the workspace'],
  ['extensions.worktreeconfig', 'makes git read settings from .git/config.worktree as well'],
]);

/** Why a key not on the allowlist is refused, as a clause after "which". */
function whyRefused(key: string): string {
  const { section, subsection, name } = keyParts(key);
  const generic = `${section}.${name}`;
  if (section === 'include' || section === 'includeif') return 'pulls in settings from another file, which this tool cannot check';
  if (section === 'alias') return 'defines an alias, which can run a program';
  if (section === 'filter') return 'runs a program (a filter driver)';
  if (PROGRAM_KEYS.has(generic) || (section === 'gpg' && name.endsWith('program'))) return 'runs a program';
  if (['pager', 'man', 'browser', 'difftool', 'mergetool', 'guitool', 'sendemail', 'submodule', 'hook'].includes(section)) return 'can run a program';
  const path = PATH_KEYS.get(generic);
  if (path) return path;
  if (subsection !== null && section === 'diff') return 'configures a diff driver, which can run a program';
  if (subsection !== null && section === 'merge') return 'configures a merge driver, which can run a program';
  return 'is not on the list of settings this tool accepts';
}

/** A key as it may appear in a message: control characters made visible, length bounded. */
function shownKey(key: string): string {
  // eslint-disable-next-line no-control-regex -- the point is to find control characters
  const visible = key.replace(/[\u0000-\u001f\u007f]/g, '?');
  return visible.length > 120 ? `${visible.slice(0, 120)}…` : visible;
}

/**
 * Refuses a repository whose `.git/config` (as `git config --list -z` printed it) sets anything
 * outside {@link HARMLESS_CONFIG_KEYS}, naming the first such key and why it matters.
 */
export function checkRepositoryConfig(listing: string): void {
  for (const { key } of parseConfigListing(listing)) {
    if (isHarmlessConfigKey(key)) continue;
    throw new ToolError(
      `git: the repository config (.git/config) sets ${shownKey(key)}, which ${whyRefused(key)}; Toolgate's git tool refuses such repositories. Remove the setting to use this repository here.`,
      'GIT_REPOSITORY_REFUSED',
    );
  }
}
