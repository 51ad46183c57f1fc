import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestDatabase } from '@toolgate/testing';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Log } from '../src/logger.js';
import { startServer } from '../src/server.js';
import { START_STEPS } from '../src/start-steps.js';
import { StartupError } from '../src/startup-error.js';

const ECHO_SERVER = resolve(__dirname, '../../../libs/adapters/mcp-client/test/fixtures/echo-server.mjs');

/** Descriptors this process holds on files below `dir`: what an adapter left open (a lock, a database, a log). */
function openFilesUnder(dir: string): string[] {
  const open: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(`${dir}/`) || target === dir) open.push(target);
    } catch {
      // The descriptor readdir itself used, closed by now.
    }
  }
  return open;
}

/** Pids of live processes whose command line holds `marker`: the MCP servers a start left running. */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      // A zombie has exited; only its parent's bookkeeping is left.
      if (/^State:\s+Z/m.test(status)) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // Exited while being read.
    }
  }
  return pids;
}

/** An MCP server that starts and serves (the echo fixture), marked so its process can be found. */
function echoServer(name: string, marker: string) {
  return { name, command: process.execPath, args: [ECHO_SERVER, marker], env: {}, tier: 'unisolated' };
}

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A fresh data dir, with an MCP servers file when `servers` is given. */
async function setup(servers?: unknown): Promise<{ dir: string; dataDir: string; env: Record<string, string> }> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-lifecycle-'));
  dirs.push(dir);
  const dataDir = join(dir, 'data');
  const env: Record<string, string> = { TOOLGATE_DATA_DIR: dataDir, TOOLGATE_PORT: '0' };
  if (servers !== undefined) {
    await writeFile(join(dir, 'mcp-servers.json'), typeof servers === 'string' ? servers : JSON.stringify(servers));
    env['TOOLGATE_MCP_SERVERS_FILE'] = join(dir, 'mcp-servers.json');
  }
  return { dir, dataDir, env };
}

function recorder(): { logs: string[]; log: Log } {
  const logs: string[] = [];
  return { logs, log: (level, message) => void logs.push(`${level} ${message}`) };
}

/** Nothing of a start is left: no descriptor in the data dir, SQLite's write-ahead log folded back, no MCP process. */
async function expectNothingLeft(dataDir: string, marker?: string): Promise<void> {
  expect(openFilesUnder(dataDir)).toEqual([]);
  // SQLite removes the -wal file when its last connection closes; it stays while one is open.
  expect(existsSync(join(dataDir, 'state.db-wal'))).toBe(false);
  if (marker !== undefined) expect(processesWith(marker)).toEqual([]);
}

