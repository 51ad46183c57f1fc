import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ToolError } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BwrapExecutor, BwrapRunner, checkReadOnlyPaths, MAX_READ_ONLY_PATHS } from '../src/index.js';

// As in bwrap-executor.spec.ts: skipped with its reason where bwrap cannot run, a failure in CI.
const unavailable = await new BwrapExecutor().check().then(
  () => undefined,
  (error: unknown) => (error as Error).message,
);
if (unavailable && process.env['CI'] === 'true') throw new Error(`CI=true but the bwrap tier cannot run here: ${unavailable} (.ci/run installs bubblewrap)`);
if (unavailable) console.warn(`skipping the bwrap read-only path tests: ${unavailable}`);

function refusal(paths: unknown): string {
  try {
    checkReadOnlyPaths(paths as string[]);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).reason).toBe('READ_ONLY_PATH_REFUSED');
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(paths)} was accepted`);
}

describe('read-only paths that would weaken the sandbox (checked before any mount)', () => {
  it.each([
    ['opt/servers/x', 'not an absolute path'],
    ['./x', 'not an absolute path'],
    ['~/servers', 'not an absolute path'],
    ['', 'empty'],
    ['/', 'the root directory'],
    ['/opt/../etc', '"." or ".." segment'],
    ['/opt/./x', '"." or ".." segment'],
    ['/opt/..', '"." or ".." segment'],
    ['/opt//x', 'empty segment'],
    ['/opt/x/', 'trailing "/"'],
    ['/proc', 'the sandbox makes /proc itself'],
    ['/proc/1/environ', 'the sandbox makes /proc itself'],
    ['/proc/self/root', 'the sandbox makes /proc itself'],
    ['/dev', 'the sandbox makes /dev itself'],
    ['/dev/shm', 'the sandbox makes /dev itself'],
    ['/sys', 'the sandbox makes /sys itself'],
    ['/sys/fs/cgroup', 'the sandbox makes /sys itself'],
    ['/workspace', 'the sandbox makes /workspace itself'],
    ['/workspace/x', 'the sandbox makes /workspace itself'],
    ['/tmp', 'the sandbox makes /tmp itself'],
    ['/etc', 'the sandbox makes /etc itself'],
    ['/etc/passwd', 'the sandbox makes /etc/passwd itself'],
    ['/etc/group', 'the sandbox makes /etc/group itself'],
    ['/opt/x\nSYSTEM', 'control character'],
    ['/opt/x\u0000/etc', 'control character'],
    ['/opt/\u001b[2Jx', 'control character'],
    [`/${'a'.repeat(5000)}`, 'longer than 4095 characters'],
  ])('refuses %j: %s', (path, why) => {
    const message = refusal([path]);
    expect(message).toContain(why);
    expect(message).toMatch(/^read-only path /);
  });

  it('refuses what is not a list of strings, and more paths than one process may mount', () => {
    expect(refusal('/opt/x')).toContain('must be a list');
    expect(refusal([42])).toContain('not a string');
    expect(refusal(Array.from({ length: MAX_READ_ONLY_PATHS + 1 }, (_, i) => `/opt/p${i}`))).toContain(`at most ${MAX_READ_ONLY_PATHS}`);
  });

  it('accepts nothing at all as no paths', () => {
    expect(checkReadOnlyPaths(undefined)).toEqual([]);
    expect(checkReadOnlyPaths([])).toEqual([]);
  });
});

describe('read-only paths that are missing are an error, never skipped', () => {
  let base: string;
  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-bwrap-ro-missing-')));
    await writeFile(join(base, 'file'), 'x');
    execFileSync('mkfifo', [join(base, 'fifo')]);
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('names a path that does not exist, one below a file, and one that is neither file nor directory', () => {
    expect(refusal([join(base, 'absent')])).toBe(`read-only path ${JSON.stringify(join(base, 'absent'))} does not exist on this host; it would not be mounted`);
    expect(refusal([base, join(base, 'file', 'below')])).toContain('does not exist on this host');
    // A FIFO or socket is not something to read code from, and a socket stays connectable on a read-only mount.
    expect(refusal([join(base, 'fifo')])).toContain('is neither a file nor a directory');
  });

  it('refuses a path that resolves through a symbolic link, so a link put in its place later cannot redirect the mount', async () => {
    await mkdir(join(base, 'real'), { recursive: true });
    await symlink(join(base, 'real'), join(base, 'link'));
    expect(refusal([join(base, 'link')])).toBe(`read-only path ${JSON.stringify(join(base, 'link'))} now resolves through a symbolic link; it is not mounted`);
    expect(refusal([join(base, 'link', 'below')])).toContain('does not exist on this host');
    expect(checkReadOnlyPaths([join(base, 'real')])).toEqual([join(base, 'real')]);
  });

  it('refuses the whole start of a process, not only the missing path', () => {
    const runner = new BwrapRunner();
    expect(() => runner.prepare({ command: 'true', args: [], readOnlyPaths: [base, join(base, 'absent')] }, base)).toThrow(/does not exist on this host/);
  });
});

/** Whether this process may make user, mount and pid namespaces of its own, to mount a procfs as an operator could; a failure under CI=true. */
const namespaces = spawnSync('unshare', ['--user', '--map-root-user', '--mount', '--pid', '--fork', 'true'], { encoding: 'utf8' });
const noNamespaces = namespaces.status === 0 ? undefined : (namespaces.stderr || namespaces.error?.message || `exit ${namespaces.status}`).trim();
if (noNamespaces && process.env['CI'] === 'true') throw new Error(`CI=true but unshare cannot make a mount namespace here: ${noNamespaces}`);
if (noNamespaces) console.warn(`skipping the kernel file system read-only path test: ${noNamespaces}`);

describe.skipIf(noNamespaces !== undefined)('kernel file systems under another name (ADR 0072), at every start', () => {
  let base: string;
  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-bwrap-ro-kernel-')));
    for (const d of ['p2', 'sy', 'cg', 'bp', 'tf', 'plain']) await mkdir(join(base, d));
    await writeFile(join(base, 'version'), '');
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('refuses a fresh procfs, sysfs or cgroup2, a bind of /proc/sys and a proc file bound onto a file; accepts tmpfs and a plain directory', async () => {
    const at = (name: string) => join(base, name);
    const script = at('check.mts');
    await writeFile(
      script,
      [
        `import { checkReadOnlyPaths } from ${JSON.stringify(resolve(__dirname, '../src/read-only-paths.ts'))};`,
        `for (const path of process.argv.slice(2)) {`,
        `  try { checkReadOnlyPaths([path]); console.log('accepted'); } catch (e) { console.log(e.reason + ' ' + e.message); }`,
        `}`,
      ].join('\n'),
    );
    const mounts = [
      `mount -t proc proc ${at('p2')}`,
      `mount -t sysfs sysfs ${at('sy')}`,
      `mount -t cgroup2 none ${at('cg')}`,
      `mount --bind /proc/sys ${at('bp')}`,
      `mount --bind /proc/version ${at('version')}`,
      `mount -t tmpfs tmpfs ${at('tf')}`,
    ].join(' && ');
    const tsx = resolve(__dirname, '../../../../node_modules/.bin/tsx');
    const paths = ['p2', 'p2/sys/kernel', 'sy', 'cg', 'bp', 'version', 'tf', 'plain'].map(at);
    const run = spawnSync('unshare', ['--user', '--map-root-user', '--mount', '--pid', '--net', '--cgroup', '--fork', 'sh', '-c', `${mounts} && exec "$0" "$@"`, tsx, script, ...paths], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const on = (path: string, type: string) =>
      `READ_ONLY_PATH_REFUSED read-only path ${JSON.stringify(path)} is on the kernel file system '${type}', which would show the host itself; it is not mounted`;
    expect(run.stdout.trim().split('\n')).toEqual([
      on(at('p2'), 'proc'),
      on(at('p2/sys/kernel'), 'proc'),
      on(at('sy'), 'sysfs'),
      on(at('cg'), 'cgroup2'),
      on(at('bp'), 'proc'),
      on(at('version'), 'proc'),
      'accepted',
      'accepted',
    ]);
  });
});

describe.skipIf(unavailable !== undefined)('read-only paths inside the bwrap sandbox', () => {
  const runner = new BwrapRunner({ killGraceMs: 300 });
  let base: string;
  let workspace: string;
  let server: string;
  let secret: string;

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-bwrap-ro-')));
    workspace = join(base, 'workspace');
    server = join(base, 'opt', 'servers', 'x');
    secret = join(base, 'opt', 'secret');
    await mkdir(workspace, { recursive: true });
    await mkdir(join(server, 'lib'), { recursive: true });
    await mkdir(secret, { recursive: true });
    await writeFile(join(server, 'index.js'), "console.log('server ' + require('./lib/part.js'));\n");
    await writeFile(join(server, 'lib', 'part.js'), "module.exports = 'ok';\n");
    await writeFile(join(secret, 'key'), 'sibling-secret');
    // A link inside the mounted tree resolves inside the sandbox, where its target is not mounted.
    await symlink(join(secret, 'key'), join(server, 'link-to-secret'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  const sh = (script: string, readOnlyPaths: readonly string[]) =>
    runner.run({ command: 'sh', args: ['-c', script], readOnlyPaths }, { workspaceRoot: workspace, timeoutMs: 10_000, maxOutputBytes: 65_536 });

  it('runs an installed program from its own path, read-only', async () => {
    const result = await sh(`node ${server}/index.js`, [server]);
    expect(result).toMatchObject({ exitCode: 0, stdout: 'server ok\n' });
  });

  it('cannot write, create or remove anything below a read-only path', async () => {
    const result = await sh(
      [`echo x > ${server}/index.js && echo wrote`, `touch ${server}/new && echo created`, `rm -f ${server}/lib/part.js && echo removed`, `mkdir ${server}/d && echo made`, `cat ${server}/lib/part.js`].join('; '),
      [server],
    );
    expect(result.stdout).not.toMatch(/wrote|created|removed|made/);
    expect(result.stdout).toContain("module.exports = 'ok';");
    expect(result.stderr).toMatch(/Read-only file system/);
  });

  it('shows nothing beside the mounted path: its siblings, parents and links out of it stay on the host', async () => {
    const result = await sh([`ls ${join(base, 'opt')}`, `cat ${secret}/key || echo no-sibling`, `cat ${server}/link-to-secret || echo no-link`, `ls ${workspace} || echo no-host-workspace`].join('; '), [server]);
    expect(result.stdout.split('\n')).toContain('servers');
    expect(result.stdout).not.toContain('sibling-secret');
    expect(result.stdout).toContain('no-sibling');
    expect(result.stdout).toContain('no-link');
    expect(result.stdout).toContain('no-host-workspace');
  });

  it('mounts nested paths in either order, the deeper one still visible', async () => {
    const result = await sh(`cat ${server}/lib/part.js && cat ${secret}/key`, [join(server, 'lib'), join(base, 'opt')]);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.stdout).toContain('sibling-secret');
  });

  it('starts a long-lived process (an MCP server) with the paths mounted, through prepare()', async () => {
    const prepared = runner.prepare({ command: 'node', args: [`${server}/index.js`], readOnlyPaths: [server] }, workspace);
    const child = spawn(prepared.command, [...prepared.args], { cwd: prepared.cwd, env: { ...prepared.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect({ code, out }).toEqual({ code: 0, out: 'server ok\n' });
  });

  it('fails a call at once, naming the path, when a read-only path is gone', async () => {
    await expect(sh('true', [join(base, 'opt', 'gone')])).rejects.toThrow(`read-only path ${JSON.stringify(join(base, 'opt', 'gone'))} does not exist on this host`);
  });
});
