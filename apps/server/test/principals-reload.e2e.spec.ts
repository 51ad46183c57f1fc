import { spawn, type ChildProcess } from 'node:child_process';
import { link, mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
// `--import tsx` resolves from the working directory: the server package's own.
const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef';
const CAROL = 'carol-token-0123456789abcdef';

const policy = (principals: { id: string; token: string }[]) => ({
  principals: principals.map((p) => ({ ...p, tenant: 'acme', roles: ['worker'] })),
  roles: { worker: { tools: ['calculator'] } },
  tenants: { acme: { tools: ['*'] } },
});

/** The server as operators run it (`npm start` is `tsx apps/server/src/main.ts`), so real signals reach main's handlers. */
async function startMain(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; log: () => string }> {
  let stderr = '';
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { cwd: SERVER_DIR, env: { ...process.env, TOOLGATE_PORT: '0', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 60_000);
    const look = () => {
      const match = /listening on (http:\/\/\S+) /.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stderr!.on('data', look);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  return { child, url, log: () => stderr };
}

async function stopMain(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}

/** The HTTP status of a calculator call by `token`: 200 for a known principal, 401 for anyone else. */
async function invokeStatus(url: string, token: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/tools/invoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tool: 'calculator', args: { expression: '2+3*4' } }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

/** Class: principals changed while the server runs (issue 13: SIGHUP and file changes, ADR 0073). */
describe('the principals file, re-read while the server runs', { timeout: 90_000 }, () => {
  let dir: string;
  let file: string;
  let server: Awaited<ReturnType<typeof startMain>>;

  const status = (token: string) => invokeStatus(server.url, token);
  const reloads = () => server.log().split('\n').filter((l) => l.includes(': reloaded ('));
  const refusals = () => server.log().split('\n').filter((l) => l.includes(': reload refused ('));
  /** Writes through a temporary file and a rename, as editors and config managers do. */
  const replaceFile = async (text: string) => {
    await writeFile(`${file}.tmp`, text);
    await rename(`${file}.tmp`, file);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-principals-reload-'));
    file = join(dir, 'principals.json');
    await writeFile(file, JSON.stringify(policy([{ id: 'alice', token: ALICE }, { id: 'bob', token: BOB }])));
    server = await startMain({ TOOLGATE_DATA_DIR: join(dir, 'data'), TOOLGATE_WORKSPACE_ROOT: join(dir, 'workspaces'), TOOLGATE_PRINCIPALS_FILE: file });
  }, 90_000);

  afterAll(async () => {
    await stopMain(server?.child);
    await rm(dir, { recursive: true, force: true });
  });

  it('SIGHUP does not stop the server: it re-reads the file, and says so', async () => {
    expect(await status(ALICE)).toBe(200);
    const before = reloads().length;
    server.child.kill('SIGHUP');
    const onSighup = () => reloads().slice(before).find((l) => l.includes('reloaded (SIGHUP)'));
    await until('a reload logged', () => onSighup() !== undefined);
    expect(onSighup()).toMatch(/: reloaded \(SIGHUP\): 2 principal\(s\), 1 role\(s\), 1 tenant\(s\)$/);
    expect(server.child.exitCode).toBeNull();
    expect(await status(ALICE)).toBe(200);
  });

  it('a principal the new file removes is refused from its next call, and one it adds is let in, without a signal', async () => {
    expect(await status(BOB)).toBe(200);
    expect(await status(CAROL)).toBe(401);
    await replaceFile(JSON.stringify(policy([{ id: 'alice', token: ALICE }, { id: 'carol', token: CAROL }])));
    await until('bob refused', async () => (await status(BOB)) === 401);
    expect(await status(CAROL)).toBe(200);
    expect(await status(ALICE)).toBe(200);
  });

  it.each([
    ['not JSON', '{"principals": ['],
    ['a principal without a tenant', JSON.stringify({ principals: [{ id: 'mallory', token: 'mallory-token-0123456789', roles: ['worker'] }], roles: {}, tenants: {} })],
    ['an empty file', ''],
  ])('a new file that is %s is refused with its fault named, and the principals read before keep serving', async (_what, text) => {
    const before = refusals().length;
    await replaceFile(text);
    await until('a refusal logged', () => refusals().length > before);
    const line = refusals().at(-1)!;
    expect(line).toMatch(/^.*TOOLGATE_PRINCIPALS_FILE=.*: reload refused \(the file changed\): .+; the principals read before keep serving$/);
    // No token from the refused file reaches the log.
    expect(line).not.toContain('mallory-token');
    expect(await status(ALICE)).toBe(200);
    expect(await status(CAROL)).toBe(200);
    expect(await status('mallory-token-0123456789')).toBe(401);
    // SIGHUP on the broken file refuses it again, and the server stays up.
    const refused = refusals().length;
    server.child.kill('SIGHUP');
    await until('a refusal on SIGHUP', () => refusals().slice(refused).some((l) => l.includes('reload refused (SIGHUP)')));
    expect(server.child.exitCode).toBeNull();
    expect(await status(ALICE)).toBe(200);
  });

  it('a file that has become a link into the workspace root, where tools can write, is refused though it is valid', async () => {
    await mkdir(join(dir, 'workspaces', 'acme'), { recursive: true });
    const planted = join(dir, 'workspaces', 'acme', 'principals.json');
    await writeFile(planted, JSON.stringify(policy([{ id: 'mallory', token: 'mallory-token-0123456789' }])));
    const before = refusals().length;
    await symlink(planted, `${file}.link`);
    await rename(`${file}.link`, file);
    await until('a refusal logged', () => refusals().length > before);
    expect(refusals().at(-1)).toContain('is inside TOOLGATE_WORKSPACE_ROOT=');
    expect(await status('mallory-token-0123456789')).toBe(401);
    expect(await status(ALICE)).toBe(200);
  });

  it('a file that has become a hard link to a file in the workspace root is refused, though it is valid', async () => {
    const planted = join(dir, 'workspaces', 'acme', 'hard.json');
    await writeFile(planted, JSON.stringify(policy([{ id: 'mallory', token: 'mallory-token-0123456789' }])));
    const before = refusals().length;
    await rm(file);
    await link(planted, file);
    await until('a refusal of the link', () => refusals().slice(before).some((l) => l.includes('has 2 hard links')));
    expect(await status('mallory-token-0123456789')).toBe(401);
    expect(await status(ALICE)).toBe(200);
  });

  it('a removed file is refused the same way, and putting a valid one back serves it', async () => {
    const before = refusals().length;
    await rm(file);
    await until('a refusal logged', () => refusals().length > before);
    expect(refusals().at(-1)).toContain('cannot be read: there is no such file; check the path');
    expect(await status(ALICE)).toBe(200);
    await replaceFile(JSON.stringify(policy([{ id: 'bob', token: BOB }])));
    await until('alice refused', async () => (await status(ALICE)) === 401);
    expect(await status(BOB)).toBe(200);
  });
});

describe('SIGHUP without a principals file', { timeout: 90_000 }, () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startMain>>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-principals-demo-'));
    server = await startMain({ TOOLGATE_DATA_DIR: join(dir, 'data') });
  }, 90_000);
  afterAll(async () => {
    await stopMain(server?.child);
    await rm(dir, { recursive: true, force: true });
  });

  it('leaves the dev principal serving and the server up, and says there was nothing to reload', async () => {
    server.child.kill('SIGHUP');
    await until('the line logged', () => server.log().includes('SIGHUP: nothing to reload'));
    expect(server.child.exitCode).toBeNull();
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  });
});