/** A second start in the same data dir gets the audit trail: the first one's directory lock is gone. */
async function expectSecondStartHealthy(dataDir: string): Promise<void> {
  const again = await startServer(loadConfig({ TOOLGATE_DATA_DIR: dataDir, TOOLGATE_PORT: '0' }), () => undefined);
  try {
    const res = await fetch(`${again.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, reasons: [] });
  } finally {
    await again.close();
  }
  expect(openFilesUnder(dataDir)).toEqual([]);
}

describe('a start that fails half-way closes everything it opened', () => {
  it('a damaged MCP servers file, read after the state, graph and audit trail opened', async () => {
    const { dataDir, env } = await setup('{"servers":[{"name":"broken"}]}');
    const { logs, log } = recorder();
    const error = await startServer(loadConfig(env), log).then(
      () => new Error('the server started'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toContain('TOOLGATE_MCP_SERVERS_FILE');
    // They had been opened: the start failed in the middle of opening the adapters, not before.
    expect(existsSync(join(dataDir, 'state.db'))).toBe(true);
    expect(existsSync(join(dataDir, 'audit'))).toBe(true);
    expect(existsSync(join(dataDir, 'knowledge-graph.nq'))).toBe(true);
    expect(logs.filter((l) => l.startsWith('info start '))).toEqual(START_STEPS.slice(0, 4).map((s, i) => `info start ${i + 1}/${START_STEPS.length}: ${s.name}`));
    await expectNothingLeft(dataDir);
    await expectSecondStartHealthy(dataDir);
  });

  it('with PostgreSQL state and audit: the pools end and the per-process bus.db closes', async () => {
    const db = await createTestDatabase(inject('toolgatePostgresUrl'));
    try {
      const { dataDir, env } = await setup('{"servers":[{"name":"broken"}]}');
      const error = await startServer(loadConfig({ ...env, TOOLGATE_STORE: 'postgres', TOOLGATE_AUDIT: 'postgres', DATABASE_URL: db.url }), () => undefined).then(
        () => new Error('the server started'),
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(StartupError);
      expect(error.message).toContain('TOOLGATE_MCP_SERVERS_FILE');
      expect(existsSync(join(dataDir, 'bus.db'))).toBe(true);
      expect(openFilesUnder(dataDir)).toEqual([]);
      // Every connection of the state and audit pools is gone: only this query's own is left.
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        let others = -1;
        for (let i = 0; i < 50 && others !== 0; i++) {
          if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
          const result = await client.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          );
          others = Number(result.rows[0]!.n);
        }
        expect(others).toBe(0);
      } finally {
        await client.end();
      }
    } finally {
      await db.drop();
    }
  });

  it('an MCP server that cannot start stops the one started before it', async () => {
    const marker = `toolgate-lifecycle-${process.pid}-${Date.now()}-a`;
    const { dataDir, env } = await setup({
      servers: [echoServer('first', marker), { name: 'second', command: process.execPath, args: ['-e', 'process.exit(3)'], env: {}, tier: 'unisolated' }],
    });
    const { logs, log } = recorder();
    const error = await startServer(loadConfig(env), log).then(
      () => new Error('the server started'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toMatch(/MCP server 'second' failed to start/);
    expect(logs).toContainEqual(expect.stringMatching(/^info MCP server 'first' started with \d+ tool/));
    expect(logs).toContainEqual("info mcp first: MCP server 'first' stopped");
    await expectNothingLeft(dataDir, marker);
    await expectSecondStartHealthy(dataDir);
  }, 60_000);

  describe('a port already in use, the last thing the start tries', () => {
    let blocker: Server | undefined;
    afterEach(async () => {
      await new Promise<void>((done) => (blocker ? blocker.close(() => done()) : done()));
      blocker = undefined;
    });

    it('closes the HTTP server, the MCP servers and every adapter', async () => {
      blocker = createServer();
      await new Promise<void>((done) => blocker!.listen(0, '127.0.0.1', () => done()));
      const port = (blocker.address() as AddressInfo).port;
      const marker = `toolgate-lifecycle-${process.pid}-${Date.now()}-b`;
      const { dataDir, env } = await setup({ servers: [echoServer('echo', marker)] });
      const { logs, log } = recorder();
      const error = await startServer(loadConfig({ ...env, TOOLGATE_PORT: String(port) }), log).then(
        () => new Error('the server started'),
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(StartupError);
      expect(error.message).toBe(`port ${port} on 127.0.0.1 is already in use (set TOOLGATE_PORT)`);
      expect(logs.at(-2)).toBe(`info start ${START_STEPS.findIndex((s) => s.name === 'listen') + 1}/${START_STEPS.length}: listen`);
      await expectNothingLeft(dataDir, marker);
      await expectSecondStartHealthy(dataDir);
    }, 60_000);
  });
});

describe('a clean stop', () => {
  it('stops answering, stops the MCP servers and closes every adapter, leaving the data dir free', async () => {
    const marker = `toolgate-lifecycle-${process.pid}-${Date.now()}-c`;
    const { dataDir, env } = await setup({ servers: [echoServer('echo', marker)] });
    const { logs, log } = recorder();
    const server = await startServer(loadConfig(env), log);
    expect(processesWith(marker)).toHaveLength(1);
    expect(openFilesUnder(dataDir).length).toBeGreaterThan(0);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await server.close();
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    expect(logs).toContainEqual("info mcp echo: MCP server 'echo' stopped");
    await expectNothingLeft(dataDir, marker);
    await expectSecondStartHealthy(dataDir);
  }, 60_000);

  it('logs every start step by name, in order, before the server answers', async () => {
    const { env } = await setup();
    const { logs, log } = recorder();
    const server = await startServer(loadConfig(env), log);
    try {
      const steps = logs.filter((l) => l.startsWith('info start '));
      expect(steps).toEqual(START_STEPS.map((s, i) => `info start ${i + 1}/${START_STEPS.length}: ${s.name}`));
      // Each step's own line follows its name: the roster after "seed", the URL after "listen".
      const at = (line: RegExp) => logs.findIndex((l) => line.test(l));
      expect(at(/team roster seeded/)).toBeGreaterThan(at(/: seed the team roster$/));
      expect(at(/^info listening on http:\/\/127\.0\.0\.1:\d+ /)).toBeGreaterThan(at(/: listen$/));
      expect(at(/^warn no TOOLGATE_PRINCIPALS_FILE: dev principal/)).toBeGreaterThan(at(/: announce the dev principal$/));
    } finally {
      await server.close();
    }
  });
});

describe('the dev principal off loopback (the demo token exposed to the network)', () => {
  // Spellings of a non-loopback address, some dressed up as loopback: each must be refused
  // before anything is created, so a refused start leaves no data dir behind.
  it.each([
    ['the IPv4 any-address', '0.0.0.0'],
    ['the IPv6 any-address', '::'],
    ['the IPv6 any-address, bracketed', '[::]'],
    ['the IPv6 any-address, written out', '0:0:0:0:0:0:0:0'],
    ['a LAN address', '192.168.1.10'],
    ['a name that starts like loopback', '127.0.0.1.nip.io'],
    ['localhost with a trailing dot', 'localhost.'],
    ['a subdomain of localhost elsewhere', 'localhost.example.com'],
    ['loopback in hexadecimal', '0x7f.1'],
    ['loopback mapped into IPv6', '::ffff:127.0.0.1'],
  ])('%s (%s) is refused, naming TOOLGATE_PRINCIPALS_FILE, before the data dir exists', async (_name, host) => {
    const { dataDir, env } = await setup();
    const error = await startServer(loadConfig({ ...env, TOOLGATE_HOST: host }), () => undefined).then(
      async (server) => {
        await server.close();
        return new Error('the server started');
      },
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toBe(`refusing to listen on ${host} without TOOLGATE_PRINCIPALS_FILE: the dev principal 'demo' is for loopback only`);
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe('an IPv6 TOOLGATE_HOST written as in a URL ([::1])', () => {
  it('binds the bare address and answers there, as it does for ::1', async () => {
    for (const host of ['[::1]', '::1']) {
      const { env } = await setup();
      const { log } = recorder();
      const server = await startServer(loadConfig({ ...env, TOOLGATE_HOST: host }), log);
      try {
        expect(server.url).toBe(`http://[::1]:${server.port}`);
        const health = await fetch(`${server.url}/healthz`);
        expect(health.status).toBe(200);
      } finally {
        await server.close();
      }
    }
  });
});

