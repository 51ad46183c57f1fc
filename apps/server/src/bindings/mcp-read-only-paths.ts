import { readFileSync, realpathSync, statfsSync, statSync, type Stats } from 'node:fs';
import { readFile, realpath, stat, statfs } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { KERNEL_FILE_SYSTEMS } from '@toolgate/adapter-executor-bwrap';
import type { McpRemoteServerConfig, McpServerConfig } from '@toolgate/adapter-mcp-client';
import { ToolError, type ProcessLimits, type ProcessRunner, type ProcessSpec } from '@toolgate/contracts';
import type { ServerConfig } from '../config.js';
import type { Log } from '../logger.js';
import { StartupError } from '../startup-error.js';

/**
 * A host path no MCP server's `readOnlyPaths` may reach (ADR 0066): a read-only path that is it
 * or contains it is refused, and one inside it too unless `inside` is false.
 */
export interface GuardedPath {
  /** Absolute host path. */
  readonly path: string;
  /** How a message names it: the setting or what it holds, never its content. */
  readonly what: string;
  /** Whether a path inside it is refused as well (default true); false for a directory that only holds secrets among other things, such as a home. */
  readonly inside?: boolean;
}

/**
 * Host places that hold secrets on common distros, whatever Toolgate's configuration says. A
 * read-only mount stops writes, not `connect()`: a service socket under `/run` (docker, dbus)
 * stays usable through one, so the runtime directories are refused whole.
 */
export const HOST_SECRETS: readonly GuardedPath[] = Object.freeze([
  { path: '/etc/shadow', what: 'the password hashes (/etc/shadow)' },
  { path: '/etc/shadow-', what: 'the password hashes (/etc/shadow-)' },
  { path: '/etc/gshadow', what: 'the group password hashes (/etc/gshadow)' },
  { path: '/etc/gshadow-', what: 'the group password hashes (/etc/gshadow-)' },
  { path: '/etc/security/opasswd', what: 'the old password hashes (/etc/security/opasswd)' },
  { path: '/etc/sudoers', what: 'the sudo rules (/etc/sudoers)' },
  { path: '/etc/sudoers.d', what: 'the sudo rules (/etc/sudoers.d)' },
  { path: '/etc/ssh', what: 'the SSH host keys (/etc/ssh)' },
  { path: '/etc/ssl/private', what: 'the TLS private keys (/etc/ssl/private)' },
  { path: '/etc/krb5.keytab', what: 'the Kerberos keytab (/etc/krb5.keytab)' },
  { path: '/etc/letsencrypt', what: "the Let's Encrypt certificates and their private keys (/etc/letsencrypt)" },
  // Red Hat's CA bundle lives below /etc/pki (and /etc/ssl/certs links there), so only its key places are refused inside it.
  { path: '/etc/pki', what: 'the certificate store (/etc/pki), with private keys', inside: false },
  { path: '/etc/pki/tls/private', what: 'the TLS private keys (/etc/pki/tls/private)' },
  { path: '/etc/pki/CA/private', what: 'the CA private keys (/etc/pki/CA/private)' },
  { path: '/etc/pki/nssdb', what: 'the NSS key database (/etc/pki/nssdb)' },
  { path: '/etc/kubernetes', what: 'the Kubernetes credentials and cluster keys (/etc/kubernetes)' },
  { path: '/etc/rancher', what: 'the k3s/RKE2 credentials (/etc/rancher)' },
  { path: '/etc/wireguard', what: 'the WireGuard private keys (/etc/wireguard)' },
  { path: '/etc/openvpn', what: 'the OpenVPN keys (/etc/openvpn)' },
  { path: '/etc/ipsec.secrets', what: 'the IPsec secrets (/etc/ipsec.secrets)' },
  { path: '/etc/ipsec.d', what: 'the IPsec keys (/etc/ipsec.d)' },
  { path: '/etc/NetworkManager/system-connections', what: 'the network passwords (/etc/NetworkManager/system-connections)' },
  { path: '/etc/credstore', what: "systemd's credentials (/etc/credstore)" },
  { path: '/etc/credstore.encrypted', what: "systemd's credentials (/etc/credstore.encrypted)" },
  { path: '/etc/mysql/debian.cnf', what: "the MySQL maintenance password (/etc/mysql/debian.cnf)" },
  { path: '/root', what: "root's home (/root)" },
  { path: '/run', what: 'the runtime directory (/run), with service sockets and mounted secrets' },
  { path: '/var/run', what: 'the runtime directory (/var/run), with service sockets and mounted secrets' },
  { path: '/var/lib/docker', what: 'the container storage (/var/lib/docker)' },
  { path: '/var/lib/containers', what: 'the container storage (/var/lib/containers)' },
  { path: '/var/lib/sudo', what: 'the sudo state (/var/lib/sudo)' },
  { path: '/var/lib/kubelet', what: "the kubelet's state, with the pods' mounted secrets (/var/lib/kubelet)" },
  { path: '/var/lib/private', what: "systemd's private service state (/var/lib/private)" },
  { path: '/var/lib/mysql', what: 'the MySQL databases (/var/lib/mysql)' },
  { path: '/var/lib/postgresql', what: 'the PostgreSQL databases (/var/lib/postgresql)' },
  { path: '/var/lib/samba/private', what: "Samba's password database (/var/lib/samba/private)" },
  { path: '/var/backups', what: 'the system backups (/var/backups), with copies of /etc/shadow' },
  { path: '/var/log', what: 'the system logs (/var/log), with authentication records and logged tokens' },
  { path: '/var/spool', what: 'the spools (/var/spool): crontabs, queued mail and print jobs' },
  { path: '/var/mail', what: "the users' mail (/var/mail)" },
  { path: '/proc', what: "the kernel's view of the host's processes (/proc)" },
  { path: '/sys', what: "the kernel's view of the host (/sys)" },
  { path: '/dev', what: "the host's devices (/dev)" },
  { path: '/home', what: "every user's home (/home)", inside: false },
  { path: '/tmp', what: 'the shared temporary directory (/tmp), with other programs\' files and sockets', inside: false },
  { path: '/var/tmp', what: 'the shared temporary directory (/var/tmp)', inside: false },
  { path: '/srv', what: "the site's service data (/srv)", inside: false },
]);

