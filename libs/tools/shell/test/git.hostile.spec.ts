import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile as writeRaw } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError, type JsonObject, type ProcessLimits, type ProcessResult, type ProcessRunner, type ProcessSpec, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
import { testToolContext, watchLoopHold } from '@toolgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createShellTools, PROTECTIVE_CONFIG } from '../src/index.js';
// Internal, to observe what the tool does not show: the environment it gives git (asked what it
// would use after a racing config write) and its workspace walk's own bounds.
import { gitEnvironment } from '../src/git-environment.js';
import { inspectWorkspace } from '../src/git-repository-guard.js';

/**
 * Runs processes the way the tier-1 runner does, for these tests: in the workspace (or the spec's
 * working directory inside it), with exactly PATH, HOME = the workspace, LANG and the spec's
 * environment, nothing inherited. (The real tiers live in adapter libs, which a tool lib may not
 * import; their own suites test isolation. HOME = the workspace is the tier-1 runner's choice,
 * and the hardest case: `~/.gitconfig` is then a file an agent can write.)
 */
class WorkspaceRunner implements ProcessRunner {
  readonly runs: ProcessSpec[] = [];
  run(spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult> {
    this.runs.push(spec);
    return new Promise((resolve, reject) => {
      const child = spawn(spec.command, [...spec.args], {
        cwd: spec.cwd === undefined ? limits.workspaceRoot : join(limits.workspaceRoot, spec.cwd),
        env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: limits.workspaceRoot, LANG: 'C.UTF-8', ...spec.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), limits.timeoutMs);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('error', reject);
      child.once('close', (exitCode, signal) => {
        clearTimeout(timer);
        const truncated = stdout.length > limits.maxOutputBytes;
        resolve({
          exitCode,
          signal,
          stdout: stdout.slice(0, limits.maxOutputBytes),
          stderr: stderr.slice(0, limits.maxOutputBytes),
          stdoutTruncated: truncated,
          stderrTruncated: false,
          timedOut: false,
          durationMs: 0,
        });
      });
    });
  }
  prepare(): never {
    throw new Error('not used');
  }
}

// A named principal: git commits as the caller, and the tests read that identity back.
const context = (workspaceRoot: string, process: ProcessRunner): ToolContext =>
  testToolContext({ principal: { id: 'alice', tenant: 'acme', roles: ['developer'] }, workspaceRoot, process });

/** The tier's executor as the shell tools see it: its tier and what it says it isolates. */
const BWRAP_EXECUTOR = { tier: 'bwrap', isolation: { summary: 'It runs at the bwrap test tier.' } } as const;
const git = createShellTools({ executor: BWRAP_EXECUTOR, timeoutMs: 60_000, maxOutputBytes: 16_384 })[1] as ToolDefinition;

let base: string;
let workspace: string;
let runner: WorkspaceRunner;

/** A git call through the tool, as an agent makes it. */
const run = (...args: string[]) => git.handler.invoke({ args }, context(workspace, runner)) as Promise<JsonObject>;
/** A call that must be refused with `reason`, whose message must say `says`. */
const refused = async (args: string[], reason: string, says?: string | RegExp) => {
  const before = runner.runs.length;
  const error = await run(...args).then(
    (result) => new Error(`expected a refusal, got ${JSON.stringify(result)}`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolError);
  expect(error).toMatchObject({ reason });
  if (says !== undefined) expect((error as Error).message).toMatch(says);
  // No refusal names a host path.
  expect((error as Error).message).not.toContain(base);
  // The refused command never started: at most the config listing ran.
  for (const spec of runner.runs.slice(before)) expect(spec.args.slice(0, 3)).toEqual(['config', '--file', '.git/config']);
  return error as ToolError;
};

/**
 * The command line a planted program would be: it leaves a marker beside the workspace. The
 * test's directory is only known per test, so the command names it by a placeholder that
 * {@link writeFile} fills in.
 */
const plant = (name: string) => `touch __BASE__/pwned-${name}`;
/** `writeFile` with the placeholder of {@link plant} replaced by the test's directory. */
const writeFile = (path: string, content: string, options?: { flag: string }) => writeRaw(path, content.replaceAll('__BASE__', base), options);
/** Every marker any planted program left, anywhere in the test's directory. */
async function markers(): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('pwned')) found.push(entry.name);
      if (entry.isDirectory() && !entry.isSymbolicLink()) await walk(join(dir, entry.name));
    }
  };
  await walk(base);
  return found;
}
/** git on the host, outside the tool, to build fixtures (never with the tool's protections). */
const hostGit = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    env: { PATH: '/usr/bin:/bin', HOME: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'f', GIT_AUTHOR_EMAIL: 'f@x', GIT_COMMITTER_NAME: 'f', GIT_COMMITTER_EMAIL: 'f@x' },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).toString();
const write = async (path: string, content: string) => {
  await mkdir(join(workspace, path, '..'), { recursive: true });
  await writeFile(join(workspace, path), content);
};
const appendConfig = (text: string) => writeFile(join(workspace, '.git', 'config'), text, { flag: 'a' });
/** A repository made through the tool, with one commit of a.txt. */
async function repository() {
  await expect(run('init', '-q', '-b', 'main')).resolves.toMatchObject({ exit_code: 0 });
  await write('a.txt', 'one\n');
  await expect(run('add', 'a.txt')).resolves.toMatchObject({ exit_code: 0 });
  await expect(run('commit', '-q', '-m', 'first')).resolves.toMatchObject({ exit_code: 0 });
}

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-git-hostile-')));
  workspace = join(base, 'acme');
  await mkdir(workspace);
  runner = new WorkspaceRunner();
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('planted repository', () => {
  /** A bare repository as write_file calls can lay it out: no `.git` anywhere, only plain files. */
  async function bareLayout(dir: string, config: string) {
    await write(`${dir}HEAD`, 'ref: refs/heads/main\n');
    await write(`${dir}objects/info/.keep`, '');
    await write(`${dir}refs/heads/.keep`, '');
    await write(`${dir}config`, config);
  }

  it('ignores a bare layout in the workspace root: git never discovers it (issue 9 §4 reproduction)', async () => {
    await bareLayout('', `[core]\n\tbare = false\n\tworktree = .\n[filter "x"]\n\tclean = ${plant('clean')}; cat\n\tsmudge = ${plant('smudge')}; cat\n[diff]\n\texternal = ${plant('external')}\n`);
    await write('.gitattributes', '* filter=x\n');
    await write('evil.sh', `${plant('evil-sh')}\n`);
    await write('a.txt', 'hello\n');
    for (const args of [['add', 'a.txt'], ['status'], ['log'], ['diff', 'a.txt', 'evil.sh']]) {
      const result = await run(...args);
      expect(result['exit_code']).not.toBe(0);
    }
    expect(String((await run('status'))['stderr'])).toMatch(/not a git repository/);
    // A fresh repository beside the layout works, and the layout's config never applies.
    await expect(run('init', '-q')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('add', 'a.txt')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('commit', '-q', '-m', 'x')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('checkout', '--', 'a.txt')).resolves.toMatchObject({ exit_code: 0 });
    expect(await markers()).toEqual([]);
    // The control: plain git, run in the workspace, takes the layout for its repository and runs its programs.
    await rm(join(workspace, '.git'), { recursive: true });
    try {
      hostGit(workspace, 'diff', '--no-index', 'a.txt', 'evil.sh');
    } catch {
      // Exit 1 means "the files differ".
    }
    expect(await markers()).toContain('pwned-clean');
  });

  it('ignores a bare layout whose config sets diff.external, also for a diff of two files outside a repository', async () => {
    await bareLayout('', `[diff]\n\texternal = ${plant('external')}\n[core]\n\tpager = ${plant('pager')}\n`);
    await write('a', 'a\n');
    await write('b', 'b\n');
    // Outside a repository `git diff a b` compares the two files; the layout's config is not read.
    const result = await run('diff', 'a', 'b');
    expect(result['stdout']).toContain('-a\n+b');
    expect(await markers()).toEqual([]);
  });

  it('never uses a bare layout in a subdirectory, however the call names it', async () => {
    await repository();
    await bareLayout('sub/', `[core]\n\tbare = false\n\tfsmonitor = ${plant('fsmonitor')}\n[filter "x"]\n\tclean = ${plant('clean')}; cat\n`);
    await write('sub/.gitattributes', '* filter=x\n');
    await write('sub/f.txt', 'f\n');
    await refused(['-C', 'sub', 'add', 'f.txt'], 'GIT_ARGUMENT_REFUSED', /options before the subcommand/);
    await refused(['status', '--git-dir=sub'], 'GIT_ARGUMENT_REFUSED', /--git-dir/);
    await refused(['log', '--work-tree', 'sub'], 'GIT_ARGUMENT_REFUSED', /--work-tree/);
    await refused(['init', 'sub'], 'GIT_ARGUMENT_REFUSED', /takes no directory/);
    // As plain files of the workspace's own repository they are harmless.
    await expect(run('add', 'sub')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('status', '--short')).resolves.toMatchObject({ exit_code: 0 });
    expect(await markers()).toEqual([]);
  });

  it('refuses a .git file (gitdir: pointer) to a repository elsewhere, in every spelling', async () => {
    const other = join(base, 'other');
    await mkdir(other);
    hostGit(other, 'init', '-q');
    await writeFile(join(other, '.git', 'config'), `[core]\n\tfsmonitor = ${plant('other')}\n`, { flag: 'a' });
    await bareLayout('inside/', `[core]\n\tfsmonitor = ${plant('inside')}\n`);
    for (const pointer of [`gitdir: ${join(other, '.git')}\n`, 'gitdir: ../other/.git\n', 'gitdir: inside\n', 'gitdir:../other/.git']) {
      await writeFile(join(workspace, '.git'), pointer);
      await refused(['status'], 'GIT_REPOSITORY_REFUSED', /'\.git' is a file \(a gitdir: pointer\)/);
    }
    expect(await markers()).toEqual([]);
    // The control: plain git follows the pointer and runs the other repository's fsmonitor.
    await writeFile(join(workspace, '.git'), 'gitdir: ../other/.git\n');
    hostGit(workspace, 'status');
    expect(await markers()).toEqual(['pwned-other']);
  });

  it('refuses a .git symlink, to a repository outside the workspace or inside it', async () => {
    const other = join(base, 'other');
    await mkdir(other);
    hostGit(other, 'init', '-q');
    await bareLayout('inside/', `[core]\n\tfsmonitor = ${plant('inside')}\n`);
    for (const target of [join(other, '.git'), '../other/.git', 'inside', 'missing']) {
      await rm(join(workspace, '.git'), { force: true });
      await symlink(target, join(workspace, '.git'));
      await refused(['status'], 'GIT_REPOSITORY_REFUSED', /'\.git' is a symbolic link/);
      await refused(['init', '-q'], 'GIT_REPOSITORY_REFUSED', /symbolic link/);
    }
    expect(await markers()).toEqual([]);
  });

  it('never discovers a repository above the workspace (a work tree or a bare layout)', async () => {
    // The workspace's parent is a repository (as /work/main would be at tier 1) that runs programs.
    hostGit(base, 'init', '-q');
    await writeFile(join(base, '.git', 'config'), `[core]\n\tfsmonitor = ${plant('above')}\n[filter "x"]\n\tclean = ${plant('above-clean')}; cat\n`, { flag: 'a' });
    await writeFile(join(base, '.gitattributes'), '* filter=x\n');
    await write('a.txt', 'x\n');
    await write('deeper/b.txt', 'x\n');
    for (const args of [['status'], ['add', 'a.txt'], ['add', 'deeper/b.txt'], ['log']]) {
      const result = await run(...args);
      expect(result['exit_code']).not.toBe(0);
      expect(String(result['stderr'])).toMatch(/not a git repository/);
    }
    await rm(join(base, '.git'), { recursive: true });
    await writeFile(join(base, 'HEAD'), 'ref: refs/heads/main\n');
    await mkdir(join(base, 'objects'));
    await mkdir(join(base, 'refs'));
    await writeFile(join(base, 'config'), `[core]\n\tbare = false\n\tworktree = acme\n\tfsmonitor = ${plant('above-bare')}\n`);
    expect((await run('status'))['exit_code']).not.toBe(0);
    expect(await markers()).toEqual([]);
  });

  it('refuses a nested repository that a gitlink would make git enter (submodule status runs its config)', async () => {
    await repository();
    // A repository inside the workspace, with a filter that git status would run inside it.
    const sub = join(workspace, 'sub');
    await mkdir(sub);
    hostGit(sub, 'init', '-q');
    await writeFile(join(sub, 'f'), 'one\n');
    hostGit(sub, 'add', 'f');
    hostGit(sub, 'commit', '-qm', 's');
    await writeFile(join(sub, '.git', 'config'), `[filter "x"]\n\tclean = ${plant('submodule')}; cat\n`, { flag: 'a' });
    await writeFile(join(sub, '.gitattributes'), 'f filter=x\n');
    await writeFile(join(sub, 'f'), 'two\n');
    // .gitmodules can switch the submodule check back on whatever the tool's config says.
    await write('.gitmodules', '[submodule "n"]\n\tpath = sub\n\tignore = none\n');
    await refused(['add', 'sub'], 'GIT_REPOSITORY_REFUSED', /'sub\/\.git' is a nested repository/);
    await refused(['status'], 'GIT_REPOSITORY_REFUSED', /nested repository/);
    expect(await markers()).toEqual([]);
    // The control: with plain git, a gitlink to it is enough for status to run its filter.
    hostGit(workspace, 'add', 'sub');
    hostGit(workspace, 'status');
    expect(await markers()).toEqual(['pwned-submodule']);
    await rm(join(base, 'pwned-submodule'));
    await refused(['status'], 'GIT_REPOSITORY_REFUSED', /nested repository/);
    // Other spellings: a gitdir: file, a link, another case, deeper down.
    await rm(join(sub, '.git'), { recursive: true });
    await writeFile(join(sub, '.git'), 'gitdir: ../.git/modules/n\n');
    await refused(['status'], 'GIT_REPOSITORY_REFUSED', /'sub\/\.git' is a nested repository/);
    await rm(join(sub, '.git'));
    await symlink('../.git', join(sub, '.git'));
    await refused(['diff'], 'GIT_REPOSITORY_REFUSED', /'sub\/\.git' is a nested repository/);
    await rm(join(sub, '.git'));
    await mkdir(join(workspace, 'deep', 'er', '.GIT'), { recursive: true });
    await refused(['checkout', '--', 'a.txt'], 'GIT_REPOSITORY_REFUSED', /'deep\/er\/\.GIT' is a nested repository/);
    expect(await markers()).toEqual([]);
  });

  it('refuses .git contents that send git to another repository: commondir, alternates, config.worktree, links, FIFOs', async () => {
    await repository();
    const other = join(base, 'other');
    await mkdir(other);
    hostGit(other, 'init', '-q');
    const cases: [string, () => Promise<void>, RegExp][] = [
      ['commondir', () => writeFile(join(workspace, '.git', 'commondir'), '../../other/.git\n'), /'\.git\/commondir' makes git use another repository/],
      ['alternates', () => writeFile(join(workspace, '.git', 'objects', 'info', 'alternates'), `${join(other, '.git', 'objects')}\n`), /alternates' makes git read another repository's objects/],
      ['config.worktree', () => writeFile(join(workspace, '.git', 'config.worktree'), `[core]\n\tfsmonitor = ${plant('worktree')}\n`), /config\.worktree' is a second config file/],
      ['a linked refs directory', () => rm(join(workspace, '.git', 'refs', 'tags'), { recursive: true }).then(() => symlink(join(other, '.git', 'refs', 'tags'), join(workspace, '.git', 'refs', 'tags'))), /'\.git\/refs\/tags' is a symbolic link inside \.git/],
      ['a linked config', () => rm(join(workspace, '.git', 'config')).then(() => symlink(join(other, '.git', 'config'), join(workspace, '.git', 'config'))), /'\.git\/config' is a symbolic link/],
      ['a FIFO as HEAD', () => rm(join(workspace, '.git', 'HEAD')).then(() => void execFileSync('mkfifo', [join(workspace, '.git', 'HEAD')])), /'\.git\/HEAD' is a FIFO/],
    ];
    for (const [what, plantIt, message] of cases) {
      await rm(join(workspace, '.git'), { recursive: true, force: true });
      await repository();
      await plantIt();
      const error = await refused(['status'], 'GIT_REPOSITORY_REFUSED', message);
      expect(error.message, what).toMatch(/refuses such repositories/);
    }
    expect(await markers()).toEqual([]);
  });
});

describe('config that runs programs', () => {
  /** [what, config appended to .git/config, files written, calls that would run the program]. */
  const cases: [string, string, Record<string, string>, string[][], RegExp][] = [
    ['filter clean', `[filter "x"]\n\tclean = ${plant('clean')}; cat\n`, { '.gitattributes': '* filter=x\n' }, [['add', 'a.txt'], ['status']], /filter\.x\.clean, which runs a program \(a filter driver\)/],
    ['filter smudge', `[filter "lfs"]\n\tsmudge = ${plant('smudge')}; cat\n`, { '.gitattributes': '*.txt filter=lfs\n' }, [['checkout', '--', 'a.txt']], /filter\.lfs\.smudge/],
    ['filter process', `[filter "x"]\n\tprocess = ${plant('process')}\n\trequired\n`, { '.gitattributes': '* filter=x\n' }, [['add', 'a.txt']], /filter\.x\.process/],
    ['filter, other case and legacy spelling', `[FILTER.x]\n\tClean = ${plant('legacy')}; cat\n`, { '.gitattributes': '* filter=x\n' }, [['add', 'a.txt']], /filter\.x\.clean/],
    ['a continued value', `[filter "x"]\n\tclean = ${plant('continued')}\\\n; cat\n`, { '.gitattributes': '* filter=x\n' }, [['add', 'a.txt']], /filter\.x\.clean/],
    ['diff.external', `[diff]\n\texternal = ${plant('external')}\n`, {}, [['diff'], ['log', '-p'], ['show']], /diff\.external, which runs a program/],
    ['diff.x.textconv', `[diff "x"]\n\ttextconv = ${plant('textconv')}; cat\n`, { '.gitattributes': '* diff=x\n' }, [['diff'], ['log', '-p'], ['blame', 'a.txt']], /diff\.x\.textconv, which runs a program/],
    ['diff.x.command', `[diff "x"]\n\tcommand = ${plant('diffcmd')}\n`, { '.gitattributes': '* diff=x\n' }, [['diff']], /diff\.x\.command/],
    ['merge driver', `[merge "x"]\n\tdriver = ${plant('merge')}\n`, { '.gitattributes': '* merge=x\n' }, [['merge', 'topic']], /merge\.x\.driver, which runs a program/],
    ['core.fsmonitor', `[core]\n\tFsMonitor = ${plant('fsmonitor')}\n`, {}, [['status']], /core\.fsmonitor, which runs a program/],
    ['core.hooksPath and a pre-commit there', `[core]\n\thooksPath = hooks\n`, { 'hooks/pre-commit': `#!/bin/sh\n${plant('hookspath')}\n` }, [['commit', '-qam', 'x']], /core\.hookspath, which runs a program/],
    ['core.pager', `[core]\n\tpager = ${plant('pager')}\n[pager]\n\tlog = ${plant('pager-log')}\n`, {}, [['log']], /core\.pager, which runs a program/],
    ['core.editor', `[core]\n\teditor = ${plant('editor')}\n`, {}, [['commit', '--amend']], /core\.editor/],
    ['sequence.editor', `[sequence]\n\teditor = ${plant('seq')}\n`, {}, [['status']], /sequence\.editor/],
    ['alias with !', `[alias]\n\tst = !${plant('alias')}\n\tstatus = !${plant('alias-status')}\n`, {}, [['status']], /alias\.st, which defines an alias/],
    ['include.path', '[include]\n\tpath = ../evil.cfg\n', { 'evil.cfg': `[core]\n\tfsmonitor = ${plant('include')}\n` }, [['status']], /include\.path, which pulls in settings from another file/],
    ['includeIf', '[includeIf "gitdir:/"]\n\tpath = ../evil.cfg\n', { 'evil.cfg': `[core]\n\tfsmonitor = ${plant('includeif')}\n` }, [['status']], /includeif\.gitdir:\/\.path/],
    ['core.sshCommand', `[core]\n\tsshCommand = ${plant('ssh')}\n`, {}, [['status']], /core\.sshcommand/],
    ['core.askPass and credential.helper', `[credential]\n\thelper = !${plant('cred')}\n[core]\n\taskPass = ${plant('askpass')}\n`, {}, [['status']], /credential\.helper|core\.askpass/],
    ['remote uploadpack', `[remote "origin"]\n\turl = ext::sh -c ${plant('ext')}\n\tuploadpack = ${plant('uploadpack')}\n`, {}, [['status']], /remote\.origin\.uploadpack, which runs a program/],
    ['gpg.program and signing', '[gpg]\n\tprogram = ./gpg.sh\n[log]\n\tshowSignature = true\n[tag]\n\tgpgSign = true\n', { 'gpg.sh': `#!/bin/sh\n${plant('gpg')}\n` }, [['log', '--format=%G?'], ['tag', '-a', 'v2', '-m', 'x']], /gpg\.program/],
    ['interactive.diffFilter', `[interactive]\n\tdiffFilter = ${plant('difffilter')}\n`, {}, [['add', '-p']], /interactive\.difffilter/],
    ['trailer command', `[trailer "x"]\n\tcommand = ${plant('trailer')}\n`, {}, [['commit', '--trailer', 'x:y', '-qam', 'x']], /trailer\.x\.command/],
    ['core.worktree elsewhere', '[core]\n\tworktree = ..\n', {}, [['status']], /core\.worktree, which points git at another work tree/],
    ['extensions.worktreeConfig', '[extensions]\n\tworktreeConfig = true\n', {}, [['status']], /extensions\.worktreeconfig/],
    ['an unknown setting', '[frobnicate]\n\tcommand = x\n', {}, [['status']], /frobnicate\.command, which is not on the list of settings this tool accepts/],
  ];

  /**
   * Cases where plain git, run the same way, demonstrably runs the planted program (the others
   * need a transport, a terminal or a subcommand the tool does not offer, or run nothing but
   * point git elsewhere).
   */
  const LIVE = new Set([
    'filter clean',
    'filter smudge',
    'filter process',
    'filter, other case and legacy spelling',
    'a continued value',
    'diff.external',
    'diff.x.textconv',
    'diff.x.command',
    'merge driver',
    'core.fsmonitor',
    'core.hooksPath and a pre-commit there',
    'core.editor',
    'include.path',
    'includeIf',
    'gpg.program and signing',
    'trailer command',
  ]);
  /** Histories some cases need before their calls: a merge driver runs only on a real three-way merge. */
  const PREPARE: Readonly<Record<string, () => Promise<void>>> = {
    'merge driver': async () => {
      await run('switch', '-q', 'topic');
      await write('a.txt', 'topic\n');
      await run('commit', '-qam', 'on topic');
      await run('switch', '-q', 'main');
      await write('a.txt', 'main\n');
      await run('commit', '-qam', 'on main');
    },
  };

  it.each(cases)('refuses a repository whose config sets %s, and nothing runs', async (_what, config, files, calls, message) => {
    await repository();
    await run('branch', 'topic');
    await PREPARE[_what]?.();
    for (const [path, content] of Object.entries(files)) {
      await write(path, content);
      if (path.startsWith('hooks/') || path.endsWith('.sh')) await chmod(join(workspace, path), 0o755);
    }
    await write('a.txt', 'two\n');
    await appendConfig(config);
    for (const args of calls) await refused(args, 'GIT_REPOSITORY_REFUSED', message);
    expect(await markers()).toEqual([]);
    // The control: the same calls through plain git do run the planted program.
    if (LIVE.has(_what)) {
      for (const args of calls) {
        try {
          hostGit(workspace, ...args);
        } catch {
          // Whether git then fails does not matter; whether the program ran does.
        }
      }
      expect((await markers()).length, 'plain git runs the planted program').toBeGreaterThan(0);
    }
  });

  it('refuses a config git itself cannot parse, without running the command', async () => {
    await repository();
    for (const broken of ['[core\n', '[filter "x"\n\tclean = sh evil.sh\n', '\tclean = x\n[', '[a]\n\tb = "unterminated\n']) {
      await writeFile(join(workspace, '.git', 'config'), `[core]\n\trepositoryformatversion = 0\n${broken}`);
      await refused(['status'], 'GIT_REPOSITORY_REFUSED', /git cannot parse the repository config/);
    }
  });

  it('never runs a hook written into .git/hooks: the tool points hooks at /dev/null', async () => {
    await repository();
    for (const hook of ['pre-commit', 'commit-msg', 'post-commit', 'post-checkout', 'reference-transaction', 'pre-auto-gc']) {
      await writeFile(join(workspace, '.git', 'hooks', hook), `#!/bin/sh\n${plant(hook)}\n`);
      await chmod(join(workspace, '.git', 'hooks', hook), 0o755);
    }
    await write('a.txt', 'two\n');
    await expect(run('commit', '-qam', 'second')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('switch', '-q', '-c', 'topic')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('checkout', '-q', 'main')).resolves.toMatchObject({ exit_code: 0 });
    expect(await markers()).toEqual([]);
  });

  it('never reads the global config or attributes an agent can write into the workspace (HOME at tier 1)', async () => {
    await repository();
    const evil = `[core]\n\tfsmonitor = ${plant('home-fsmonitor')}\n\tpager = ${plant('home-pager')}\n[filter "x"]\n\tclean = ${plant('home-clean')}; cat\n[alias]\n\tst = !${plant('home-alias')}\n`;
    await write('.gitconfig', evil);
    await write('.config/git/config', evil);
    await write('.config/git/attributes', '* filter=x\n');
    await write('a.txt', 'two\n');
    await expect(run('add', 'a.txt')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('status', '--short')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('commit', '-qm', 'x')).resolves.toMatchObject({ exit_code: 0 });
    expect(await markers()).toEqual([]);
  });

  it('hands git an environment with no program in it, and protective settings that beat the repository (the race-free layer)', async () => {
    await repository();
    await run('status');
    const env = runner.runs.at(-1)?.env ?? {};
    for (const name of ['GIT_EXTERNAL_DIFF', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_ASKPASS', 'SSH_ASKPASS', 'GIT_EXEC_PATH', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG', 'GIT_PROXY_COMMAND', 'GIT_TEMPLATE_DIR']) {
      expect(env, name).not.toHaveProperty(name);
    }
    expect(env).toMatchObject({ GIT_DIR: '.git', GIT_WORK_TREE: '.', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: '/dev/null', GIT_ALLOW_PROTOCOL: '', GIT_PAGER: 'cat', GIT_EDITOR: 'true' });
    // If a setting appears between the check and git's start (a concurrent write), the command
    // scope still wins for every fixed-name key: ask git what it would use.
    const hostile = PROTECTIVE_CONFIG.map((setting) => setting.split('=')[0] as string);
    await appendConfig(hostile.map((key) => `[${key.split('.').slice(0, -1).map((part, i) => (i === 0 ? part : `"${part}"`)).join(' ')}]\n\t${key.split('.').at(-1)} = ${plant('race')}\n`).join(''));
    const environment = gitEnvironment({ id: 'alice', tenant: 'acme', roles: [] }, workspace);
    for (const setting of PROTECTIVE_CONFIG) {
      const [key, value] = [setting.slice(0, setting.indexOf('=')), setting.slice(setting.indexOf('=') + 1)];
      const result = await runner.run({ command: 'git', args: ['config', '--get', key], env: environment }, { workspaceRoot: workspace, timeoutMs: 5000, maxOutputBytes: 4096 });
      expect(result.stdout, key).toBe(`${value}\n`);
    }
    expect(await markers()).toEqual([]);
  });
});

describe('writing/reading outside the work tree', () => {
  beforeEach(async () => {
    await repository();
    await mkdir(join(base, 'other'));
    await writeFile(join(base, 'other', 'secret.txt'), 'other tenant\n');
    await symlink('/etc/hostname', join(workspace, 'host-file'));
    await symlink(join(base, 'other'), join(workspace, 'other-tenant'));
    await symlink('../other', join(workspace, 'relative-out'));
  });

  const patch = (path: string) => `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+planted\n`;

  it('refuses apply --unsafe-paths and --directory in every spelling, and git refuses the patch paths itself', async () => {
    await write('p.patch', patch('../other/planted.txt'));
    await refused(['apply', '--unsafe-paths', 'p.patch'], 'GIT_ARGUMENT_REFUSED', /--unsafe-paths' is refused: it writes outside the work tree/);
    await refused(['apply', '--unsafe', 'p.patch'], 'GIT_ARGUMENT_REFUSED', /refused/);
    await refused(['apply', '--directory=../other', 'p.patch'], 'GIT_ARGUMENT_REFUSED');
    await refused(['apply', '--directory', 'sub', 'p.patch'], 'GIT_ARGUMENT_REFUSED', /for git apply/);
    await refused(['apply', '--dir=x', 'p.patch'], 'GIT_ARGUMENT_REFUSED', /for git apply/);
    await refused(['apply', '--build-fake-ancestor=.git/config', 'p.patch'], 'GIT_ARGUMENT_REFUSED');
    const plain = await run('apply', 'p.patch');
    expect(plain['exit_code']).not.toBe(0);
    await write('q.patch', patch('other-tenant/planted.txt'));
    expect((await run('apply', 'q.patch'))['exit_code']).not.toBe(0);
    await write('r.patch', patch('.git/hooks/pre-commit'));
    expect((await run('apply', 'r.patch'))['exit_code']).not.toBe(0);
    await expect(stat(join(base, 'other', 'planted.txt'))).rejects.toThrow();
    await expect(stat(join(workspace, '.git', 'hooks', 'pre-commit'))).rejects.toThrow();
  });

  it('refuses diff and grep --no-index and any path that leads out, directly or through a link', async () => {
    await refused(['diff', '--no-index', '/etc/passwd', 'a.txt'], 'GIT_ARGUMENT_REFUSED', /--no-index/);
    await refused(['diff', '--no-index', 'a.txt', 'host-file'], 'GIT_ARGUMENT_REFUSED', /--no-index' is refused for git diff/);
    await refused(['diff', '--no-ind', 'a.txt', 'b'], 'GIT_ARGUMENT_REFUSED', /--no-ind/);
    await refused(['grep', '--no-index', 'root', '/etc'], 'GIT_ARGUMENT_REFUSED', /--no-index/);
    // Without --no-index, a diff of two files at least one of which is outside the repository compares them anyway.
    await refused(['diff', 'a.txt', 'host-file'], 'GIT_ARGUMENT_REFUSED', /'host-file' leads outside the workspace through a symbolic link/);
    await refused(['diff', 'a.txt', 'other-tenant/secret.txt'], 'GIT_ARGUMENT_REFUSED', /other-tenant\/secret\.txt' leads outside/);
    await refused(['diff', 'a.txt', 'relative-out/secret.txt'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['blame', '--contents', 'host-file', 'a.txt'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['diff', '-Ohost-file'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['grep', '-f', 'host-file'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
  });

  it('refuses commit -F and --pathspec-from-file that read a file outside', async () => {
    await write('a.txt', 'two\n');
    await refused(['commit', '-F', '/etc/hostname'], 'GIT_ARGUMENT_REFUSED', /outside the workspace/);
    await refused(['commit', '-F/etc/hostname'], 'GIT_ARGUMENT_REFUSED', /outside the workspace/);
    await refused(['commit', '--file=/etc/hostname'], 'GIT_ARGUMENT_REFUSED', /outside the workspace/);
    await refused(['commit', '--file', '../other/secret.txt'], 'GIT_ARGUMENT_REFUSED', /outside the workspace/);
    await refused(['commit', '-F', 'host-file'], 'GIT_ARGUMENT_REFUSED', /'host-file' leads outside/);
    await refused(['commit', '-Fhost-file'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['tag', '-a', 'v1', '-F', 'other-tenant/secret.txt'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['add', '--pathspec-from-file=host-file'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['commit', '-t', 'host-file'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    const log = await run('log', '--format=%B');
    expect(log['stdout']).toBe('first\n\n');
  });

  it('refuses init anywhere but the workspace root', async () => {
    await refused(['init', '../other'], 'GIT_ARGUMENT_REFUSED', /outside the workspace/);
    await refused(['init', '-q', 'sub'], 'GIT_ARGUMENT_REFUSED', /git init takes no directory/);
    await refused(['init', 'other-tenant'], 'GIT_ARGUMENT_REFUSED');
    await refused(['init', '--separate-git-dir=../other/x'], 'GIT_ARGUMENT_REFUSED', /--separate-git-dir/);
    await refused(['init', '--bare'], 'GIT_ARGUMENT_REFUSED', /--bare' is refused for git init/);
    await refused(['init', '--template', 'tpl'], 'GIT_ARGUMENT_REFUSED', /--template/);
    await expect(run('init', '-q', '.')).resolves.toMatchObject({ exit_code: 0 });
    await expect(readdir(join(base, 'other'))).resolves.toEqual(['secret.txt']);
  });

  it('refuses mv (and other writes) to a path outside or into .git', async () => {
    await refused(['mv', 'a.txt', '../x'], 'GIT_ARGUMENT_REFUSED', /outside the workspace/);
    await refused(['mv', 'a.txt', 'other-tenant/'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['mv', 'a.txt', 'other-tenant/a.txt'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['mv', 'a.txt', 'relative-out/new/a.txt'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['mv', 'a.txt', '.git/config'], 'GIT_ARGUMENT_REFUSED', /git's own directory/);
    await refused(['mv', 'a.txt', './.GIT/hooks/pre-commit'], 'GIT_ARGUMENT_REFUSED', /git's own directory/);
    // git itself makes a link into .git from a patch, then `mv -f` would overwrite .git/config through it.
    await write('link.patch', 'diff --git a/into b/into\nnew file mode 120000\n--- /dev/null\n+++ b/into\n@@ -0,0 +1 @@\n+.git\n\\ No newline at end of file\n');
    await expect(run('apply', 'link.patch')).resolves.toMatchObject({ exit_code: 0 });
    await refused(['mv', '-f', 'a.txt', 'into/config'], 'GIT_ARGUMENT_REFUSED', /'into\/config' leads into git's own directory/);
    await refused(['mv', '-f', 'a.txt', 'into/hooks/new'], 'GIT_ARGUMENT_REFUSED', /leads into git's own directory/);
    await refused(['commit', '-F', 'into/HEAD'], 'GIT_ARGUMENT_REFUSED', /leads into git's own directory/);
    await expect(readFile(join(workspace, '.git', 'config'), 'utf8')).resolves.not.toContain('one');
    await refused(['add', 'other-tenant/secret.txt'], 'GIT_ARGUMENT_REFUSED', /leads outside/);
    await refused(['checkout', 'HEAD', '--', '../other/secret.txt'], 'GIT_ARGUMENT_REFUSED', /outside the workspace/);
    await refused(['ls-files', '--recurse-submodules'], 'GIT_ARGUMENT_REFUSED', /nested repositories/);
    await expect(readdir(join(base, 'other'))).resolves.toEqual(['secret.txt']);
    await expect(readFile(join(workspace, 'a.txt'), 'utf8')).resolves.toBe('one\n');
  });
});

describe('racing a checked git call', () => {
  // The tools as the server has them: one createShellTools call, so bash and git share locks.
  const [bashOfServer, gitOfServer] = createShellTools({ executor: BWRAP_EXECUTOR, timeoutMs: 60_000, maxOutputBytes: 16_384 }) as [ToolDefinition, ToolDefinition];
  /** Records when each process of the runner started and ended. */
  class TimedRunner extends WorkspaceRunner {
    readonly spans: { command: string; args: readonly string[]; start: number; end: number }[] = [];
    override async run(spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult> {
      const start = performance.now();
      try {
        return await super.run(spec, limits);
      } finally {
        this.spans.push({ command: spec.command, args: spec.args, start, end: performance.now() });
      }
    }
  }

  it('starts no git process while a bash call of the workspace runs, and no bash process during a git call', async () => {
    const timed = new TimedRunner();
    const ctx = context(workspace, timed);
    await gitOfServer.handler.invoke({ args: ['init', '-q', '-b', 'main'] }, ctx);
    await writeRaw(join(workspace, 'a.txt'), 'one\n');
    const calls = [
      bashOfServer.handler.invoke({ command: 'sleep 0.4' }, ctx),
      new Promise((resolve) => setTimeout(resolve, 50)).then(() => gitOfServer.handler.invoke({ args: ['add', 'a.txt'] }, ctx)),
      new Promise((resolve) => setTimeout(resolve, 100)).then(() => bashOfServer.handler.invoke({ command: 'true' }, ctx)),
    ];
    await Promise.all(calls);
    const bashSpans = timed.spans.filter((s) => s.command === 'bash');
    const gitSpans = timed.spans.filter((s) => s.command === 'git' && s.args[0] !== 'init');
    expect(bashSpans).toHaveLength(2);
    expect(gitSpans.length).toBeGreaterThan(0);
    // Every git process of the add (config listing included) lies outside every bash process.
    for (const g of gitSpans) for (const b of bashSpans) expect(g.end <= b.start || g.start >= b.end, `${g.args.join(' ')} overlaps bash`).toBe(true);
  });

  it('never lets a concurrent checkout redirect a checked mv through a symlink (the red team\'s race)', async () => {
    const outside = join(base, 'outside');
    await mkdir(outside);
    // main has a real directory out/; branch x replaces it with a link to a directory outside.
    hostGit(workspace, 'init', '-q', '-b', 'main');
    await writeRaw(join(workspace, 'a.txt'), 'hello\n');
    await mkdir(join(workspace, 'out'));
    await writeRaw(join(workspace, 'out', 'keep'), '');
    hostGit(workspace, 'add', '-A');
    hostGit(workspace, 'commit', '-q', '-m', 'main');
    hostGit(workspace, 'checkout', '-q', '-b', 'x');
    await rm(join(workspace, 'out'), { recursive: true });
    await symlink(outside, join(workspace, 'out'));
    hostGit(workspace, 'add', '-A');
    hostGit(workspace, 'commit', '-q', '-m', 'x');
    hostGit(workspace, 'checkout', '-q', '-f', 'main');
    const ctx = context(workspace, runner);
    for (let round = 0; round < 20; round++) {
      const offset = round % 5;
      await Promise.allSettled([
        gitOfServer.handler.invoke({ args: ['mv', '-f', 'a.txt', 'out/pwned'] }, ctx),
        new Promise((resolve) => setTimeout(resolve, offset)).then(() => gitOfServer.handler.invoke({ args: ['checkout', '-q', 'x'] }, ctx)),
      ]);
      expect(await readdir(outside), `round ${round}`).toEqual([]);
      hostGit(workspace, 'checkout', '-q', '-f', 'main');
      hostGit(workspace, 'reset', '-q', '--hard');
    }
  }, 60_000);
});

describe('normal flows keep working', () => {
  it('init, add, commit, branch, switch, merge, tag, stash, log with ranges, diff, show, status', async () => {
    await repository();
    await expect(run('switch', '-q', '-c', 'feature/x')).resolves.toMatchObject({ exit_code: 0 });
    await write('src/b.ts', 'export const b = 1;\n');
    await expect(run('add', 'src/b.ts')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('commit', '-q', '-m', 'add b')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('switch', '-q', 'main')).resolves.toMatchObject({ exit_code: 0 });
    expect((await run('log', '--oneline', 'main..feature/x'))['stdout']).toMatch(/add b\n$/);
    expect((await run('log', '--oneline', 'main...feature/x'))['stdout']).toMatch(/add b\n$/);
    await expect(run('merge', '-q', '--no-edit', 'feature/x')).resolves.toMatchObject({ exit_code: 0 });
    expect((await run('diff', '--stat', 'HEAD~1'))['stdout']).toContain('src/b.ts');
    expect((await run('show', 'HEAD:src/b.ts'))['stdout']).toBe('export const b = 1;\n');
    await expect(run('tag', '-a', 'v1', '-m', 'v1')).resolves.toMatchObject({ exit_code: 0 });
    await write('a.txt', 'changed\n');
    expect((await run('status', '--short'))['stdout']).toBe(' M a.txt\n');
    expect((await run('diff'))['stdout']).toContain('+changed');
    await expect(run('stash', '-q')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('stash', 'pop', '-q')).resolves.toMatchObject({ exit_code: 0 });
    await write('msg.txt', 'from a file\n');
    await expect(run('commit', '-q', '-a', '-F', 'msg.txt')).resolves.toMatchObject({ exit_code: 0 });
    expect((await run('branch', '--list'))['stdout']).toBe('  feature/x\n* main\n');
    expect((await run('log', '-1', '--format=%an %s'))['stdout']).toBe('alice from a file\n');
    expect(await markers()).toEqual([]);
  });

  it('works on a repository with the settings clones and branches write (remotes, upstreams, colours)', async () => {
    await repository();
    await appendConfig('[remote "origin"]\n\turl = https://example.com/repo.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n[branch "feature.x"]\n\tremote = origin\n[user]\n\tname = Someone\n[color]\n\tui = auto\n[advice]\n\tdetachedHead = false\n[core]\n\tautocrlf = input\n');
    await expect(run('status')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('switch', '-q', '-c', 'topic', '--track', 'main')).resolves.toMatchObject({ exit_code: 0 });
    await expect(run('log', '--oneline')).resolves.toMatchObject({ exit_code: 0 });
  });

  it('keeps answering while it checks a large workspace, and stops at its bound with a refusal', async () => {
    await repository();
    // 20 000 entries: every one is looked at for a planted .git before git runs.
    for (let d = 0; d < 100; d += 1) {
      const dir = join(workspace, 'tree', `d${d}`);
      await mkdir(dir, { recursive: true });
      await Promise.all(Array.from({ length: 199 }, (_, f) => writeRaw(join(dir, `f${f}`), '')));
    }
    // A 10 ms timer's lateness, less the time the box kept this thread off a CPU meanwhile.
    const ticker = watchLoopHold(10);
    let worstHold: number;
    try {
      await expect(run('rev-parse', 'HEAD')).resolves.toMatchObject({ exit_code: 0 });
    } finally {
      worstHold = ticker.stop();
    }
    // Tick to tick within 100 ms: the 10 ms interval plus a hold under 90 ms.
    expect(worstHold + 10).toBeLessThan(100);
    await expect(inspectWorkspace(workspace, { maxEntries: 1000 })).rejects.toThrow(/more than 1000 files and directories/);
    // An aborted call stops the walk rather than finishing it.
    await expect(inspectWorkspace(workspace, { signal: AbortSignal.abort() })).rejects.toMatchObject({ reason: 'ABORTED' });
  }, 60_000);
});
