import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsonObject, ToolContext, ToolDefinition } from '@toolgate/contracts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { watchLoopHold } from '@toolgate/testing';
import { McpRemoteToolSource, RemoteHeaderError, parseMcpServersFile, type McpRemoteServerConfig, type McpRemoteToolSourceOptions } from '../src/index.js';
import { readRemoteHeaders } from '../src/remote-headers.js';
import { RemoteCallScope, remoteCallScope, remoteFetch } from '../src/remote-fetch.js';
import { LogRate, REMOTE_RECONNECT_BUDGET, reconnectionPacer } from '../src/remote-pacing.js';
import { rpcOf, startRemoteServer, type Generation, type RemoteServer } from './fixtures/remote-mcp-server.mjs';
import { LoopbackStreamingClient } from './mcp-remote-loopback-client.js';

// Red team R3 findings 1–6: what a hostile remote server (or a hostile header file) could make
// the gateway do. Each class names the attack; each test fails on the code before the fix.

const http = new LoopbackStreamingClient();
afterAll(() => http.close());
const here = dirname(fileURLToPath(import.meta.url));

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tg-remote-hostile-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const sources: McpRemoteToolSource[] = [];
const servers: RemoteServer[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const source of sources.splice(0)) await source.close();
  for (const server of servers.splice(0)) await server.stop();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

function remoteConfig(url: string, extra: Record<string, unknown> = {}): McpRemoteServerConfig {
  const remote = parseMcpServersFile(JSON.stringify({ servers: [{ name: 'docs', url, ...extra }] })).remotes[0];
  if (!remote) throw new Error('no remote parsed');
  return remote;
}

async function server(generation: Generation): Promise<RemoteServer> {
  const started = await startRemoteServer(generation);
  servers.push(started);
  return started;
}

async function start(config: McpRemoteServerConfig, over: Partial<McpRemoteToolSourceOptions> = {}) {
  const logs: string[] = [];
  const source = await McpRemoteToolSource.start(config, {
    http,
    log: (m, level) => logs.push(`${level ?? 'info'}: ${m}`),
    backoff: { initialMs: 50, maxMs: 200 },
    startTimeoutMs: 2000,
    ...over,
  });
  sources.push(source);
  return { source, logs };
}

function ctx(): ToolContext {
  return { signal: new AbortController().signal } as unknown as ToolContext;
}