/**
 * Names of entries that hold a user's credentials. A read-only path that is one, lies inside one,
 * or directly holds one (a home directory) is refused; deeper entries of a mounted tree are not searched.
 */
export const SECRET_ENTRY_NAMES: readonly string[] = Object.freeze([
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker',
  '.netrc',
  '.npmrc',
  '.pgpass',
  '.git-credentials',
  '.password-store',
  '.vault-token',
]);

/** How long the checks of one server's paths may take before the start fails (a hung network mount). */
export const READ_ONLY_PATH_CHECK_TIMEOUT_MS = 10_000;

/**
 * Everything of Toolgate's own that no server may read: its data dir, the workspace root (every
 * tenant's files), the principals file, the MCP servers file, every `*_FILE` secret, the
 * credential files of the remote servers, the home of Toolgate's user, and {@link HOST_SECRETS}.
 */
export function guardedPaths(config: ServerConfig, remotes: readonly McpRemoteServerConfig[] = []): GuardedPath[] {
  return [
    { path: config.dataDir, what: "Toolgate's data dir (TOOLGATE_DATA_DIR)" },
    { path: config.workspaceRoot, what: "Toolgate's workspace root (TOOLGATE_WORKSPACE_ROOT), every tenant's files" },
    ...(config.principalsFile ? [{ path: config.principalsFile, what: 'the principals file (TOOLGATE_PRINCIPALS_FILE)' }] : []),
    ...(config.mcpServersFile ? [{ path: config.mcpServersFile, what: 'the MCP servers file (TOOLGATE_MCP_SERVERS_FILE)' }] : []),
    ...config.secretFiles.map((file) => ({ path: file.path, what: `the secret file ${file.variable}` })),
    ...credentialFiles(remotes),
    { path: homedir(), what: "the home of Toolgate's user", inside: false },
    ...HOST_SECRETS,
  ];
}

