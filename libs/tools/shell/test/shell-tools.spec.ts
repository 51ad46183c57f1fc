import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ToolError,
  type ExecutorTier,
  type JsonObject,
  type ProcessLimits,
  type ProcessResult,
  type ProcessRunner,
  type ProcessSpec,
  type ToolContext,
  type ToolDefinition,
} from '@toolgate/contracts';
import { testToolContext } from '@toolgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkGitArgs, createShellTools, DEADLINE_RESERVE_MS, MAX_BASH_COMMAND_BYTES } from '../src/index.js';

/** Records what a tool asked to run and answers with a canned result. */
class RecordingRunner implements ProcessRunner {
  readonly runs: { spec: ProcessSpec; limits: ProcessLimits }[] = [];
  constructor(private readonly result: Partial<ProcessResult> = {}) {}
  async run(spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult> {
    this.runs.push({ spec, limits });
    return {
      exitCode: 0,
      signal: null,
      stdout: '',
      stderr: '',
      stdoutTruncated: false,
      stderrTruncated: false,
      timedOut: false,
      durationMs: 1,
      ...this.result,
    };
  }
  prepare(): never {
    throw new Error('not used');
  }
}

/**
 * Just enough of a real runner to run git for these tests: spawns in the workspace with exactly
 * the spec's environment plus PATH and HOME. (The real tiers live in adapter libs, which a tool
 * lib may not import; their own suites test isolation.)
 */
class PlainRunner implements ProcessRunner {
  run(spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(spec.command, [...spec.args], {
        cwd: limits.workspaceRoot,
        env: { PATH: '/usr/bin:/bin', HOME: limits.workspaceRoot, ...spec.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('error', reject);
      child.once('close', (exitCode, signal) =>
        resolve({ exitCode, signal, stdout, stderr, stdoutTruncated: false, stderrTruncated: false, timedOut: false, durationMs: 0 }),
      );
    });
  }
  prepare(): never {
    throw new Error('not used');
  }
}

// A named principal: git commits as the caller, and the tests read that identity back.
const context = (workspaceRoot: string, process?: ProcessRunner): ToolContext =>
  testToolContext({ principal: { id: 'alice', tenant: 'acme', roles: ['developer'] }, workspaceRoot, ...(process ? { process } : {}) });

/**
 * Stands in for a tier's executor: the shell tools need only its tier and what it says it
 * isolates (the real executors' summaries are held by their own specs and the server's e2e).
 */
const executorAt = (tier: ExecutorTier, summary = `It runs at the ${tier} test tier, which sees only what this test says.`) => ({
  tier,
  isolation: { summary },
});

const [bash, git] = createShellTools({ executor: executorAt('bwrap'), timeoutMs: 60_000, maxOutputBytes: 4096 }) as [ToolDefinition, ToolDefinition];

describe('createShellTools', () => {
  it('builds bash and git as high-risk exec tools at the chosen tier', () => {
    for (const tier of ['unisolated', 'bwrap', 'container'] as const) {
      const tools = createShellTools({ executor: executorAt(tier) });
      expect(tools.map((t) => t.manifest.name)).toEqual(['bash', 'git']);
      for (const { manifest } of tools) {
        expect(manifest.tier).toBe(tier);
        expect(manifest.risk).toBe('high');
        expect(manifest.permissions).toEqual([{ type: 'exec', scope: '*' }]);
        expect(manifest.provenance).toBe('first-party');
        expect(manifest.input['additionalProperties']).toBe(false);
        expect(manifest.timeoutMs).toBe(120_000);
      }
    }
  });

  it('keeps the largest timeout_ms below the call deadline, so a killed process still reports', () => {
    for (const { manifest } of [bash, git]) {
      const properties = manifest.input['properties'] as Record<string, Record<string, unknown>>;
      expect(properties['timeout_ms']?.['maximum']).toBe(60_000 - DEADLINE_RESERVE_MS);
      expect(manifest.timeoutMs).toBe(60_000);
    }
  });

  it('tells agents what the tier isolates in the words of its executor, without describing sandboxes itself', () => {
    const summary = 'It runs in a sandbox that sees only the workspace (at /workspace), a read-only /usr and no network (tier 2).';
    const tools = createShellTools({ executor: executorAt('bwrap', summary) });
    for (const { manifest } of tools) expect(manifest.description).toContain(summary);
    const other = createShellTools({ executor: executorAt('unisolated', 'It runs UNISOLATED as a host process (tier 1).') });
    for (const { manifest } of other) {
      expect(manifest.description).toContain('It runs UNISOLATED as a host process (tier 1).');
      expect(manifest.description).not.toContain('sandbox that sees only');
    }
    const bashDescription = tools[0]?.manifest.description ?? '';
    expect(bashDescription).toContain('killed at the deadline');
    expect(bashDescription).toContain(`at most ${120_000 - DEADLINE_RESERVE_MS} ms`);
  });

  it('refuses tier 0, an unknown tier, an executor that does not say what it isolates, and nonsensical limits', () => {
    expect(() => createShellTools({ executor: executorAt('inprocess') })).toThrow('process tier');
    expect(() => createShellTools({ executor: { tier: 'subprocess' as ExecutorTier, isolation: { summary: 'x' } } })).toThrow('process tier');
    for (const isolation of [{ summary: '' }, { summary: '   ' }, { summary: undefined as unknown as string }, undefined as unknown as { summary: string }]) {
      expect(() => createShellTools({ executor: { tier: 'bwrap', isolation } }), JSON.stringify(isolation)).toThrow('does not describe its isolation');
    }
    expect(() => createShellTools({ executor: executorAt('bwrap'), timeoutMs: 500 })).toThrow(RangeError);
    expect(() => createShellTools({ executor: executorAt('bwrap'), maxOutputBytes: 0 })).toThrow(RangeError);
  });
});

describe('bash', () => {
  it('runs bash -c through the call’s process runner in the workspace, with the call’s signal and the output cap', async () => {
    const runner = new RecordingRunner({ exitCode: 3, stdout: 'out', stderr: 'err', stderrTruncated: true });
    const ctx = context('/srv/ws/acme', runner);
    await expect(bash.handler.invoke({ command: 'make test' }, ctx)).resolves.toEqual({
      exit_code: 3,
      signal: null,
      stdout: 'out',
      stderr: 'err',
      truncated: true,
      timed_out: false,
    });
    expect(runner.runs).toEqual([
      {
        spec: { command: 'bash', args: ['--noprofile', '--norc', '-c', 'make test'] },
        limits: { workspaceRoot: '/srv/ws/acme', timeoutMs: 55_000, maxOutputBytes: 4096, signal: ctx.signal },
      },
    ]);
  });

  it('lets the caller lower the deadline but never raise it', async () => {
    const runner = new RecordingRunner({ timedOut: true, exitCode: null, signal: 'SIGTERM' });
    await expect(bash.handler.invoke({ command: 'sleep 9', timeout_ms: 250 }, context('/w', runner))).resolves.toMatchObject({
      timed_out: true,
      exit_code: null,
      signal: 'SIGTERM',
    });
    await bash.handler.invoke({ command: 'true', timeout_ms: 10_000_000 }, context('/w', runner));
    expect(runner.runs.map((r) => r.limits.timeoutMs)).toEqual([250, 55_000]);
    await expect(bash.handler.invoke({ command: 'true', timeout_ms: -1 }, context('/w', runner))).rejects.toThrow(ToolError);
  });

  it('refuses to run without a process runner instead of spawning anything itself', async () => {
    const error = await bash.handler.invoke({ command: 'id' }, context('/w')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect(error).toMatchObject({ reason: 'NO_PROCESS_RUNNER' });
  });

  it('refuses a command over 16 KiB', async () => {
    const runner = new RecordingRunner();
    const long = 'é'.repeat(MAX_BASH_COMMAND_BYTES / 2 + 1);
    await expect(bash.handler.invoke({ command: long }, context('/w', runner))).rejects.toThrow('longer than');
    expect(runner.runs).toEqual([]);
  });
});

describe('git argument policy', () => {
  const refused: [string, string[]][] = [
    ['a global -c', ['-c', 'core.sshCommand=touch /tmp/pwned', 'status']],
    ['-C', ['-C', '/etc', 'status']],
    ['--git-dir', ['--git-dir=/other/.git', 'log']],
    ['--work-tree', ['--work-tree=/', 'status']],
    ['--exec-path', ['--exec-path=/tmp/bin', 'status']],
    ['--git-dir after the subcommand', ['log', '--git-dir=/x']],
    ['config', ['config', 'core.fsmonitor', 'evil']],
    ['clone', ['clone', 'https://example.com/repo.git']],
    ['fetch', ['fetch', 'origin']],
    ['push', ['push']],
    ['submodule', ['submodule', 'update']],
    ['rebase', ['rebase', '--exec', 'sh', 'main']],
    ['worktree', ['worktree', 'add', '../elsewhere']],
    ['an alias-looking subcommand', ['evil-alias']],
    ['--upload-pack', ['ls-files', '--upload-pack=touch x']],
    ['an ext:: URL', ['apply', 'ext::sh -c touch% /tmp/pwned']],
    ['--ext-diff', ['diff', '--ext-diff']],
    ['--textconv', ['log', '-p', '--textconv']],
    ['--output', ['diff', '--output=.git/hooks/pre-commit']],
    ['an abbreviated --output', ['diff', '--outp=x']],
    ['--template', ['init', '--template=/tmp/hooks']],
    ['--separate-git-dir', ['init', '--separate-git-dir=../elsewhere']],
    ['grep -O', ['grep', '-O', 'pattern']],
    ['grep -O in a cluster', ['grep', '-iOvim', 'pattern']],
    ['commit -S', ['commit', '-S', '-m', 'x']],
    ['tag -s', ['tag', '-s', 'v1']],
    ['--gpg-sign', ['commit', '--gpg-sign=key']],
    ['an absolute path', ['diff', '--no-index', '/etc/passwd', 'x']],
    ['a path climbing out', ['add', '../outside.txt']],
    ['an attached absolute path', ['commit', '-F/etc/shadow']],
    ['an option value climbing out', ['log', '--since=1', '--format=x', '--output-indicator-new=x', '--directory=../x']],
    ['a home path', ['show', '~/secret']],
    ['nothing', []],
  ];
  it.each(refused)('refuses %s', (_what, args) => {
    expect(() => checkGitArgs(args)).toThrow(ToolError);
  });

  const allowed: string[][] = [
    ['status', '--short'],
    ['log', '--oneline', '-n', '5', 'main..feature/x'],
    ['diff', 'HEAD~1..HEAD', '--', 'src/a.ts'],
    ['commit', '-am', 'fix: handle -c flags'],
    ['switch', '-c', 'topic'],
    ['grep', '-c', 'TODO'],
    ['show', 'HEAD:src/a.ts'],
    ['add', 'docs/file.txt'],
    ['diff', '--no-ext-diff', '--stat'],
    ['checkout', '--', '-weird-file-name'],
  ];
  it.each(allowed.map((a) => [a.join(' '), a]))('allows git %s', (_what, args) => {
    expect(() => checkGitArgs(args as string[])).not.toThrow();
  });

  it('names the refused option and why', () => {
    expect(() => checkGitArgs(['diff', '--ext-diff'])).toThrow("git: '--ext-diff' is refused: it runs an external diff program");
    expect(() => checkGitArgs(['-c', 'x=y', 'status'])).toThrow('options before the subcommand are not accepted');
  });
});

describe('git against a real repository', () => {
  let base: string;
  let workspace: string;
  const runner = new PlainRunner();
  const run = (args: string[]) => git.handler.invoke({ args }, context(workspace, runner)) as Promise<JsonObject>;

  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-git-')));
    workspace = join(base, 'acme');
    await mkdir(workspace);
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('initialises, commits as the calling principal, and logs', async () => {
    await expect(run(['init', '-q', '-b', 'main'])).resolves.toMatchObject({ exit_code: 0 });
    await writeFile(join(workspace, 'a.txt'), 'hello\n');
    await expect(run(['add', 'a.txt'])).resolves.toMatchObject({ exit_code: 0 });
    await expect(run(['commit', '-q', '-m', 'first'])).resolves.toMatchObject({ exit_code: 0 });
    const log = await run(['log', '--format=%an <%ae> %cn: %s']);
    expect(log['stdout']).toBe('alice <alice@acme.toolgate.invalid> alice: first\n');
  });

  it('never runs hooks or an fsmonitor program planted in the repository', async () => {
    await run(['init', '-q']);
    const marker = join(base, 'pwned');
    const hook = join(workspace, '.git', 'hooks', 'pre-commit');
    await writeFile(hook, `#!/bin/sh\ntouch ${marker}\n`);
    await chmod(hook, 0o755);
    await writeFile(join(workspace, 'a.txt'), 'x');
    await run(['add', 'a.txt']);
    await expect(run(['commit', '-q', '-m', 'x'])).resolves.toMatchObject({ exit_code: 0 });
    // A hostile repository (e.g. from an archive the agent unpacked) configures programs to run:
    // the tool now refuses to run git on it at all (ADR 0024).
    await writeFile(join(workspace, '.git', 'config'), `[core]\n\tfsmonitor = touch ${marker}-fsmonitor\n\tpager = touch ${marker}-pager\n`, { flag: 'a' });
    await expect(run(['status'])).rejects.toMatchObject({ reason: 'GIT_REPOSITORY_REFUSED' });
    await expect(run(['log'])).rejects.toThrow('core.fsmonitor, which runs a program');
    for (const suffix of ['', '-fsmonitor', '-pager']) await expect(stat(`${marker}${suffix}`)).rejects.toThrow();
  });

  it('does not find a repository above the workspace', async () => {
    // The workspace's parent is a repository (as /work/main would be at tier 1); git must not see it.
    await new PlainRunner().run({ command: 'git', args: ['init', '-q', base] }, { workspaceRoot: base, timeoutMs: 5000, maxOutputBytes: 4096 });
    const status = await run(['status']);
    expect(status['exit_code']).not.toBe(0);
    expect(String(status['stderr'])).toMatch(/not a git repository/);
  });

  it('refuses before running anything', async () => {
    const recording = new RecordingRunner();
    await expect(git.handler.invoke({ args: ['-c', 'core.pager=sh', 'log'] }, context(workspace, recording))).rejects.toMatchObject({
      reason: 'GIT_ARGUMENT_REFUSED',
    });
    expect(recording.runs).toEqual([]);
    await expect(readFile(join(workspace, 'x'), 'utf8')).rejects.toThrow();
  });
});