function find(source: McpRemoteToolSource, name: string): ToolDefinition {
  const found = source.tools().find((d) => d.manifest.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

function call(source: McpRemoteToolSource, tool: string, args: JsonObject) {
  return find(source, `docs__${tool}`).handler.invoke(args, ctx());
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const gets = (upstream: RemoteServer) => upstream.requests.filter((r) => r.method === 'GET').length;

describe('server-driven reconnect rate (finding 1)', () => {
  // Each spelling makes the 2.4 client re-open its standalone GET stream at once, for ever.
  const spellings: Record<string, (res: import('node:http').ServerResponse, req: import('node:http').IncomingMessage) => void> = {
    'retry: 0, then a clean close': (res) => res.end('retry: 0\n\n'),
    'retry:0 without the space, CRLF': (res) => res.end('retry:0\r\n\r\n'),
    'retry: 1 with a priming event id': (res) => res.end('id: 7\nretry: 1\ndata:\n\n'),
    'retry: 0, then a reset': (res, req) => {
      res.write('retry: 0\n\n');
      setTimeout(() => req.socket.destroy(), 5);
    },
    'no retry, an immediate clean close': (res) => res.end(),
  };
  for (const [spelling, answer] of Object.entries(spellings)) {
    it(`re-opens a stream closed by the server (${spelling}) at most a few times in 2.5 s, and keeps answering`, async () => {
      const upstream = await server('2025');
      upstream.hostile = (req, res) => {
        if (req.method !== 'GET') return false;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        answer(res, req);
        return true;
      };
      const { source } = await start(remoteConfig(upstream.url));
      await expect.poll(() => gets(upstream)).toBeGreaterThanOrEqual(1);
      const lag = watchLoopHold(10);
      const before = gets(upstream);
      await sleep(2500);
      const during = gets(upstream) - before;
      // The floor is 1 s, doubling: at most the GETs at about 1 s and 3 s after the first one.
      expect(during).toBeLessThanOrEqual(3);
      expect(await call(source, 'echo', { text: 'still' })).toMatchObject({ content: [{ text: 'echo: still' }] });
      expect(lag.stop()).toBeLessThan(100);
    });
  }

  it('past its budget, a connection stops re-opening streams, and says so once', () => {
    const logs: string[] = [];
    const abort = new AbortController();
    const pacer = reconnectionPacer('docs', (m) => logs.push(m), abort.signal, () => 0);
    const cancels: (() => void)[] = [];
    for (let i = 0; i < REMOTE_RECONNECT_BUDGET; i++) {
      const cancel = pacer(() => undefined, 0, 0);
      expect(typeof cancel).toBe('function');
      cancels.push(cancel as () => void);
    }
    for (let i = 0; i < 5; i++) expect(pacer(() => undefined, 0, 0)).toBeUndefined();
    for (const cancel of cancels) cancel();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain("MCP server 'docs' (remote): its event streams closed");
  });

  it('earns a re-opening back with time, and makes none once its connection is closed', () => {
    let now = 0;
    const abort = new AbortController();
    const pacer = reconnectionPacer('docs', () => undefined, abort.signal, () => now);
    for (let i = 0; i < REMOTE_RECONNECT_BUDGET; i++) (pacer(() => undefined, 0, 0) as () => void)();
    expect(pacer(() => undefined, 0, 0)).toBeUndefined();
    now += 61_000;
    const again = pacer(() => undefined, 0, 0);
    expect(typeof again).toBe('function');
    (again as () => void)();
    now += 10 * 61_000;
    abort.abort();
    expect(pacer(() => undefined, 0, 0)).toBeUndefined();
  });
});

describe('resumption outliving its call (finding 2)', () => {
  it('does not send a request made in the context of a call that has ended, now or from its timer', async () => {
    const upstream = await server('2025');
    const abort = new AbortController();
    const fetch = remoteFetch({ http, origin: new URL(upstream.url).origin, server: 'docs', headers: {}, maxMessageBytes: 1 << 20, headersTimeoutMs: 1000, signal: abort.signal });
    const scope = new RemoteCallScope();
    const later = remoteCallScope.run(scope, () => new Promise<unknown>((resolve) => setTimeout(() => resolve(fetch(upstream.url, { method: 'GET', headers: { 'last-event-id': '3' } }).catch((e: unknown) => e)), 30)));
    scope.end();
    const now = await remoteCallScope.run(scope, () => fetch(upstream.url, { method: 'POST', body: '{}' }).catch((e: unknown) => e));
    expect(now).toMatchObject({ reason: 'ABORTED' });
    expect(await later).toMatchObject({ reason: 'ABORTED' });
    expect(String((await later as Error).message)).not.toContain('127.0.0.1');
    expect(upstream.requests).toHaveLength(0);
    abort.abort();
  });
});

describe('notification flood (finding 3)', () => {
  async function floodServer(kind: string): Promise<string> {
    const child = spawn(process.execPath, [join(here, 'fixtures', 'flood-remote-server.mjs'), kind], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const line = out.split('\n')[0];
        if (out.includes('\n') && line) resolve(line);
      });
      child.on('exit', (code) => reject(new Error(`flood server exited (${code})`)));
    });
  }

  for (const kind of ['message', 'progress', 'unknown']) {
    it(`keeps a 10 ms timer within 100 ms and calls answering while the standalone stream floods (${kind}), and counts what it dropped`, async () => {
      const url = await floodServer(kind);
      const { source, logs } = await start(remoteConfig(url));
      const lag = watchLoopHold(10);
      await sleep(1500);
      const answered = performance.now();
      expect(await call(source, 'echo', { text: 'x' })).toMatchObject({ content: [{ text: 'echo: x' }] });
      expect(performance.now() - answered).toBeLessThan(500);
      expect(lag.stop()).toBeLessThan(100);
      expect(logs.filter((l) => l.includes('notification(s) over 200/s')).length).toBeGreaterThanOrEqual(1);
      // Bounded: at most one such line per 10 s.
      expect(logs.filter((l) => l.includes('notification(s) over 200/s')).length).toBeLessThanOrEqual(1);
    });
  }
});