/** The files the remote servers' headers are read from: bearer tokens and API keys. */
export function credentialFiles(remotes: readonly McpRemoteServerConfig[]): GuardedPath[] {
  return remotes.flatMap((remote) =>
    Object.entries(remote.headers).map(([header, source]) => ({ path: source.file, what: `MCP server '${remote.name}''s credential file (headers.${header})` })),
  );
}

/**
 * Kernel and pseudo file systems, by their mountinfo type. Whatever the path they are mounted at,
 * they show the host itself (a second procfs lists every host process with its command line and
 * environment; sysfs, cgroup and debugfs show and steer the kernel), and their device numbers are
 * their own, so only the type tells them apart.
 */
export const PSEUDO_FILE_SYSTEMS: readonly string[] = Object.freeze([
  'proc',
  'sysfs',
  'devtmpfs',
  'devpts',
  'cgroup',
  'cgroup2',
  'debugfs',
  'tracefs',
  'securityfs',
  'bpf',
  'mqueue',
  'configfs',
  'fusectl',
  'pstore',
  'efivarfs',
  'binfmt_misc',
  'hugetlbfs',
  'autofs',
  'nsfs',
  'rpc_pipefs',
  'nfsd',
  'selinuxfs',
  'smackfs',
  'xenfs',
]);

/** The same file systems by `statfs` type (`linux/magic.h`), for the path itself: the bwrap runner's own table. devtmpfs reports tmpfs's and is found by the mount table only. */
const PSEUDO_MAGIC = KERNEL_FILE_SYSTEMS;

/**
 * One question the checks put to the file system. The checks are written once, as a generator of
 * these, and answered either asynchronously (at start, under a deadline) or synchronously (before
 * each restart, inside the runner's synchronous `prepare`).
 */
type Ask =
  | { readonly op: 'realpath'; readonly path: string }
  | { readonly op: 'stat'; readonly path: string }
  | { readonly op: 'statfs'; readonly path: string }
  | { readonly op: 'mountinfo' };

/** What a `stat` tells the checks. */
interface Facts {
  readonly id: string;
  readonly directory: boolean;
  readonly file: boolean;
}

type Answer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly code: string };
type Checks<T> = Generator<Ask, T, Answer<unknown>>;

function facts(s: Stats): Facts {
  return { id: `${s.dev}:${s.ino}`, directory: s.isDirectory(), file: s.isFile() };
}

function failed(error: unknown): Answer<never> {
  return { ok: false, code: (error as NodeJS.ErrnoException).code ?? 'error' };
}

/** Off Linux (no bwrap) there is no mount table to read. */
const MOUNTINFO = process.platform === 'linux' ? '/proc/self/mountinfo' : undefined;

function answerNow(ask: Ask): Answer<unknown> {
  try {
    if (ask.op === 'realpath') return { ok: true, value: realpathSync(ask.path) };
    if (ask.op === 'stat') return { ok: true, value: facts(statSync(ask.path)) };
    if (ask.op === 'statfs') return { ok: true, value: statfsSync(ask.path).type };
    return { ok: true, value: MOUNTINFO === undefined ? '' : readFileSync(MOUNTINFO, 'utf8') };
  } catch (error) {
    return failed(error);
  }
}

async function answerLater(ask: Ask): Promise<Answer<unknown>> {
  try {
    if (ask.op === 'realpath') return { ok: true, value: await realpath(ask.path) };
    if (ask.op === 'stat') return { ok: true, value: facts(await stat(ask.path)) };
    if (ask.op === 'statfs') return { ok: true, value: (await statfs(ask.path)).type };
    return { ok: true, value: MOUNTINFO === undefined ? '' : await readFile(MOUNTINFO, 'utf8') };
  } catch (error) {
    return failed(error);
  }
}

function runNow<T>(checks: Checks<T>): T {
  let step = checks.next();
  while (!step.done) step = checks.next(answerNow(step.value));
  return step.value;
}

async function runLater<T>(checks: Checks<T>): Promise<T> {
  let step = checks.next();
  while (!step.done) step = checks.next(await answerLater(step.value));
  return step.value;
}

function* ask<T>(question: Ask): Checks<Answer<T>> {
  return (yield question) as Answer<T>;
}

