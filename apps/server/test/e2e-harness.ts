import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BwrapExecutor } from '@toolgate/adapter-executor-bwrap';
import { threadSchedule, timeLessCpuWait } from '@toolgate/testing';
import { loadConfig } from '../src/config.js';
import type { Log } from '../src/logger.js';
import { startServer, type RunningServer } from '../src/server.js';

// Response bodies are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */
export interface Harness {
  readonly server: RunningServer;
  readonly dataDir: string;
  readonly logs: string[];
  /** fetch against the server with an optional bearer token. */
  call(path: string, init?: RequestInit & { token?: string; json?: unknown }): Promise<{ status: number; body: any; headers: Headers }>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a real server on a free loopback port with its own data dir. */
export async function startHarness(env: Record<string, string> = {}, files: { principals?: unknown; mcpServers?: unknown } = {}): Promise<Harness> {
  const dataDir = await mkdtemp(join(tmpdir(), 'toolgate-e2e-'));
  if (files.principals) {
    await writeFile(join(dataDir, 'principals.json'), JSON.stringify(files.principals));
    env = { ...env, TOOLGATE_PRINCIPALS_FILE: join(dataDir, 'principals.json') };
  }
  if (files.mcpServers) {
    await writeFile(join(dataDir, 'mcp-servers.json'), JSON.stringify(files.mcpServers));
    env = { ...env, TOOLGATE_MCP_SERVERS_FILE: join(dataDir, 'mcp-servers.json') };
  }
  const logs: string[] = [];
  const log: Log = (level, message) => logs.push(`${level} ${message}`);
  const config = loadConfig({ TOOLGATE_DATA_DIR: join(dataDir, 'data'), TOOLGATE_PORT: '0', ...env });
  let server = await startServer(config, log);
  const harness: Harness = {
    get server() {
      return server;
    },
    dataDir,
    logs,
    async call(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.token) headers.set('authorization', `Bearer ${init.token}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('content-type', 'application/json');
        body = JSON.stringify(init.json);
      }
      const res = await fetch(`${server.url}${path}`, { ...init, headers, body: body ?? null });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON: keep the text */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async restart() {
      await server.close();
      server = await startServer({ ...config, port: server.port }, log);
    },
    async stop() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

/**
 * Connects `client` to the harness's `/mcp` over Streamable HTTP as the bearer of `token`, with the
 * transport of the client's own SDK (2.x, or the 1.x a 2025-era client is built on), and returns
 * that transport so a test can read the session or revision it got.
 */
export async function connectMcp(h: Harness, token: string, client: LegacyClient): Promise<LegacyTransport>;
export async function connectMcp(h: Harness, token: string, client: ModernClient): Promise<ModernTransport>;
export async function connectMcp(h: Harness, token: string, client: ModernClient | LegacyClient): Promise<ModernTransport | LegacyTransport> {
  const url = new URL(`${h.server.url}/mcp`);
  const requestInit = { headers: { authorization: `Bearer ${token}` } };
  if (client instanceof LegacyClient) {
    const transport = new LegacyTransport(url, { requestInit });
    await client.connect(transport);
    return transport;
  }
  const transport = new ModernTransport(url, { requestInit });
  await client.connect(transport);
  return transport;
}

const run = promisify(execFile);
const CLI = resolve(__dirname, '../../cli/bin/toolgate.mjs');

/** Runs the real `toolgate` command against the harness as a separate process, as a user would, as the bearer of `token`. */
export async function runCli(h: Harness, args: string[], token: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, TOOLGATE_URL: h.server.url, TOOLGATE_TOKEN: token }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    // A non-zero exit is an answer the test reads, not a failure of the harness.
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * Why the default sandbox tier (bwrap) cannot run here, or undefined when it can. A suite that
 * needs it skips with this reason (printed once), except under CI=true, where a missing sandbox
 * fails the suite: `.ci/run` installs bubblewrap, and these suites hold the isolation guarantees.
 */
export async function bwrapUnavailable(suite: string): Promise<string | undefined> {
  const reason = await new BwrapExecutor().check().then(
    () => undefined,
    (error: unknown) => (error as Error).message,
  );
  if (reason && process.env['CI'] === 'true') throw new Error(`CI=true but the bwrap tier cannot run here: ${reason} (.ci/run installs bubblewrap)`);
  if (reason) process.stderr.write(`${suite}: bwrap cannot run here (${reason}); its sandboxed tests are skipped\n`);
  return reason;
}

/**
 * Milliseconds this thread (the server's event loop: the harness runs it in-process) has waited,
 * runnable, for a CPU (Linux schedstat), or 0 where the kernel does not say. The test box is
 * shared: that wait is the box's load, not work the server put on its event loop.
 */
export function cpuWaitMs(): number {
  return threadSchedule().waitedMs;
}

/**
 * Runs `work` and says how long it took, less the time the box kept this thread off a CPU
 * meanwhile: what a probe of the server's own responsiveness should compare with its bound.
 */
export function timedLessCpuWait<T>(work: () => Promise<T>): Promise<{ readonly value: T; readonly ms: number }> {
  return timeLessCpuWait(work);
}

/**
 * Polls `/healthz` every `intervalMs` until `done()` says stop (and at least `minSamples`
 * times), and returns how long each answer took, less the time the box kept the server off a
 * CPU meanwhile. Every answer must be 200: a stalled or failing server is what these probes find.
 */
export async function healthTimes(h: Harness, done: () => boolean, options: { intervalMs?: number; minSamples?: number } = {}): Promise<number[]> {
  const { intervalMs = 10, minSamples = 3 } = options;
  const times: number[] = [];
  while (!done() || times.length < minSamples) {
    const start = performance.now();
    const waited = cpuWaitMs();
    const res = await h.call('/healthz');
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
    const waitedSince = cpuWaitMs() - waited;
    times.push(performance.now() - start - waitedSince);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return times;
}

/** An answer to {@link sendExact}: the body parsed as JSON when it is JSON, else its text. */
export interface ExactAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Whatever the server answered: tests read into it freely. */
  readonly body: any;
}

/**
 * One request with exactly the given header lines: node's own Host is suppressed, so a test says
 * every header a hostile client would send (fetch cannot forge Host or send a wrong Accept).
 * `tolerateReset` is for bodies the server may refuse before reading them (it may reset the socket
 * under the client while the answer is already on its way).
 */
export function sendExact(
  port: number,
  init: { readonly method: string; readonly path: string; readonly headers: readonly [string, string][]; readonly body?: string | Buffer; readonly tolerateReset?: boolean },
): Promise<ExactAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: init.method, path: init.path, setHost: false, headers: init.headers.flat() }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not JSON: the text is the answer.
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => (init.tolerateReset && (error.code === 'EPIPE' || error.code === 'ECONNRESET') ? undefined : reject(error)));
    req.end(init.body);
  });
}
