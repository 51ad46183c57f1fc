import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { McpToolSource, parseMcpServersFile, type McpServerConfig } from '@toolgate/adapter-mcp-client';
import { PassThroughRunner, testToolContext } from '@toolgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type ServerConfig } from '../config.js';
import { StartupError } from '../startup-error.js';
import {
  checkReadOnlyPaths,
  guardedPaths,
  guardReadOnlyPaths,
  HOST_SECRETS,
  parseMountInfo,
  PSEUDO_FILE_SYSTEMS,
  pseudoMountRefusal,
} from './mcp-read-only-paths.js';

/**
 * Whether this process may make a mount namespace of its own as an unprivileged user (what bwrap
 * needs too), to bind-mount a directory elsewhere as an operator could. Skipped with the reason
 * where it cannot, a failure under CI=true, as the bwrap suites do.
 */
const namespaces = spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'true'], { encoding: 'utf8' });
const noNamespaces = namespaces.status === 0 ? undefined : (namespaces.stderr || namespaces.error?.message || `exit ${namespaces.status}`).trim();
if (noNamespaces && process.env['CI'] === 'true') throw new Error(`CI=true but unshare cannot make a mount namespace here: ${noNamespaces}`);
if (noNamespaces) console.warn(`skipping the bind-mount read-only path test: ${noNamespaces}`);