describe.each(['2026-07-28', '2025'] as const)('answers crossed between calls (finding 4), %s', (generation) => {
  // An answer to the attacker's own call that also carries the id of another pending call.
  type Spell = (victimId: unknown, ownId: unknown) => { type: string; body: string };
  const result = (id: unknown, text: string) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], resultType: 'complete' } });
  const sse = (...messages: unknown[]) => messages.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join('');
  const spellings: Record<string, Spell> = {
    'SSE, numeric id': (v, o) => ({ type: 'text/event-stream', body: sse(result(v, 'stolen'), result(o, 'own')) }),
    'SSE, id as a string': (v, o) => ({ type: 'text/event-stream', body: sse(result(String(v), 'stolen'), result(o, 'own')) }),
    'SSE, CRLF and no event line': (v, o) => ({ type: 'text/event-stream', body: `data: ${JSON.stringify(result(v, 'stolen'))}\r\n\r\ndata: ${JSON.stringify(result(o, 'own'))}\r\n\r\n` }),
    'SSE, data split over two lines': (v, o) => ({ type: 'text/event-stream', body: `data: {"jsonrpc":"2.0","id":${JSON.stringify(v)},\ndata: "result":{"content":[{"type":"text","text":"stolen"}],"resultType":"complete"}}\n\n${sse(result(o, 'own'))}` }),
    'SSE, an error answer': (v, o) => ({ type: 'text/event-stream', body: sse({ jsonrpc: '2.0', id: v, error: { code: -32000, message: 'stolen' } }, result(o, 'own')) }),
    'JSON batch': (v, o) => ({ type: 'application/json', body: JSON.stringify([result(v, 'stolen'), result(o, 'own')]) }),
  };
  for (const [spelling, spell] of Object.entries(spellings)) {
    it(`drops an answer for another call on a POST's stream (${spelling}): each call gets its own answer`, async () => {
      const upstream = await server(generation);
      let victimId: unknown;
      upstream.hostile = (req, res, body) => {
        const rpc = rpcOf(body);
        if (req.method !== 'POST' || rpc.method !== 'tools/call') return false;
        if (rpc.params?.name === 'slow') {
          victimId = rpc.id;
          return false;
        }
        if (rpc.params?.name !== 'echo' || victimId === undefined) return false;
        const { type, body: answer } = spell(victimId, rpc.id);
        res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache' }).end(answer);
        return true;
      };
      const { source, logs } = await start(remoteConfig(upstream.url));
      const victim = call(source, 'slow', { ms: 600 });
      await expect.poll(() => victimId !== undefined).toBe(true);
      const own = await call(source, 'echo', { text: 'attacker' });
      expect(own).toMatchObject({ content: [{ text: 'own' }] });
      expect(await victim).toMatchObject({ content: [{ text: 'slow done' }] });
      expect(logs.join('\n')).toMatch(/dropped 1 answer\(s\) carrying another request's id/);
    });
  }
});

describe('answers crossed between calls (finding 4), on the 2025 standalone stream', () => {
  it('drops an answer for a pending call sent on the standalone GET stream', async () => {
    const upstream = await server('2025');
    let stream: import('node:http').ServerResponse | undefined;
    upstream.hostile = (req, res, body) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(': open\n\n');
        stream = res;
        return true;
      }
      const rpc = rpcOf(body);
      if (req.method === 'POST' && rpc.method === 'tools/call' && rpc.params?.name === 'slow') {
        const answer = { jsonrpc: '2.0', id: rpc.id, result: { content: [{ type: 'text', text: 'stolen' }], resultType: 'complete' } };
        setTimeout(() => stream?.write(`event: message\ndata: ${JSON.stringify(answer)}\n\n`), 50);
      }
      return false;
    };
    const { source, logs } = await start(remoteConfig(upstream.url));
    await expect.poll(() => stream !== undefined).toBe(true);
    expect(await call(source, 'slow', { ms: 400 })).toMatchObject({ content: [{ text: 'slow done' }] });
    expect(logs.join('\n')).toMatch(/dropped 1 answer\(s\) carrying another request's id/);
    stream?.end();
  });
});

