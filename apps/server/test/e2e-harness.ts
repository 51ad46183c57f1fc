import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