describe('approval links on an any-address (a remote approver handed a loopback link)', () => {
  /** A principals file, which a server off loopback needs (the dev principal is loopback only). */
  async function offLoopback(extra: Record<string, string> = {}): Promise<Record<string, string>> {
    const { dir, env } = await setup();
    const principals = join(dir, 'principals.json');
    await writeFile(
      principals,
      JSON.stringify({ principals: [{ id: 'alice', token: 'alice-token-lifecycle-0123456789abcdef', tenant: 'acme', roles: ['worker'] }], roles: { worker: ['*'] }, tenants: { acme: { tools: ['*'] } } }),
    );
    return { ...env, TOOLGATE_PRINCIPALS_FILE: principals, ...extra };
  }
  const linkWarnings = (logs: string[]) => logs.filter((l) => l.includes('approval links'));

  it.each([
    ['the IPv4 any-address', '0.0.0.0', '127.0.0.1'],
    ['the IPv6 any-address', '::', '[::1]'],
    ['the IPv6 any-address, with a trailing zero', '::0', '[::1]'],
    ['the IPv6 any-address, written out', '0:0:0:0:0:0:0:0', '[::1]'],
    ['the IPv6 any-address, zero-padded', '0000:0000::0000', '[::1]'],
  ])('%s (%s) without TOOLGATE_PUBLIC_URL: one warning, after the listening line, naming the loopback link and the variable', async (_name, host, loopback) => {
    const { logs, log } = recorder();
    const server = await startServer(loadConfig(await offLoopback({ TOOLGATE_HOST: host })), log);
    try {
      const warnings = linkWarnings(logs);
      expect(warnings).toEqual([
        `warn listening on the any-address ${host} without TOOLGATE_PUBLIC_URL: approval links (the approval page, MCP elicitation URLs) ` +
          `will name http://${loopback}:${server.port}, which only this host can open; set TOOLGATE_PUBLIC_URL to the URL remote approvers use`,
      ]);
      expect(logs.indexOf(warnings[0]!)).toBeGreaterThan(logs.findIndex((l) => l.startsWith('info listening on ')));
    } finally {
      await server.close();
    }
  });

  it.each([
    ['an any-address with TOOLGATE_PUBLIC_URL set', { TOOLGATE_HOST: '0.0.0.0', TOOLGATE_PUBLIC_URL: 'https://gateway.example.com/toolgate' }],
    ['the IPv6 any-address with TOOLGATE_PUBLIC_URL set', { TOOLGATE_HOST: '::', TOOLGATE_PUBLIC_URL: 'https://gateway.example.com' }],
    ['IPv4 loopback', { TOOLGATE_HOST: '127.0.0.1' }],
    ['IPv6 loopback', { TOOLGATE_HOST: '::1' }],
  ])('%s: no such warning (the links name what clients use)', async (_name, extra) => {
    const { logs, log } = recorder();
    const server = await startServer(loadConfig(await offLoopback(extra)), log);
    try {
      expect(logs.some((l) => l.startsWith('info listening on '))).toBe(true);
      expect(linkWarnings(logs)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