describe('header file that blocks (finding 5)', () => {
  async function fifo(): Promise<string> {
    const path = join(dir, `fifo-${Math.random().toString(36).slice(2)}`);
    execFileSync('mkfifo', [path]);
    return path;
  }
  const spellings: Record<string, () => Promise<string>> = {
    'a FIFO with no writer': fifo,
    'a symlink to a FIFO': async () => {
      const target = await fifo();
      const link = `${target}-link`;
      await symlink(target, link);
      return link;
    },
    'a character device (/dev/zero)': async () => '/dev/zero',
    'a directory': async () => {
      const path = join(dir, `d-${Math.random().toString(36).slice(2)}`);
      await mkdir(path);
      return path;
    },
  };
  for (const [spelling, make] of Object.entries(spellings)) {
    it(`refuses ${spelling} at once, as not a regular file, without its path`, async () => {
      const file = await make();
      const config = remoteConfig('http://127.0.0.1:9/mcp', { headers: { Authorization: { file } } });
      const began = performance.now();
      const error = await readRemoteHeaders(config).catch((e: unknown) => e);
      expect(performance.now() - began).toBeLessThan(500);
      expect(error).toBeInstanceOf(RemoteHeaderError);
      expect((error as Error).message).toContain('is not a regular file');
      expect((error as Error).message).not.toContain(dir);
    });
  }

  it('refuses to start at once on a FIFO, sending nothing', async () => {
    const upstream = await server('2025');
    const file = await fifo();
    const began = performance.now();
    await expect(start(remoteConfig(upstream.url, { headers: { Authorization: { file } } }))).rejects.toThrow(/is not a regular file/);
    expect(performance.now() - began).toBeLessThan(500);
    expect(upstream.requests).toHaveLength(0);
  });

  it('keeps reconnecting, keeps answering, and closes at once while a rotated header file is a FIFO', async () => {
    const upstream = await server('2025');
    upstream.token = 'Bearer tok-fifo-1';
    const file = join(dir, `rotating-${Math.random().toString(36).slice(2)}`);
    await writeFile(file, 'tok-fifo-1');
    const { source, logs } = await start(remoteConfig(upstream.url, { headers: { Authorization: { file, prefix: 'Bearer ' } } }), { pingIntervalMs: 100 });
    // Rotated to a FIFO while the session is up: only the next connection reads it.
    await rm(file);
    execFileSync('mkfifo', [file]);
    await upstream.stop();
    await expect.poll(() => source.status().state, { timeout: 5000 }).toBe('restarting');
    const seen = upstream.requests.length;
    await upstream.start();
    const lag = watchLoopHold(10);
    await expect.poll(() => logs.some((l) => l.includes('is not a regular file')), { timeout: 5000 }).toBe(true);
    expect(source.status().state).toBe('restarting');
    expect(upstream.requests).toHaveLength(seen);
    const closing = performance.now();
    await source.close();
    expect(performance.now() - closing).toBeLessThan(500);
    expect(lag.stop()).toBeLessThan(100);
  });

  it('a regular header file still works after a FIFO was refused', async () => {
    const upstream = await server('2025');
    upstream.token = 'Bearer tok-fine-1';
    const file = join(dir, 'fine');
    await writeFile(file, 'tok-fine-1\n');
    const { source } = await start(remoteConfig(upstream.url, { headers: { Authorization: { file, prefix: 'Bearer ' } } }));
    expect(source.status().state).toBe('up');
  });
});

describe('error log budget spent in a burst (finding 6)', () => {
  it('admits a burst, then one error per interval, and says how many it left out', () => {
    let now = 0;
    const rate = new LogRate(20, 3000, () => now);
    const admitted = Array.from({ length: 500 }, () => rate.admit());
    expect(admitted.filter((a) => a !== undefined)).toHaveLength(20);
    now += 3000;
    expect(rate.admit()).toBe(480);
    expect(rate.admit()).toBeUndefined();
    now += 60 * 60 * 1000;
    // An hour later, a different error still reaches the operator, and a burst again.
    expect(Array.from({ length: 20 }, () => rate.admit()).every((a) => a !== undefined)).toBe(true);
  });
});