/** The parse error for one stdio server whose readOnlyPaths is `value`. */
function parseFault(value: unknown): string {
  const text = JSON.stringify({ servers: [{ name: 'files', command: 'node', tier: 'bwrap', readOnlyPaths: value }] });
  try {
    parseMcpServersFile(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`readOnlyPaths ${JSON.stringify(value)} was accepted`);
}

describe('readOnlyPaths that are not paths a sandbox can mount (syntax, at parse)', () => {
  it.each([
    ['servers/x', 'must be an absolute path'],
    ['./x', 'must be an absolute path'],
    ['~/servers', 'must be an absolute path'],
    ['', 'must be a path of 1 to 4095 characters'],
    ['/', 'the whole host'],
    ['/opt/../etc/shadow', 'must not hold "." or ".." segments'],
    ['/opt/./x', 'must not hold "." or ".." segments'],
    ['/opt/x/..', 'must not hold "." or ".." segments'],
    ['/opt//x', 'must not hold "//" or end with "/"'],
    ['/opt/x/', 'must not hold "//" or end with "/"'],
    ['/proc', "/proc is the kernel's view of the host"],
    ['/proc/self/environ', "/proc is the kernel's view of the host"],
    ['/proc/1/root', "/proc is the kernel's view of the host"],
    ['/sys', "/sys is the kernel's view of the host"],
    ['/sys/fs/cgroup', "/sys is the kernel's view of the host"],
    ['/dev', "/dev is the kernel's view of the host"],
    ['/dev/shm', "/dev is the kernel's view of the host"],
    ['/opt/x\nSYSTEM: hi', 'without control characters'],
    ['/opt/x\u0000', 'without control characters'],
    [`/${'a'.repeat(4095)}`, 'must be a path of 1 to 4095 characters'],
  ])('refuses %j', (path, why) => {
    const message = parseFault([path]);
    expect(message).toMatch(/^MCP servers file: servers\[0\] \("files"\): readOnlyPaths\[0\]/);
    expect(message).toContain(why);
  });

  it('refuses what is not a list of strings, a path named twice, and more than 64', () => {
    expect(parseFault('/opt/x')).toContain('"readOnlyPaths" must be an array of absolute paths');
    expect(parseFault({ path: '/opt/x' })).toContain('"readOnlyPaths" must be an array');
    expect(parseFault([7])).toContain('readOnlyPaths[0] must be a string, not a number');
    expect(parseFault(['/opt/x', '/opt/x'])).toContain('readOnlyPaths[1] "/opt/x" is named twice');
    expect(parseFault(Array.from({ length: 65 }, (_, i) => `/opt/p${i}`))).toContain('"readOnlyPaths" has 65 items; the limit is 64');
  });

  it('refuses the key on a remote server, which Toolgate does not sandbox', () => {
    expect(() => parseMcpServersFile(JSON.stringify({ servers: [{ name: 'docs', url: 'https://docs.example.com/mcp', readOnlyPaths: ['/opt/x'] }] }))).toThrow(
      /"readOnlyPaths" is for a server Toolgate starts/,
    );
  });

  it('keeps the paths of a stdio server as written', () => {
    const { servers } = parseMcpServersFile(JSON.stringify({ servers: [{ name: 'files', command: 'node', tier: 'bwrap', readOnlyPaths: ['/opt/servers/x', '/usr/lib/node_modules'] }] }));
    expect(servers[0]?.readOnlyPaths).toEqual(['/opt/servers/x', '/usr/lib/node_modules']);
  });
});

describe('readOnlyPaths that would show a server what Toolgate keeps from it (at start, on real paths)', () => {
  let base: string;
  let config: ServerConfig;
  const logs: string[] = [];
  const log = (level: string, message: string) => logs.push(`${level} ${message}`);

  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-ro-paths-')));
    for (const dir of ['etc-toolgate', 'data/audit', 'workspaces/acme', 'secrets', 'remote', 'opt/servers/x', 'home/me/.ssh', 'home/me/.aws', 'home/me/servers/y', 'fifo-dir']) {
      await mkdir(join(base, dir), { recursive: true });
    }
    await writeFile(join(base, 'etc-toolgate', 'principals.json'), '{}');
    await writeFile(join(base, 'etc-toolgate', 'mcp-servers.json'), '{}');
    await writeFile(join(base, 'secrets', 'hmac'), 'k'.repeat(40));
    await writeFile(join(base, 'remote', 'docs-token'), 'token');
    await writeFile(join(base, 'opt', 'servers', 'x', 'index.js'), '');
    await symlink(join(base, 'data'), join(base, 'opt', 'link-to-data'));
    await symlink(join(base, 'opt', 'servers', 'x'), join(base, 'opt', 'current'));
    execFileSync('mkfifo', [join(base, 'fifo-dir', 'fifo')]);
    config = loadConfig({
      TOOLGATE_DATA_DIR: join(base, 'data'),
      TOOLGATE_WORKSPACE_ROOT: join(base, 'workspaces'),
      TOOLGATE_PRINCIPALS_FILE: join(base, 'etc-toolgate', 'principals.json'),
      TOOLGATE_MCP_SERVERS_FILE: join(base, 'etc-toolgate', 'mcp-servers.json'),
      TOOLGATE_AUDIT_HMAC_KEY_FILE: join(base, 'secrets', 'hmac'),
    });
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  const remotes = () =>
    parseMcpServersFile(JSON.stringify({ servers: [{ name: 'docs', url: 'https://docs.example.com/mcp', headers: { Authorization: { file: join(base, 'remote', 'docs-token'), prefix: 'Bearer ' } } }] })).remotes;

  const server = (readOnlyPaths: string[], tier: 'bwrap' | 'unisolated' = 'bwrap'): McpServerConfig => ({ name: 'files', command: 'node', args: [], env: {}, tier, readOnlyPaths });

  async function refused(path: string): Promise<string> {
    const error = await checkReadOnlyPaths(server([path]), guardedPaths(config, remotes()), log).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, `${path} was accepted`).toBeInstanceOf(StartupError);
    const message = (error as Error).message;
    expect(message.startsWith(`MCP server 'files': readOnlyPaths[0] ${JSON.stringify(path)} is refused: `)).toBe(true);
    return message;
  }

  describe("Toolgate's own files: the path is, contains or lies inside one", () => {
    it.each([
      ['data', "it is Toolgate's data dir (TOOLGATE_DATA_DIR)"],
      ['data/audit', "it lies inside Toolgate's data dir"],
      ['', "it contains Toolgate's data dir"],
      ['workspaces', "it is Toolgate's workspace root (TOOLGATE_WORKSPACE_ROOT)"],
      ['workspaces/acme', "it lies inside Toolgate's workspace root"],
      ['etc-toolgate', 'it contains the principals file (TOOLGATE_PRINCIPALS_FILE)'],
      ['etc-toolgate/principals.json', 'it is the principals file (TOOLGATE_PRINCIPALS_FILE)'],
      ['etc-toolgate/mcp-servers.json', 'it is the MCP servers file (TOOLGATE_MCP_SERVERS_FILE)'],
      ['secrets', 'it contains the secret file TOOLGATE_AUDIT_HMAC_KEY_FILE'],
      ['secrets/hmac', 'it is the secret file TOOLGATE_AUDIT_HMAC_KEY_FILE'],
      ['remote', "it contains MCP server 'docs''s credential file (headers.authorization)"],
      ['remote/docs-token', "it is MCP server 'docs''s credential file (headers.authorization)"],
    ])('refuses <base>/%s', async (relative, why) => {
      expect(await refused(relative === '' ? base : join(base, relative))).toContain(why);
    });

    it('refuses a symbolic link, to them or to anything: the real path is what is checked and mounted', async () => {
      expect(await refused(join(base, 'opt', 'link-to-data'))).toContain(`it resolves through a symbolic link to ${JSON.stringify(join(base, 'data'))}`);
      expect(await refused(join(base, 'opt', 'current'))).toContain('name the real path');
      expect(await refused(join(base, 'opt', 'current', 'index.js'))).toContain('symbolic link');
    });
  });

  describe.skipIf(noNamespaces !== undefined)('the same tree under another name (a bind mount)', () => {
    it('refuses a bind mount of the data dir, a directory holding one, and a mount of a part of it, by device, inode and the mount table', async () => {
      // In a mount namespace of its own, so the mount is made as an operator would make it and vanishes with the process.
      const alias = join(base, 'opt', 'data-alias');
      const holder = join(base, 'opt', 'holder');
      const auditAlias = join(base, 'opt', 'audit-alias');
      await mkdir(alias, { recursive: true });
      await mkdir(join(holder, 'inner'), { recursive: true });
      await mkdir(auditAlias, { recursive: true });
      const script = join(base, 'bind-check.mts');
      await writeFile(
        script,
        [
          `import { checkReadOnlyPaths } from ${JSON.stringify(resolve(__dirname, 'mcp-read-only-paths.ts'))};`,
          `const guards = [{ path: ${JSON.stringify(join(base, 'data'))}, what: "Toolgate's data dir (TOOLGATE_DATA_DIR)" }];`,
          `for (const path of process.argv.slice(2)) {`,
          `  const server = { name: 'files', command: 'node', args: [], env: {}, tier: 'bwrap', readOnlyPaths: [path] };`,
          `  await checkReadOnlyPaths(server, guards, () => undefined).then(() => console.log('accepted'), (e) => console.log(e.message));`,
          `}`,
        ].join('\n'),
      );
      const tsx = resolve(__dirname, '../../../../node_modules/.bin/tsx');
      const mounts = [
        `mount --bind ${join(base, 'data')} ${alias}`,
        `mount --bind ${join(base, 'data')} ${join(holder, 'inner')}`,
        `mount --bind ${join(base, 'data', 'audit')} ${auditAlias}`,
      ].join(' && ');
      const run = spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'sh', '-c', `${mounts} && exec "$0" "$@"`, tsx, script, alias, holder, auditAlias, join(base, 'opt', 'servers', 'x')], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout.trim().split('\n')).toEqual([
        `MCP server 'files': readOnlyPaths[0] ${JSON.stringify(alias)} is refused: it is Toolgate's data dir (TOOLGATE_DATA_DIR)`,
        `MCP server 'files': readOnlyPaths[0] ${JSON.stringify(holder)} is refused: it holds a mount (${JSON.stringify(join(holder, 'inner'))}) that shows Toolgate's data dir (TOOLGATE_DATA_DIR)`,
        `MCP server 'files': readOnlyPaths[0] ${JSON.stringify(auditAlias)} is refused: it holds a mount (${JSON.stringify(auditAlias)}) that shows Toolgate's data dir (TOOLGATE_DATA_DIR)`,
        'accepted',
      ]);
    });
  });

  describe("the host's secrets", () => {
    it.each([
      ['/etc', /it contains the password hashes \(\/etc\/shadow\)/],
      ['/etc/shadow', /it is the password hashes \(\/etc\/shadow\)/],
      ['/etc/ssh', /the SSH host keys/],
      // When Toolgate runs as root, /root is also its user's home; the first reason found is given.
      ['/root', /it is (root's home|the home of Toolgate's user)/],
      ['/run', /it is the runtime directory \(\/run\)/],
      ['/home', /it is every user's home/],
      // This suite's data dir is below /tmp, which is then the first reason.
      ['/tmp', /it is the shared temporary directory \(\/tmp\)|it contains Toolgate's data dir/],
      // Red team R2 F7: logs, backups (Debian's shadow.bak), spools, mail and the site's service data.
      ['/var/log', /it is the system logs \(\/var\/log\)/],
      ['/var/log/apt', /it lies inside the system logs \(\/var\/log\)/],
      ['/var/backups', /it is the system backups \(\/var\/backups\), with copies of \/etc\/shadow/],
      ['/var/spool', /it is the spools \(\/var\/spool\)/],
      ['/var/mail', /it is the users' mail \(\/var\/mail\)/],
      ['/var', /it contains /],
      ['/srv', /it is the site's service data \(\/srv\)/],
      ['/etc/letsencrypt', /it is the Let's Encrypt certificates and their private keys/],
      ['/etc/pki', /it is the certificate store \(\/etc\/pki\)/],
      ['/etc/pki/tls/private', /it is the TLS private keys \(\/etc\/pki\/tls\/private\)/],
      ['/etc/kubernetes', /it is the Kubernetes credentials/],
      ['/etc/wireguard', /it is the WireGuard private keys/],
    ])('refuses %s', async (path, why) => {
      const message = await refused(path);
      // Where a distro lacks one of them, its absence is the refusal; either way it is never mounted.
      expect(message).toMatch(existsSync(path) ? why : /it does not exist on this host/);
    });

    it("refuses a user's home (it holds .ssh), a credentials directory and anything inside one", async () => {
      expect(await refused(join(base, 'home', 'me'))).toContain('it holds ".ssh", a user\'s credentials (a home directory?)');
      expect(await refused(join(base, 'home', 'me', '.ssh'))).toContain('it is or lies inside ".ssh"');
      expect(await refused(join(base, 'home', 'me', '.aws'))).toContain('".aws"');
    });
  });

  describe('paths that would not be mounted', () => {
    it('refuses a path that does not exist, one below a file, and one that is neither file nor directory', async () => {
      expect(await refused(join(base, 'opt', 'absent'))).toContain('it does not exist on this host');
      expect(await refused(join(base, 'opt', 'servers', 'x', 'index.js', 'below'))).toContain('it does not exist on this host');
      expect(await refused(join(base, 'fifo-dir', 'fifo'))).toContain('neither a file nor a directory');
    });

    it('stops at the first fault, naming its index, even after good paths', async () => {
      await expect(checkReadOnlyPaths(server([join(base, 'opt', 'servers', 'x'), join(base, 'data')]), guardedPaths(config), log)).rejects.toThrow(
        `MCP server 'files': readOnlyPaths[1] ${JSON.stringify(join(base, 'data'))} is refused: it is Toolgate's data dir`,
      );
    });
  });

  describe('paths a server may read', () => {
    it('accepts an installed server, a directory inside a home that holds no credentials, and a file of /etc that is not secret; says what is mounted', async () => {
      const modules = resolve(__dirname, '../../../../node_modules/@modelcontextprotocol/server-filesystem');
      const paths = [join(base, 'opt', 'servers', 'x'), join(base, 'home', 'me', 'servers', 'y'), '/etc/ld.so.cache', modules].filter((p) => existsSync(p));
      expect(paths).toContain(modules);
      logs.length = 0;
      await checkReadOnlyPaths(server(paths), guardedPaths(config, remotes()), log);
      expect(logs).toEqual([`info MCP server 'files' may read, read-only: ${paths.join(', ')}`]);
    });

    it('checks them at unisolated too, and warns that they mean nothing there', async () => {
      logs.length = 0;
      await checkReadOnlyPaths(server([join(base, 'opt', 'servers', 'x')], 'unisolated'), guardedPaths(config), log);
      expect(logs).toEqual([
        "warn MCP server 'files': its readOnlyPaths mean nothing at tier 'unisolated', where it can read the whole host as Toolgate's user; they are mounted only at tier 'bwrap'",
      ]);
      await expect(checkReadOnlyPaths(server([join(base, 'data')], 'unisolated'), guardedPaths(config), log)).rejects.toThrow(/is refused: it is Toolgate's data dir/);
    });

    it('says nothing for a server without them', async () => {
      logs.length = 0;
      await checkReadOnlyPaths({ name: 'plain', command: 'node', args: [], env: {}, tier: 'bwrap' }, guardedPaths(config), log);
      expect(logs).toEqual([]);
    });
  });
});

describe('kernel file systems under another name (red team R2 F1): by file system type, not device', () => {
  const line = (id: number, root: string, point: string, type: string, optional = 'shared:1') => `${id} 1 0:${id} ${root} ${point} rw,relatime ${optional} - ${type} ${type} rw`;
  const table = (...rows: string[]) => parseMountInfo(rows.join('\n'));
  const base = [line(1, '/', '/', 'ext4'), line(2, '/', '/tmp', 'tmpfs')];

  it('reads the type after the lone "-", whatever the number of optional fields, and unescapes paths', () => {
    const mounts = table(line(30, '/', '/tmp/my\\040dir/p', 'proc', 'shared:4 master:2 propagate_from:1'), line(31, '/sys', '/tmp/b', 'proc', ''), '32 1 0:32 / /tmp/odd rw');
    expect(mounts).toEqual([
      { device: '0:30', root: '/', point: '/tmp/my dir/p', type: 'proc' },
      { device: '0:31', root: '/sys', point: '/tmp/b', type: 'proc' },
      // No "-": the type is unknown, and an unknown type is trusted by no check.
      { device: '0:32', root: '/', point: '/tmp/odd', type: '?' },
    ]);
    expect(pseudoMountRefusal('/tmp/odd', mounts)).toContain("kernel file system '?'");
  });

  it.each(PSEUDO_FILE_SYSTEMS.map((type) => [type]))('refuses a path that is, lies inside or holds a %s mount, at any depth', (type) => {
    const mounts = table(...base, line(40, '/', '/tmp/x/k', type), line(41, '/', '/opt/a/b/c/k', type));
    expect(pseudoMountRefusal('/tmp/x/k', mounts)).toBe(`it is a mount of the kernel file system '${type}', which shows the host itself whatever its path`);
    expect(pseudoMountRefusal('/tmp/x/k/sub/dir', mounts)).toBe(`it lies inside a mount ("/tmp/x/k") of the kernel file system '${type}', which shows the host itself whatever its path`);
    expect(pseudoMountRefusal('/tmp/x', mounts)).toBe(`it holds a mount ("/tmp/x/k") of the kernel file system '${type}', which shows the host itself`);
    expect(pseudoMountRefusal('/opt', mounts)).toContain(`it holds a mount ("/opt/a/b/c/k") of the kernel file system '${type}'`);
  });

  it.each([['ext4'], ['xfs'], ['btrfs'], ['tmpfs'], ['overlay'], ['nfs4'], ['fuse.sshfs'], ['squashfs']])('accepts a path on or holding an ordinary %s mount', (type) => {
    const mounts = table(...base, line(50, '/', '/opt/servers', type));
    expect(pseudoMountRefusal('/opt/servers/x', mounts)).toBeUndefined();
    expect(pseudoMountRefusal('/opt', mounts)).toBeUndefined();
    // A mount named like a kernel one ("/tmp/proc") is judged by its type, not its name.
    expect(pseudoMountRefusal('/tmp/proc', table(...base, line(51, '/', '/tmp/proc', type)))).toBeUndefined();
  });

  it('does not refuse a path for a kernel mount beside it, only at, inside or below it', () => {
    const mounts = table(...base, line(60, '/', '/tmp/x/proc', 'proc'));
    expect(pseudoMountRefusal('/tmp/x/procs', mounts)).toBeUndefined();
    expect(pseudoMountRefusal('/tmp/y', mounts)).toBeUndefined();
  });

  describe.skipIf(noNamespaces !== undefined)('real mounts in a mount namespace of its own', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-ro-kernel-')));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('refuses a fresh procfs, sysfs, devpts, cgroup2 and mqueue, a bind of part of /proc, a proc file bound onto a file, and a directory holding one, at start and at restart alike', async () => {
      const at = (name: string) => join(dir, name);
      for (const name of ['p2', 'holder/a/b', 'sy', 'dp', 'cg', 'mq', 'bp', 'with space/p', 'tf', 'tmp-holder/t', 'plain']) await mkdir(at(name), { recursive: true });
      await writeFile(at('version'), '');
      const script = at('kernel-check.mts');
      await writeFile(
        script,
        [
          `import { checkReadOnlyPaths, recheckReadOnlyPaths } from ${JSON.stringify(resolve(__dirname, 'mcp-read-only-paths.ts'))};`,
          `for (const path of process.argv.slice(2)) {`,
          `  const server = { name: 'files', command: 'node', args: [], env: {}, tier: 'bwrap', readOnlyPaths: [path] };`,
          `  const atStart = await checkReadOnlyPaths(server, [], () => undefined).then(() => 'accepted', (e) => e.message.replace(/^.*? is refused: /, ''));`,
          `  let again = 'accepted';`,
          `  try { recheckReadOnlyPaths('files', [path], []); } catch (e) { again = e.reason + ' ' + e.message.replace(/^.*? is refused at this start: /, ''); }`,
          `  console.log(JSON.stringify([atStart, again]));`,
          `}`,
        ].join('\n'),
      );
      const tsx = resolve(__dirname, '../../../../node_modules/.bin/tsx');
      const mounts = [
        `mount -t proc proc ${at('p2')}`,
        `mount -t proc proc ${at('holder/a/b')}`,
        `mount -t sysfs sysfs ${at('sy')}`,
        `mount -t devpts -o newinstance devpts ${at('dp')}`,
        `mount -t cgroup2 none ${at('cg')}`,
        `mount -t mqueue mqueue ${at('mq')}`,
        `mount --bind /proc/sys ${at('bp')}`,
        `mount --bind /proc/version ${at('version')}`,
        `mount -t proc proc '${at('with space/p')}'`,
        `mount -t tmpfs tmpfs ${at('tf')}`,
        `mount -t tmpfs tmpfs ${at('tmp-holder/t')}`,
      ].join(' && ');
      const paths = ['p2', 'p2/sys/kernel', 'holder', 'sy', 'dp', 'cg', 'mq', 'bp', 'version', 'with space', 'tf', 'tmp-holder', 'plain'].map(at);
      const run = spawnSync(
        'unshare',
        ['--user', '--map-root-user', '--mount', '--pid', '--net', '--ipc', '--cgroup', '--fork', 'sh', '-c', `${mounts} && exec "$0" "$@"`, tsx, script, ...paths],
        { encoding: 'utf8', timeout: 60_000 },
      );
      expect(run.status, run.stderr).toBe(0);
      const is = (type: string) => `it is a mount of the kernel file system '${type}', which shows the host itself whatever its path`;
      const expected = [
        is('proc'),
        `it lies inside a mount (${JSON.stringify(at('p2'))}) of the kernel file system 'proc', which shows the host itself whatever its path`,
        `it holds a mount (${JSON.stringify(at('holder/a/b'))}) of the kernel file system 'proc', which shows the host itself`,
        is('sysfs'),
        is('devpts'),
        is('cgroup2'),
        is('mqueue'),
        is('proc'),
        is('proc'),
        `it holds a mount (${JSON.stringify(at('with space/p'))}) of the kernel file system 'proc', which shows the host itself`,
        'accepted',
        'accepted',
        'accepted',
      ];
      expect(run.stdout.trim().split('\n').map((l) => JSON.parse(l) as [string, string])).toEqual(
        expected.map((why) => [why, why === 'accepted' ? why : `READ_ONLY_PATH_REFUSED ${why}`]),
      );
    });
  });
});

describe('host secret places decided in ADR 0072 (red team R2 F7), wherever the host has them', () => {
  it.each([
    ['/var/log', true],
    ['/var/backups', true],
    ['/var/spool', true],
    ['/var/mail', true],
    ['/etc/letsencrypt', true],
    ['/etc/pki/tls/private', true],
    ['/etc/pki/CA/private', true],
    ['/etc/kubernetes', true],
    ['/etc/wireguard', true],
    ['/var/lib/kubelet', true],
    ['/etc/credstore', true],
    // Whole but not below: a server may be installed in /srv/<x>, and Red Hat's CA bundle is below /etc/pki.
    ['/srv', false],
    ['/etc/pki', false],
  ] as const)('guards %s (refused inside it too: %s)', (path, inside) => {
    const guard = HOST_SECRETS.find((g) => g.path === path);
    expect(guard, `${path} is not guarded`).toBeDefined();
    expect(guard?.inside !== false).toBe(inside);
  });
});

describe('a read-only path changed after start (red team R2 F6): checked in full again before every restart', { timeout: 60_000 }, () => {
  let base: string;
  let config: ServerConfig;
  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-ro-restart-')));
    for (const d of ['data/audit', 'workspaces', 'opt/allowed/inner', 'ws']) await mkdir(join(base, d), { recursive: true });
    config = loadConfig({ TOOLGATE_DATA_DIR: join(base, 'data'), TOOLGATE_WORKSPACE_ROOT: join(base, 'workspaces') });
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  const echoServer = resolve(__dirname, '../../../../libs/adapters/mcp-client/test/fixtures/echo-server.mjs');

  async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (check()) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`timed out waiting for: ${what}`);
  }

  it.each([
    ['swapped for a symbolic link to the data dir', 'it resolves through a symbolic link to', async (allowed: string) => {
      await rename(allowed, `${allowed}.old`);
      await symlink(join(base, 'data'), allowed);
    }, async (allowed: string) => {
      await rm(allowed);
      await rename(`${allowed}.old`, allowed);
    }],
    ['given a credentials entry (.git-credentials)', 'it holds ".git-credentials"', async (allowed: string) => {
      await writeFile(join(allowed, '.git-credentials'), 'https://u:t@example.com');
    }, async (allowed: string) => {
      await rm(join(allowed, '.git-credentials'));
    }],
  ])('a path %s after start fails the restart (logged, the source stays restarting, nothing is spawned) until it passes again', async (_, why, spoil, mend) => {
    const allowed = join(base, 'opt', 'allowed');
    const logs: string[] = [];
    const inner = new PassThroughRunner();
    const guarded = guardedPaths(config);
    const server: McpServerConfig = { name: 'files', command: process.execPath, args: [echoServer], env: {}, tier: 'bwrap', readOnlyPaths: [allowed] };
    await checkReadOnlyPaths(server, guarded, () => undefined);
    const source = await McpToolSource.start(server, guardReadOnlyPaths(inner, server.name, guarded), {
      workspaceRoot: join(base, 'ws'),
      log: (m) => logs.push(m),
      backoff: { initialMs: 50, maxMs: 100, stableMs: 60_000 },
    });
    try {
      expect(source.status().state).toBe('up');
      expect(inner.prepared).toHaveLength(1);
      await spoil(allowed);
      const crash = source.tools().find((d) => d.manifest.name === 'files__crash');
      await crash?.handler.invoke({}, testToolContext({ principal: { id: 'alice', tenant: 't1', roles: ['worker'] }, workspaceRoot: join(base, 'ws') })).catch(() => undefined);
      await until('two refused restarts', () => logs.filter((l) => l.includes('failed:') && l.includes('is refused at this start')).length >= 2);
      const failure = logs.find((l) => l.startsWith("MCP server 'files': restart attempt 1 failed:"));
      expect(failure).toContain(`readOnlyPaths[0] ${JSON.stringify(allowed)} is refused at this start: ${why}`);
      expect(source.status().state).toBe('restarting');
      // The refusal came before the runner: no process was prepared with the changed path.
      expect(inner.prepared).toHaveLength(1);
      await mend(allowed);
      await until('the server is up again', () => source.status().state === 'up');
      expect(inner.prepared).toHaveLength(2);
    } finally {
      await source.close();
    }
  });

  describe.skipIf(noNamespaces !== undefined)('a bind mount placed after start', () => {
    it("refuses the next prepare and run when the data dir is mounted inside an allowed path, or /proc is", async () => {
      const script = join(base, 'restart-check.mts');
      const allowed = join(base, 'opt', 'allowed');
      await writeFile(
        script,
        [
          `import { execFileSync } from 'node:child_process';`,
          `import { guardReadOnlyPaths } from ${JSON.stringify(resolve(__dirname, 'mcp-read-only-paths.ts'))};`,
          `import { PassThroughRunner } from ${JSON.stringify(resolve(__dirname, '../../../../libs/testing/src/index.ts'))};`,
          `const guards = [{ path: ${JSON.stringify(join(base, 'data'))}, what: "Toolgate's data dir (TOOLGATE_DATA_DIR)" }];`,
          `const inner = new PassThroughRunner();`,
          `import { SubprocessRunner } from ${JSON.stringify(resolve(__dirname, '../../../../libs/adapters/executor-subprocess/src/index.ts'))};`,
          `const runner = guardReadOnlyPaths(inner, 'files', guards);`,
          // A runner that really runs, for run(); PassThroughRunner only prepares.
          `const running = guardReadOnlyPaths(new SubprocessRunner(), 'files', guards);`,
          `const spec = { command: 'true', args: [], readOnlyPaths: [${JSON.stringify(allowed)}] };`,
          `const limits = { workspaceRoot: ${JSON.stringify(join(base, 'ws'))}, timeoutMs: 5000, maxOutputBytes: 1000 };`,
          `const attempt = async () => { let p = 'prepared'; try { runner.prepare(spec, limits.workspaceRoot); } catch (e) { p = e.reason + ': ' + e.message; } const r = await running.run(spec, limits).then((x) => 'ran ' + x.exitCode, (e) => e.reason + ': ' + e.message); console.log(JSON.stringify([p, r])); };`,
          `await attempt();`,
          `execFileSync('mount', ['--bind', ${JSON.stringify(join(base, 'data'))}, ${JSON.stringify(join(allowed, 'inner'))}]);`,
          `await attempt();`,
          `execFileSync('umount', [${JSON.stringify(join(allowed, 'inner'))}]);`,
          `execFileSync('mount', ['-t', 'proc', 'proc', ${JSON.stringify(join(allowed, 'inner'))}]);`,
          `await attempt();`,
          // A string, so a FORCE_COLOR in the environment (Nx sets it) cannot colour it.
          `console.log(String(inner.prepared.length));`,
        ].join('\n'),
      );
      const tsx = resolve(__dirname, '../../../../node_modules/.bin/tsx');
      const run = spawnSync('unshare', ['--user', '--map-root-user', '--mount', '--pid', '--fork', tsx, script], { encoding: 'utf8', timeout: 60_000 });
      expect(run.status, run.stderr).toBe(0);
      const [first, second, third, prepared] = run.stdout.trim().split('\n');
      expect(JSON.parse(first ?? '')).toEqual(['prepared', 'ran 0']);
      const bound = `READ_ONLY_PATH_REFUSED: MCP server 'files': readOnlyPaths[0] ${JSON.stringify(allowed)} is refused at this start: it holds a mount (${JSON.stringify(join(allowed, 'inner'))}) that shows Toolgate's data dir (TOOLGATE_DATA_DIR)`;
      expect(JSON.parse(second ?? '')).toEqual([bound, bound]);
      const proc = `READ_ONLY_PATH_REFUSED: MCP server 'files': readOnlyPaths[0] ${JSON.stringify(allowed)} is refused at this start: it holds a mount (${JSON.stringify(join(allowed, 'inner'))}) of the kernel file system 'proc', which shows the host itself`;
      expect(JSON.parse(third ?? '')).toEqual([proc, proc]);
      // Only the first attempt reached the runner.
      expect(prepared).toBe('1');
    });
  });
});