/** A path's own identity and those of its parents, by device and inode: what bind mounts and hard-linked directories share. */
function* identities(path: string): Checks<{ readonly self: string | undefined; readonly chain: ReadonlySet<string> }> {
  const chain = new Set<string>();
  let self: string | undefined;
  for (let at = path; ; at = dirname(at)) {
    const answer = yield* ask<Facts>({ op: 'stat', path: at });
    const id = answer.ok ? answer.value.id : undefined;
    if (at === path) self = id;
    if (id !== undefined) chain.add(id);
    if (at === '/') break;
  }
  return { self, chain };
}

function isAtOrUnder(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);
}

/** One line of `/proc/self/mountinfo`: which device, which directory of it (`root`), shown where, of which file system type. */
export interface Mount {
  readonly device: string;
  readonly root: string;
  readonly point: string;
  readonly type: string;
}

/** mountinfo writes space, tab, newline and backslash in paths as octal escapes (`\040`). */
function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * Parses `/proc/self/mountinfo` (proc(5)): `id parent major:minor root point options [optional
 * fields…] - type source super-options`. The optional fields vary in number, so the type is the
 * field after the lone `-`; a line without one has an unknown type, which no check trusts.
 */
export function parseMountInfo(text: string): readonly Mount[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const fields = line.split(' ');
      const dash = fields.indexOf('-', 6);
      return {
        device: fields[2] ?? '',
        root: unescapeMountPath(fields[3] ?? ''),
        point: unescapeMountPath(fields[4] ?? ''),
        type: dash === -1 ? '?' : unescapeMountPath(fields[dash + 1] ?? '?'),
      };
    });
}

/** The deepest mount above `path` (a real path): the one whose file system `path` is on. */
function mountOf(path: string, mounts: readonly Mount[]): Mount | undefined {
  let best: Mount | undefined;
  for (const mount of mounts) {
    if (isAtOrUnder(path, mount.point) && (best === undefined || mount.point.length >= best.point.length)) best = mount;
  }
  return best;
}

/** Where `path` (a real path) lives: its device and its path within that device's file system, by the deepest mount above it. */
function placeOf(path: string, mounts: readonly Mount[]): { readonly device: string; readonly inner: string } | undefined {
  const best = mountOf(path, mounts);
  if (best === undefined) return undefined;
  const rest = best.point === '/' ? path : path.slice(best.point.length);
  return { device: best.device, inner: best.root === '/' ? rest || '/' : `${best.root}${rest}` };
}

/** A mount's file system type when it is one of {@link PSEUDO_FILE_SYSTEMS} (or unknown), else undefined. */
function pseudoType(mount: Mount): string | undefined {
  return mount.type === '?' || PSEUDO_FILE_SYSTEMS.includes(mount.type) ? mount.type : undefined;
}

/**
 * Why `real` shows a kernel or pseudo file system, by the mount table alone: it is on one (a
 * mount point, or a directory inside it, a bind mount of part of one included), or holds a mount
 * of one below it, which bwrap's recursive bind would carry into the sandbox.
 */
export function pseudoMountRefusal(real: string, mounts: readonly Mount[]): string | undefined {
  const on = mountOf(real, mounts);
  const onType = on === undefined ? undefined : pseudoType(on);
  if (on !== undefined && onType !== undefined) {
    const where = on.point === real ? 'it is a mount' : `it lies inside a mount (${JSON.stringify(on.point)})`;
    return `${where} of the kernel file system '${onType}', which shows the host itself whatever its path`;
  }
  for (const mount of mounts) {
    if (mount.point === real || !isAtOrUnder(mount.point, real)) continue;
    const type = pseudoType(mount);
    if (type !== undefined) return `it holds a mount (${JSON.stringify(mount.point)}) of the kernel file system '${type}', which shows the host itself`;
  }
  return undefined;
}

/** A guarded path as the checks compare it: resolved when it exists, else as configured. */
interface ResolvedGuard extends GuardedPath {
  readonly real: string;
  readonly ids: { readonly self: string | undefined; readonly chain: ReadonlySet<string> };
  readonly place: ReturnType<typeof placeOf>;
}

