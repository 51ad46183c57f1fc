import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { StartupError } from '../src/startup-error.js';
import { startServer } from '../src/server.js';
import { bwrapUnavailable, startHarness } from './e2e-harness.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
// `--import tsx` resolves from the working directory: the server package's own.
const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));
/** A fault must be reported well within this; a hang fails the test instead of stalling the run. */
const BOUND_MS = 15_000;

const root = mkdtempSync(join(tmpdir(), 'toolgate-faults-'));
/** Relative settings resolve here, the server's working directory in these tests; it must not show. */
const cwd = join(root, 'cwd');
mkdirSync(cwd);
const at = (name: string) => join(root, name);
writeFileSync(at('a-file'), 'not a directory');
mkdirSync(at('a-dir'));
symlinkSync(at('a-file'), at('link-to-file'));
symlinkSync(at('nothing-here'), at('link-to-nothing'));
symlinkSync(at('loop-b'), at('loop-a'));
symlinkSync(at('loop-a'), at('loop-b'));
mkdirSync(at('real-data'));
symlinkSync(at('real-data'), at('link-to-dir'));
execFileSync('mkfifo', [at('a-fifo')]);
writeFileSync(join(cwd, 'rel-file'), 'not a directory');

afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * Starts the server in-process with `env` and returns the fault it stopped with. A server that
 * starts is closed and fails the test; one that neither starts nor fails within the bound fails it.
 */