describe('a principals file that is a symbolic link', { timeout: 90_000 }, () => {
  let dir: string;
  let server: Awaited<ReturnType<typeof startMain>>;
  const status = (token: string) => invokeStatus(server.url, token);
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-principals-link-'));
    await mkdir(join(dir, 'etc'));
    await writeFile(join(dir, 'etc', 'real.json'), JSON.stringify(policy([{ id: 'alice', token: ALICE }, { id: 'bob', token: BOB }])));
    await symlink(join(dir, 'etc', 'real.json'), join(dir, 'principals.json'));
    server = await startMain({ TOOLGATE_DATA_DIR: join(dir, 'data'), TOOLGATE_WORKSPACE_ROOT: join(dir, 'workspaces'), TOOLGATE_PRINCIPALS_FILE: join(dir, 'principals.json') });
  }, 90_000);
  afterAll(async () => {
    await stopMain(server?.child);
    await rm(dir, { recursive: true, force: true });
  });

  it('sees its target edited in place, in another directory, without a signal', async () => {
    expect(await status(BOB)).toBe(200);
    await writeFile(join(dir, 'etc', 'real.json'), JSON.stringify(policy([{ id: 'alice', token: ALICE }])));
    await until('bob refused', async () => (await status(BOB)) === 401);
    expect(await status(ALICE)).toBe(200);
  });

  it('follows the link when it is pointed at a file elsewhere: an edit there is seen too', async () => {
    await mkdir(join(dir, 'etc2'));
    await writeFile(join(dir, 'etc2', 'other.json'), JSON.stringify(policy([{ id: 'alice', token: ALICE }, { id: 'carol', token: CAROL }])));
    await symlink(join(dir, 'etc2', 'other.json'), join(dir, 'principals.json.new'));
    await rename(join(dir, 'principals.json.new'), join(dir, 'principals.json'));
    await until('carol let in', async () => (await invokeStatus(server.url, CAROL)) === 200);
    await writeFile(join(dir, 'etc2', 'other.json'), JSON.stringify(policy([{ id: 'alice', token: ALICE }])));
    await until('carol refused', async () => (await invokeStatus(server.url, CAROL)) === 401);
  });

  it('says an unchanged file is unchanged on SIGHUP, without parsing it again', async () => {
    const lines = () => server.log().split('\n').filter((l) => l.includes('re-read (SIGHUP): unchanged'));
    const before = lines().length;
    server.child.kill('SIGHUP');
    await until('the unchanged line', () => lines().length > before);
    expect(await status(ALICE)).toBe(200);
  });
});

describe('a principals file with a second name', { timeout: 90_000 }, () => {
  it('is refused at start too, naming the fault, since the other name may be inside the workspace root', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-principals-hard-'));
    try {
      await mkdir(join(dir, 'workspaces', 'acme'), { recursive: true });
      const planted = join(dir, 'workspaces', 'acme', 'agent.json');
      await writeFile(planted, JSON.stringify(policy([{ id: 'alice', token: ALICE }])));
      await link(planted, join(dir, 'principals.json'));
      await expect(
        startMain({ TOOLGATE_DATA_DIR: join(dir, 'data'), TOOLGATE_WORKSPACE_ROOT: join(dir, 'workspaces'), TOOLGATE_PRINCIPALS_FILE: join(dir, 'principals.json') }),
      ).rejects.toThrow(/server exited with 1: [\s\S]*TOOLGATE_PRINCIPALS_FILE=[^\n]*: it has 2 hard links; a principals file must have one name/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