function* resolveGuards(guarded: readonly GuardedPath[], mounts: readonly Mount[]): Checks<ResolvedGuard[]> {
  const guards: ResolvedGuard[] = [];
  for (const guard of guarded) {
    const absolute = resolve(guard.path);
    const answer = yield* ask<string>({ op: 'realpath', path: absolute });
    const real = answer.ok ? answer.value : absolute;
    guards.push({ ...guard, real, ids: yield* identities(real), place: placeOf(real, mounts) });
  }
  return guards;
}

/** Why one read-only path is refused, or undefined when it may be mounted. */
function* refusal(path: string, guards: readonly ResolvedGuard[], mounts: readonly Mount[]): Checks<string | undefined> {
  const resolved = yield* ask<string>({ op: 'realpath', path });
  if (!resolved.ok) {
    return resolved.code === 'ENOENT' || resolved.code === 'ENOTDIR' ? 'it does not exist on this host' : `it cannot be resolved on this host (${resolved.code})`;
  }
  const real = resolved.value;
  // The sandbox must see exactly the tree that was checked: a link resolved again at mount time
  // could point elsewhere by then, so only the real path is accepted.
  if (real !== path) return `it resolves through a symbolic link to ${JSON.stringify(real)}; name the real path, which is what is checked and mounted`;
  const examined = yield* ask<Facts>({ op: 'stat', path: real });
  if (!examined.ok) return `it cannot be examined on this host (${examined.code})`;
  const info = examined.value;
  if (!info.directory && !info.file) return 'it is neither a file nor a directory (a socket stays connectable on a read-only mount)';
  const segments = real.split('/');
  const secret = segments.find((s) => SECRET_ENTRY_NAMES.includes(s));
  if (secret !== undefined) return `it is or lies inside ${JSON.stringify(secret)}, which holds a user's credentials`;
  const mine = yield* identities(real);
  for (const guard of guards) {
    const same = real === guard.real || (mine.self !== undefined && mine.self === guard.ids.self);
    if (same) return `it is ${guard.what}`;
    const contains = isAtOrUnder(guard.real, real) || (mine.self !== undefined && guard.ids.chain.has(mine.self));
    if (contains) return `it contains ${guard.what}`;
    const within = isAtOrUnder(real, guard.real) || (guard.ids.self !== undefined && mine.chain.has(guard.ids.self));
    if (within && guard.inside !== false) return `it lies inside ${guard.what}`;
  }
  // Mounts below the path come along into the sandbox: one that shows a guarded tree, or part of one, is refused too.
  for (const mount of mounts) {
    if (!isAtOrUnder(mount.point, real)) continue;
    for (const guard of guards) {
      if (guard.place === undefined || guard.place.device !== mount.device) continue;
      const shows = isAtOrUnder(guard.place.inner, mount.root) || (guard.inside !== false && isAtOrUnder(mount.root, guard.place.inner));
      if (shows) return `it holds a mount (${JSON.stringify(mount.point)}) that shows ${guard.what}`;
    }
  }
  // A fresh procfs (or sysfs, …) has a device of its own, so the guards above miss it under another name.
  const pseudo = pseudoMountRefusal(real, mounts);
  if (pseudo !== undefined) return pseudo;
  // The path's own file system, asked of the kernel: holds even where the mount table is not what this process sees.
  const system = yield* ask<number>({ op: 'statfs', path: real });
  if (!system.ok) return `its file system cannot be examined on this host (${system.code})`;
  const magic = PSEUDO_MAGIC.get(system.value >>> 0) ?? PSEUDO_MAGIC.get(system.value);
  if (magic !== undefined) return `it is on the kernel file system '${magic}', which shows the host itself whatever its path`;
  if (info.directory) {
    for (const name of SECRET_ENTRY_NAMES) {
      const held = yield* ask<Facts>({ op: 'stat', path: `${real}/${name}` });
      if (held.ok) return `it holds ${JSON.stringify(name)}, a user's credentials (a home directory?); name the directories the server needs`;
    }
  }
  return undefined;
}