async function startFault(env: Record<string, string>): Promise<Error> {
  const attempt = (async () => {
    const config = loadConfig({ TOOLGATE_PORT: '0', TOOLGATE_DATA_DIR: join(root, `data-${Math.random().toString(36).slice(2)}`), ...env }, cwd);
    const server = await startServer(config, () => undefined);
    await server.close();
    throw new Error('the server started');
  })();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`start-up neither failed nor started within ${BOUND_MS} ms`)), BOUND_MS);
  });
  try {
    await Promise.race([attempt, hang]);
    throw new Error('unreachable');
  } catch (error) {
    return error as Error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What every start-up fault message must be: one clear line naming the variable, no stack, no raw
 * errno text, and no host path beyond the values the operator set (not the working directory, not
 * a resolved form of a relative value).
 */
function expectOperatorMessage(error: Error, variable: string, env: Record<string, string>, what: RegExp): void {
  expect(error, error.stack).toSatisfy((e: Error) => e instanceof StartupError || e instanceof ConfigError);
  expect(error.message).toContain(variable);
  expect(error.message).toMatch(what);
  expect(error.message).not.toMatch(/\n|\bat .*:\d+:\d+|E[A-Z]+: [a-z ]+, (mkdir|open|stat|scandir)/);
  let rest = error.message;
  for (const value of Object.values(env).sort((a, b) => b.length - a.length)) rest = rest.split(value).join('<set>');
  expect(rest).not.toContain(root);
  expect(rest).not.toContain(SERVER_DIR);
  expect(rest).not.toMatch(/(?:^|[\s'"(=])\/[^\s'"]+\//);
}

describe('start-up faults of the data dir (TOOLGATE_DATA_DIR)', () => {
  it.each([
    ['a file', at('a-file'), /is a file, not a directory/],
    ['a file, relative', 'rel-file', /is a file, not a directory/],
    ['below a file', join(at('a-file'), 'sub'), /a part of its path is a file/],
    ['below a file, two levels', join(at('a-file'), 'sub', 'deeper'), /a part of its path is a file/],
    ['a symbolic link to a file', at('link-to-file'), /is a file, not a directory/],
    ['a symbolic link to nothing', at('link-to-nothing'), /symbolic link to nothing/],
    ['a loop of symbolic links', at('loop-a'), /loop of symbolic links/],
    ['a FIFO', at('a-fifo'), /is a FIFO, not a directory/],
    ['a device', '/dev/null', /is a device, not a directory/],
    // Node's recursive mkdir loops forever on these: procfs answers ENOENT below an existing parent.
    ['in procfs', '/proc/nope', /does not hold ordinary directories/],
    ['deeper in procfs', '/proc/nope/deeper/still', /does not hold ordinary directories/],
    ['in procfs, trailing slash', '/proc/nope/', /does not hold ordinary directories/],
    ['in /proc/sys', '/proc/sys/nope', /does not hold ordinary directories/],
    ['in sysfs', '/sys/nope', /permission denied|does not hold ordinary directories|read-only/],
    ['procfs itself', '/proc', /is not writable/],
  ])('%s: names the variable, says what to do, does not hang', async (_name, value, what) => {
    const env = { TOOLGATE_DATA_DIR: value };
    const error = await startFault(env);
    expectOperatorMessage(error, 'TOOLGATE_DATA_DIR', env, what);
    expect(error.message).toMatch(/point it at|choose|give/);
  });

  it('is followed through a symbolic link to a directory, as mkdir -p would', async () => {
    const config = loadConfig({ TOOLGATE_PORT: '0', TOOLGATE_DATA_DIR: at('link-to-dir') }, cwd);
    const server = await startServer(config, () => undefined);
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('a read-only directory: refused for a user the mode binds (root passes every mode check)', async () => {
    // Root writes through mode 555, so for root the read-only mount test below is the one that can fail.
    if (process.getuid?.() === 0) {
      const error = await startFault({ TOOLGATE_DATA_DIR: '/proc/self' });
      expectOperatorMessage(error, 'TOOLGATE_DATA_DIR', { TOOLGATE_DATA_DIR: '/proc/self' }, /is not writable|permission denied/);
      return;
    }
    mkdirSync(at('ro-mode'), { mode: 0o555 });
    const env = { TOOLGATE_DATA_DIR: at('ro-mode') };
    expectOperatorMessage(await startFault(env), 'TOOLGATE_DATA_DIR', env, /is not writable: permission denied/);
  });
});

describe('start-up faults of the workspace root (TOOLGATE_WORKSPACE_ROOT)', () => {
  it.each([
    ['a file', at('a-file'), /is a file, not a directory/],
    ['a file, relative', 'rel-file', /is a file, not a directory/],
    ['below a file', join(at('a-file'), 'ws'), /a part of its path is a file/],
    ['a symbolic link to nothing', at('link-to-nothing'), /symbolic link to nothing/],
    ['in procfs', '/proc/nope', /does not hold ordinary directories/],
  ])('%s: names the variable', async (_name, value, what) => {
    const env = { TOOLGATE_WORKSPACE_ROOT: value };
    expectOperatorMessage(await startFault(env), 'TOOLGATE_WORKSPACE_ROOT', env, what);
  });

  describe('a workspace root that reaches the data dir', () => {
    // Tenant workspaces are handed to sandboxed tools; the data dir holds state, audit and keys.
    it.each([
      ['the same directory', { TOOLGATE_DATA_DIR: at('same'), TOOLGATE_WORKSPACE_ROOT: at('same') }, /is the same directory as TOOLGATE_DATA_DIR/],
      ['the same, one spelled with a trailing slash', { TOOLGATE_DATA_DIR: at('same2'), TOOLGATE_WORKSPACE_ROOT: `${at('same2')}/` }, /is the same directory as/],
      ['the same, spelled with ./', { TOOLGATE_DATA_DIR: at('same3'), TOOLGATE_WORKSPACE_ROOT: join(root, '.', 'same3', '.') }, /is the same directory as/],
      ['the same, relative and absolute', { TOOLGATE_DATA_DIR: 'same4', TOOLGATE_WORKSPACE_ROOT: join(cwd, 'same4') }, /is the same directory as/],
      ['the same through a symbolic link', { TOOLGATE_DATA_DIR: at('real-data'), TOOLGATE_WORKSPACE_ROOT: at('link-to-dir') }, /is the same directory as/],
      ['a parent of it', { TOOLGATE_DATA_DIR: join(at('parent'), 'data'), TOOLGATE_WORKSPACE_ROOT: at('parent') }, /contains TOOLGATE_DATA_DIR/],
      ['its audit directory', { TOOLGATE_DATA_DIR: at('dd1'), TOOLGATE_WORKSPACE_ROOT: join(at('dd1'), 'audit') }, /the data dir's own 'audit'/],
      ['below its audit directory', { TOOLGATE_DATA_DIR: at('dd2'), TOOLGATE_WORKSPACE_ROOT: join(at('dd2'), 'audit', 'ws') }, /the data dir's own 'audit'/],
    ])('%s is refused', async (_name, env, what) => {
      const error = await startFault(env);
      expectOperatorMessage(error, 'TOOLGATE_WORKSPACE_ROOT', env, what);
      expect(error.message).toContain('TOOLGATE_DATA_DIR');
    });

    it('a directory of its own inside the data dir is allowed (the default is one)', async () => {
      const config = loadConfig({ TOOLGATE_PORT: '0', TOOLGATE_DATA_DIR: at('dd3'), TOOLGATE_WORKSPACE_ROOT: join(at('dd3'), 'tenants') }, cwd);
      const server = await startServer(config, () => undefined);
      await server.close();
    });
  });
});

describe('start-up faults of the operator files', () => {
  for (const variable of ['TOOLGATE_PRINCIPALS_FILE', 'TOOLGATE_MCP_SERVERS_FILE']) {
    it.each([
      ['a directory', at('a-dir'), /is a directory; point it at the file itself/],
      ['a directory, relative', '.', /is a directory/],
      // Reading a FIFO waits for a writer that never comes: it must be refused, not waited on.
      ['a FIFO', at('a-fifo'), /is a FIFO, not a regular file/],
      ['a character device', '/dev/zero', /is a device, not a regular file/],
      ['missing', at('missing.json'), /there is no such file/],
      ['missing, relative', 'missing.json', /there is no such file/],
      ['below a file', join(at('a-file'), 'x.json'), /a part of its path is a file/],
      ['a loop of symbolic links', at('loop-a'), /loop of symbolic links/],
    ])(`${variable} %s: names the variable and does not hang`, async (_name, value, what) => {
      const env = { [variable]: value };
      expectOperatorMessage(await startFault(env), variable, env, what);
    });
  }

  it.each(['TOOLGATE_AUDIT_HMAC_KEY_FILE', 'TOOLGATE_WEB_SEARCH_API_KEY_FILE', 'DATABASE_URL_FILE'])('%s as a FIFO is refused, not waited on', async (variable) => {
    const env = { [variable]: at('a-fifo') };
    expectOperatorMessage(await startFault(env), variable, env, /not a regular file/);
  });
});

describe('operator files where sandboxed tools can read them', () => {
  // Every tenant workspace lies below the workspace root; sandboxes read and write it.
  const workspaceRoot = at('ws-root');
  mkdirSync(join(workspaceRoot, 'acme'), { recursive: true });
  writeFileSync(join(workspaceRoot, 'acme', 'principals.json'), '{}');
  writeFileSync(join(workspaceRoot, 'servers.json'), '{"servers":[]}');
  writeFileSync(join(workspaceRoot, 'acme', 'hmac.key'), 'k'.repeat(40));
  writeFileSync(at('outside.json'), '{}');
  symlinkSync(join(workspaceRoot, 'acme', 'principals.json'), at('link-into-workspace.json'));
  it.each([
    ['TOOLGATE_PRINCIPALS_FILE', 'in a tenant workspace', join(workspaceRoot, 'acme', 'principals.json')],
    ['TOOLGATE_PRINCIPALS_FILE', 'through a symbolic link into a workspace', at('link-into-workspace.json')],
    ['TOOLGATE_MCP_SERVERS_FILE', 'at the top of the workspace root', join(workspaceRoot, 'servers.json')],
    ['TOOLGATE_AUDIT_HMAC_KEY_FILE', 'in a tenant workspace', join(workspaceRoot, 'acme', 'hmac.key')],
  ])('%s %s is refused, naming the variable', async (variable, _name, value) => {
    const env = { TOOLGATE_WORKSPACE_ROOT: workspaceRoot, [variable]: value };
    expectOperatorMessage(await startFault(env), variable, env, /is inside TOOLGATE_WORKSPACE_ROOT=.*where sandboxed tools can read and change it/);
  });
});

describe('start-up faults of the host lists', () => {
  it.each([
    ['TOOLGATE_ALLOWED_HOSTS', 'http://toolgate.lan', /without scheme/],
    ['TOOLGATE_ALLOWED_HOSTS', 'toolgate lan', /not a valid DNS name/],
    ['TOOLGATE_ALLOWED_HOSTS', 'ok.lan,0.0.0.0', /any-address/],
    ['TOOLGATE_ALLOWED_EGRESS_HOSTS', 'https://api.example.com/', /is a URL/],
    ['TOOLGATE_ALLOWED_EGRESS_HOSTS', 'example.com,*.example.org', /wildcard/],
    ['TOOLGATE_ALLOWED_EGRESS_HOSTS', 'example.com:443', /contains a port/],
    ['TOOLGATE_ALLOWED_EGRESS_HOSTS', 'user@example.com', /userinfo/],
    ['TOOLGATE_ALLOWED_EGRESS_HOSTS', 'example.com/path', /contains a path/],
    ['TOOLGATE_ALLOWED_EGRESS_HOSTS', 'exa mple.com', /contains a space/],
    ['TOOLGATE_ALLOWED_EGRESS_HOSTS', 'bad_label.com', /invalid label/],
    ['TOOLGATE_ALLOWED_EGRESS_HOSTS', '1.2.3', /looks like an IP address/],
    ['TOOLGATE_EGRESS_ALLOWED_CIDRS', '10.0.0.0/33', /prefix length/],
    ['TOOLGATE_EGRESS_ALLOWED_CIDRS', 'banana', /not an IP address/],
    ['TOOLGATE_EGRESS_ALLOWED_CIDRS', '10.0.0.0/8,fd00::/129', /invalid CIDR/],
  ])('%s=%s names the variable', async (variable, value, what) => {
    const env = { [variable]: value };
    expectOperatorMessage(await startFault(env), variable, env, what);
  });
});

/** Runs main.ts as an operator would and returns its exit code and stderr, within the bound. */
function runMain(env: Record<string, string>, wrap: string[] = []): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = [...wrap, process.execPath, '--import', 'tsx', MAIN];
    const child = spawn(command!, args, { cwd: SERVER_DIR, env: { ...process.env, TOOLGATE_PORT: '0', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`main.ts neither failed nor started within ${BOUND_MS} ms: ${stderr}`));
    }, BOUND_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('the operator sees one line, not a stack', () => {
  it.each([
    ['TOOLGATE_DATA_DIR', '/proc/nope', /TOOLGATE_DATA_DIR=\/proc\/nope cannot be created/],
    ['TOOLGATE_DATA_DIR', at('a-file'), /TOOLGATE_DATA_DIR=\S+ is a file, not a directory/],
    ['TOOLGATE_PRINCIPALS_FILE', at('a-fifo'), /TOOLGATE_PRINCIPALS_FILE=\S+ is a FIFO/],
    ['TOOLGATE_ALLOWED_EGRESS_HOSTS', '*.example.com', /TOOLGATE_ALLOWED_EGRESS_HOSTS: '\*\.example\.com' contains a wildcard/],
  ])('main.ts with %s=%s exits 1 with the message alone', async (variable, value, what) => {
    const { code, stderr } = await runMain({ TOOLGATE_DATA_DIR: at(`main-${variable}`), [variable]: value });
    expect(code, stderr).toBe(1);
    const errors = stderr.split('\n').filter((line) => / error /.test(line));
    expect(errors, stderr).toHaveLength(1);
    expect(errors[0]).toMatch(what);
    expect(stderr).not.toMatch(/failed to start|\n\s+at |EEXIST|ENOENT: no such/);
  }, BOUND_MS + 5_000);

  it('a data dir on a read-only mount (EROFS) is refused naming the variable', async (context) => {
    const unavailable = await bwrapUnavailable('read-only data dir');
    if (unavailable) {
      context.skip();
      return;
    }
    mkdirSync(at('ro-mount'));
    // A real read-only bind mount over the directory: root cannot write through it either.
    const { code, stderr } = await runMain({ TOOLGATE_DATA_DIR: at('ro-mount') }, ['bwrap', '--dev-bind', '/', '/', '--ro-bind', at('ro-mount'), at('ro-mount'), '--']);
    expect(code, stderr).toBe(1);
    expect(stderr).toMatch(/TOOLGATE_DATA_DIR=\S+ is not writable: it is on a read-only file system/);
    // One level below a read-only mount: the directory cannot be created.
    const below = await runMain({ TOOLGATE_DATA_DIR: join(at('ro-mount'), 'data') }, ['bwrap', '--dev-bind', '/', '/', '--ro-bind', at('ro-mount'), at('ro-mount'), '--']);
    expect(below.code, below.stderr).toBe(1);
    expect(below.stderr).toMatch(/TOOLGATE_DATA_DIR=\S+ cannot be created: it is on a read-only file system/);
  }, 2 * BOUND_MS + 5_000);
});

describe('a graph file whose last line a crash tore', () => {
  // docs/collaboration.md promises the operator hears how many bytes were dropped.
  it('is recovered at start with a log line saying how many bytes were dropped', async () => {
    const h = await startHarness();
    try {
      const res = await h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: { tool: 'memory_write', args: { about: 'docs/api.md', finding: 'kept across the crash' } } });
      expect(res.body.ok, JSON.stringify(res.body)).toBe(true);
      // As a crash mid-append leaves it: the start of a line without its end.
      const torn = '<urn:ex:b> <urn:ex:says> "half a li';
      appendFileSync(join(h.dataDir, 'data', 'knowledge-graph.nq'), torn);
      expect(h.logs.join('\n')).not.toMatch(/torn/);
      await h.restart();
      const line = h.logs.find((l) => /torn by a crash/.test(l));
      expect(line, h.logs.join('\n')).toMatch(new RegExp(`^warn knowledge graph \\S+knowledge-graph\\.nq: dropped a final line torn by a crash \\(${Buffer.byteLength(torn)} bytes`));
    } finally {
      await h.stop();
    }
  }, 60_000);
});