/** The first refused path of `paths` with its index and reason, or undefined when all may be mounted. */
function* firstRefusal(paths: readonly string[], guarded: readonly GuardedPath[]): Checks<{ readonly index: number; readonly path: string; readonly why: string } | undefined> {
  const table = yield* ask<string>({ op: 'mountinfo' });
  // Without the mount table a mount below a path cannot be seen, so nothing is accepted (fail closed).
  if (!table.ok) return { index: 0, path: paths[0] ?? '', why: `the mount table cannot be read (${table.code})` };
  const mounts = parseMountInfo(table.value);
  const guards = yield* resolveGuards(guarded, mounts);
  for (const [index, path] of paths.entries()) {
    const why = yield* refusal(path, guards, mounts);
    if (why !== undefined) return { index, path, why };
  }
  return undefined;
}

/**
 * Checks one stdio server's `readOnlyPaths` at start, after the file's own syntax checks: each
 * must exist, be its own real path (no symbolic link on the way), be a file or directory, and
 * neither be, contain nor lie inside a {@link GuardedPath}, nor be on, or hold a mount of, a
 * kernel file system ({@link PSEUDO_FILE_SYSTEMS}). The first fault stops the start with a
 * `StartupError` naming the server, the entry and why. At `unisolated` the paths mean nothing
 * (the server sees the host) and that is logged; they are checked all the same, so a server
 * moved to `bwrap` starts with the same file.
 */
export async function checkReadOnlyPaths(server: McpServerConfig, guarded: readonly GuardedPath[], log: Log): Promise<void> {
  const paths = server.readOnlyPaths ?? [];
  if (paths.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StartupError(`MCP server '${server.name}': its readOnlyPaths could not be checked within ${READ_ONLY_PATH_CHECK_TIMEOUT_MS / 1000} s (a hung network mount?)`)),
      READ_ONLY_PATH_CHECK_TIMEOUT_MS,
    );
  });
  try {
    const fault = await Promise.race([runLater(firstRefusal(paths, guarded)), deadline]);
    if (fault !== undefined) throw new StartupError(`MCP server '${server.name}': readOnlyPaths[${fault.index}] ${JSON.stringify(fault.path)} is refused: ${fault.why}`);
  } finally {
    clearTimeout(timer);
  }
  if (server.tier === 'unisolated') {
    log('warn', `MCP server '${server.name}': its readOnlyPaths mean nothing at tier 'unisolated', where it can read the whole host as Toolgate's user; they are mounted only at tier 'bwrap'`);
  } else {
    log('info', `MCP server '${server.name}' may read, read-only: ${paths.join(', ')}`);
  }
}

/**
 * The same checks as {@link checkReadOnlyPaths}, run now and synchronously on the paths a process
 * is about to be given: the host may have changed since the start (a bind mount of the data dir
 * placed inside an allowed path), and a server can ask for a restart by exiting. Throws a
 * `ToolError` (`READ_ONLY_PATH_REFUSED`) naming the server, the path and why.
 */
export function recheckReadOnlyPaths(serverName: string, paths: readonly string[] | undefined, guarded: readonly GuardedPath[]): void {
  if (paths === undefined || paths.length === 0) return;
  const fault = runNow(firstRefusal(paths, guarded));
  if (fault !== undefined) {
    throw new ToolError(`MCP server '${serverName}': readOnlyPaths[${fault.index}] ${JSON.stringify(fault.path)} is refused at this start: ${fault.why}`, 'READ_ONLY_PATH_REFUSED');
  }
}

/**
 * `runner` for one MCP server, with its read-only paths checked again before every process it
 * prepares or runs (ADR 0072): each restart of the server mounts only paths that pass the full
 * start-time checks on the host as it is then. A refused path fails that start (the source logs
 * it and stays restarting); nothing is mounted.
 */
export function guardReadOnlyPaths(runner: ProcessRunner, serverName: string, guarded: readonly GuardedPath[]): ProcessRunner {
  return {
    prepare(spec: ProcessSpec, workspaceRoot: string) {
      recheckReadOnlyPaths(serverName, spec.readOnlyPaths, guarded);
      return runner.prepare(spec, workspaceRoot);
    },
    async run(spec: ProcessSpec, limits: ProcessLimits) {
      recheckReadOnlyPaths(serverName, spec.readOnlyPaths, guarded);
      return runner.run(spec, limits);
    },
  };
}
