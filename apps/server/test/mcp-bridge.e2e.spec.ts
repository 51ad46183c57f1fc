import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectMcp, startHarness, type Harness } from './e2e-harness.js';

// Response bodies are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

const CLI = resolve(__dirname, '../../cli/bin/toolgate.mjs');
const ALICE = 'alice-token-mcp-bridge-0123456789abcdef';
const PETE = 'pete-token-mcp-bridge-0123456789abcdef';
/** Reads the tenant's whole audit trail (operators see every principal's records). */
const OLGA = 'olga-token-mcp-bridge-0123456789abcdef';
/** More tools than one `tools/list` page (100), so the bridge must carry cursors. */
const PADDING_TOOLS = 120;

/**
 * An upstream MCP server (newline-delimited JSON-RPC over stdio): `wait` never answers and, when
 * cancelled, writes the cancelled request id to STOPPED_FLAG (the slow tool a cancellation must
 * reach); `pad_NNN` make the catalog longer than one page.
 */
const UPSTREAM_SERVER = String.raw`
import { createInterface } from 'node:readline';
import { writeFileSync } from 'node:fs';
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
const pads = Array.from({ length: Number(process.env.PADDING) }, (_, i) => ({ name: 'pad_' + String(i).padStart(3, '0'), description: 'Padding.', inputSchema: { type: 'object', properties: {} } }));
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'slow', version: '1.0.0' } } });
  else if (m.method === 'tools/list') send({ id: m.id, result: { tools: [{ name: 'wait', description: 'Waits until cancelled.', inputSchema: { type: 'object', properties: {} } }, ...pads] } });
  else if (m.method === 'tools/call') { /* never answers */ }
  else if (m.method === 'notifications/cancelled') writeFileSync(process.env.STOPPED_FLAG, String(m.params.requestId));
  else if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: 'no such method' } });
});
`;

type Era = 'legacy (initialize)' | 'modern (server/discover)';
const ERAS: Era[] = ['legacy (initialize)', 'modern (server/discover)'];

/** Every line a bridge wrote to stderr in this file, so no test can miss a leaked token. */
const allStderr: string[] = [];

interface Bridged {
  readonly client: Client;
  readonly stderr: () => string;
  close(): Promise<void>;
}

/** Launches `toolgate mcp` as a desktop client would, with the SDK's own stdio client. */
async function bridge(url: string, token: string, era: Era = 'legacy (initialize)'): Promise<Bridged> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--url', url],
    // The token by environment, as a desktop client's config "env" passes it, off the command line.
    env: { PATH: process.env['PATH'] ?? '', TOOLGATE_TOKEN: token },
    stderr: 'pipe',
  });
  const lines: string[] = [];
  (transport.stderr as Readable).on('data', (chunk: Buffer) => {
    lines.push(chunk.toString('utf8'));
    allStderr.push(chunk.toString('utf8'));
  });
  const client = new Client({ name: 'e2e-desktop', version: '1.0.0' }, era === 'modern (server/discover)' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  await client.connect(transport);
  return { client, stderr: () => lines.join(''), close: () => client.close() };
}

/**
 * The same principal straight at `/mcp` in the revision the bridge itself speaks upstream
 * (2026-07-28, which it negotiates with this server), to compare what the bridge passes on with
 * what the server says.
 */
async function direct(h: Harness, token: string): Promise<Client> {
  const client = new Client({ name: 'e2e-direct', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await connectMcp(h, token, client);
  return client;
}

interface Exited {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `toolgate mcp` with stdin closed at once and waits for it to exit. */
function runToExit(args: string[], env: Record<string, string> = {}, stdin = ''): Promise<Exited> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      allStderr.push(c.toString('utf8'));
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`toolgate ${args.join(' ')} did not exit; stderr: ${stderr}`));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
}

/** A bridge on raw pipes, for input no SDK client would send. */
class RawBridge {
  readonly child: ChildProcessWithoutNullStreams;
  readonly #lines: any[] = [];
  #buffer = '';
  #stderr = '';
  readonly exited: Promise<number | null>;

  constructor(url: string, token: string) {
    this.child = spawn(process.execPath, [CLI, 'mcp', '--url', url], { env: { PATH: process.env['PATH'] ?? '', TOOLGATE_TOKEN: token } });
    this.child.stdout.on('data', (c: Buffer) => {
      this.#buffer += c.toString('utf8');
      for (let i = this.#buffer.indexOf('\n'); i !== -1; i = this.#buffer.indexOf('\n')) {
        this.#lines.push(JSON.parse(this.#buffer.slice(0, i)));
        this.#buffer = this.#buffer.slice(i + 1);
      }
    });
    this.child.stderr.on('data', (c: Buffer) => {
      this.#stderr += c.toString('utf8');
      allStderr.push(c.toString('utf8'));
    });
    this.exited = new Promise((r) => this.child.on('exit', r));
  }

  get stderr(): string {
    return this.#stderr;
  }

  write(data: string | Buffer): void {
    this.child.stdin.write(data);
  }

  /** The next message on stdout (everything the bridge writes there must be one JSON-RPC message a line). */
  async next(): Promise<any> {
    await expect.poll(() => this.#lines.length, { timeout: 15_000 }).toBeGreaterThan(0);
    return this.#lines.shift();
  }
}

describe('toolgate mcp: the stdio bridge against a running server', { timeout: 120_000 }, () => {
  let h: Harness;
  let base: string;
  const stoppedFlag = () => join(base, 'stopped.flag');

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'toolgate-mcp-bridge-'));
    await writeFile(join(base, 'upstream-server.mjs'), UPSTREAM_SERVER);
    h = await startHarness(
      {},
      {
        // risk "low": the operator's trust, so `wait` runs without an approval.
        mcpServers: {
          servers: [
            { name: 'slow', command: process.execPath, args: [join(base, 'upstream-server.mjs')], env: { STOPPED_FLAG: stoppedFlag(), PADDING: String(PADDING_TOOLS) }, tier: 'unisolated', risk: 'low' },
          ],
        },
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'pete', token: PETE, tenant: 'acme', roles: ['planner'] },
            { id: 'olga', token: OLGA, tenant: 'acme', roles: ['operator'] },
          ],
          roles: { worker: ['*'], planner: ['calculator', 'read_file'], operator: [] },
          tenants: { acme: { tools: ['*'], grants: [{ type: 'exec', scope: 'mcp:slow' }, { type: 'filesystem', scope: 'workspace' }] } },
        },
      },
    );
    // Discovery of the upstream server runs after the start; wait until its tools are listed.
    const upstreamTools = async () => ((await h.call('/api/v1/tools', { token: ALICE })).body.tools as any[]).filter((t) => t.name.startsWith('slow__')).length;
    for (let i = 0; i < 300 && (await upstreamTools()) < PADDING_TOOLS + 1; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await upstreamTools()).toBe(PADDING_TOOLS + 1);
  });
  afterAll(async () => {
    await h?.stop();
    await rm(base, { recursive: true, force: true });
  });

  const audit = async (): Promise<any[]> => (await h.call('/api/v1/audit?limit=1000', { token: OLGA })).body;

  for (const era of ERAS) {
    describe(`a desktop client speaking the ${era} era`, () => {
      it('advertises what the server advertises: its capabilities, identity and instructions', async () => {
        const [b, d] = await Promise.all([bridge(h.server.url, ALICE, era), direct(h, ALICE)]);
        expect(b.client.getServerCapabilities()).toEqual(d.getServerCapabilities());
        expect(b.client.getServerVersion()).toMatchObject({ name: 'toolgate', version: d.getServerVersion()?.version });
        expect(b.client.getInstructions()).toBe(d.getInstructions());
        await Promise.all([b.close(), d.close()]);
      });

      it('lists page by page what /mcp lists that principal, cursors carried both ways', async () => {
        const [b, d] = await Promise.all([bridge(h.server.url, ALICE, era), direct(h, ALICE)]);
        const walk = async (client: Client) => {
          const pages: any[] = [];
          let cursor: string | undefined;
          do {
            // One page per request: the SDK's listTools() without a cursor would walk them all.
            const page: any = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } });
            pages.push(page);
            cursor = page.nextCursor;
          } while (cursor !== undefined && pages.length < 10);
          return pages;
        };
        const [viaBridge, straight] = await Promise.all([walk(b.client), walk(d)]);
        expect(viaBridge.length).toBeGreaterThan(1);
        expect(viaBridge.map((p) => ({ tools: p.tools, nextCursor: p.nextCursor }))).toEqual(straight.map((p) => ({ tools: p.tools, nextCursor: p.nextCursor })));
        const rest = ((await h.call('/api/v1/tools', { token: ALICE })).body.tools as any[]).map((t) => t.name).sort();
        expect(viaBridge.flatMap((p) => p.tools.map((t: any) => t.name)).sort()).toEqual(rest);
        await Promise.all([b.close(), d.close()]);
      });

      it("passes the server's error for a cursor it never issued, unchanged", async () => {
        const [b, d] = await Promise.all([bridge(h.server.url, ALICE, era), direct(h, ALICE)]);
        for (const cursor of ['not-a-cursor!', 'eyJhZnRlciI6MX0', 'x'.repeat(600)]) {
          const [viaBridge, straight] = await Promise.all([
            b.client.listTools({ cursor }).then(() => undefined, (e: any) => ({ code: e.code, message: e.message })),
            d.listTools({ cursor }).then(() => undefined, (e: any) => ({ code: e.code, message: e.message })),
          ]);
          expect(straight).toMatchObject({ code: -32602 });
          expect(viaBridge).toEqual(straight);
        }
        await Promise.all([b.close(), d.close()]);
      });

      it('calls calculator through the gates and returns the result as the server gave it', async () => {
        const b = await bridge(h.server.url, ALICE, era);
        const result: any = await b.client.callTool({ name: 'calculator', arguments: { expression: '2+3*4' } });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toEqual({ result: 14 });
        expect(result.content).toEqual([{ type: 'text', text: '{"result":14}' }]);
        const records = (await audit()).filter((r) => r.tool === 'calculator' && r.principal === 'alice');
        expect(records.slice(-2).map((r) => r.event)).toEqual(['authorized', 'succeeded']);
        await b.close();
      });

      it("passes a denial on as the server's tool error: a planner is refused slow__wait and sees no bash", async () => {
        const [b, d] = await Promise.all([bridge(h.server.url, PETE, era), direct(h, PETE)]);
        const viaBridge: any = await b.client.callTool({ name: 'slow__wait', arguments: {} });
        const straight: any = await d.callTool({ name: 'slow__wait', arguments: {} });
        expect(viaBridge.isError).toBe(true);
        expect(viaBridge.structuredContent).toMatchObject({ ok: false, denial: { gate: 'allow', code: 'TOOL_NOT_ALLOWED' } });
        // Each call has its own id; everything else is the server's answer, byte for byte.
        const withoutCallId = (r: any) => JSON.parse(JSON.stringify(r).replaceAll(r.structuredContent.callId, '<call>'));
        expect(withoutCallId(viaBridge)).toEqual(withoutCallId(straight));
        expect((await b.client.listTools()).tools.map((t) => t.name).sort()).toEqual(['calculator', 'read_file']);
        await Promise.all([b.close(), d.close()]);
      });

      it("cancels a running call when the client cancels: the server's tool is told to stop and the audit closes the call", async () => {
        await rm(stoppedFlag(), { force: true });
        const b = await bridge(h.server.url, ALICE, era);
        const before = (await audit()).length;
        const controller = new AbortController();
        const call = b.client.callTool({ name: 'slow__wait', arguments: {} }, { signal: controller.signal }).catch((e: unknown) => e);
        await expect.poll(async () => (await audit()).slice(before).map((r) => r.event), { timeout: 15_000 }).toEqual(['authorized']);
        controller.abort();
        expect(await call).toBeInstanceOf(Error);
        await expect.poll(() => existsSync(stoppedFlag()), { timeout: 15_000 }).toBe(true);
        await expect.poll(async () => (await audit()).slice(before).map((r) => r.event), { timeout: 15_000 }).toEqual(['authorized', 'denied']);
        expect((await audit()).at(-1)).toMatchObject({ tool: 'slow__wait', gate: 'execute', code: 'EXECUTION_FAILED' });
        // The bridge is still serving after the cancellation.
        expect(((await b.client.callTool({ name: 'calculator', arguments: { expression: '1+1' } })) as any).structuredContent).toEqual({ result: 2 });
        await b.close();
      });

      it('answers a method it does not forward with method-not-found, and keeps serving', async () => {
        const b = await bridge(h.server.url, ALICE, era);
        for (const method of ['resources/list', 'prompts/list', 'toolgate/approve', 'completion/complete']) {
          await expect(b.client.request({ method, params: {} }, z.object({}))).rejects.toMatchObject({ code: -32601 });
        }
        expect((await b.client.listTools()).tools.length).toBeGreaterThan(0);
        await b.close();
      });
    });
  }

  it('answers ping by asking the server (2025 era, where ping exists)', async () => {
    const b = await bridge(h.server.url, ALICE);
    await expect(b.client.ping()).resolves.toEqual({});
    await b.close();
  });

  it('exits 0 when the desktop client closes stdin', async () => {
    const exited = await runToExit(['mcp', '--url', h.server.url], { TOOLGATE_TOKEN: ALICE });
    expect(exited).toMatchObject({ code: 0, stdout: '' });
  });

  describe('token sources', () => {
    it('reads the token from --token-file, so it need not sit in the client config', async () => {
      const file = join(base, 'token');
      await writeFile(file, `${ALICE}\n`, { mode: 0o600 });
      const exited = await runToExit(['mcp', '--url', h.server.url, '--token-file', file]);
      expect(exited.code).toBe(0);
      expect(exited.stderr).toMatch(/forwarding stdio to http:\/\/127\.0\.0\.1:\d+\/mcp/);
    });

    it('refuses a missing, empty, unreadable or doubled token source with exit 2 before any request', async () => {
      const empty = join(base, 'empty-token');
      await writeFile(empty, '\n');
      const cases: [string[], RegExp][] = [
        [['mcp', '--url', h.server.url], /no token: pass --token, --token-file or set TOOLGATE_TOKEN/],
        [['mcp', '--url', h.server.url, '--token-file', empty], /is empty/],
        [['mcp', '--url', h.server.url, '--token-file', join(base, 'no-such-file')], /cannot read --token-file .*ENOENT/],
        [['--token', ALICE, 'mcp', '--url', h.server.url, '--token-file', empty], /either --token or --token-file/],
        [['mcp', '--url', 'ftp://127.0.0.1/', '--token', ALICE], /must be http:\/\/ or https:\/\//],
        [['mcp', '--url', 'not a url', '--token', ALICE], /--url is not a URL/],
        [['mcp', '--url', `http://user:${ALICE}@127.0.0.1:1/`, '--token', ALICE], /must not carry credentials/],
      ];
      for (const [args, message] of cases) {
        const exited = await runToExit(args);
        expect(exited.code, args.join(' ')).toBe(2);
        expect(exited.stderr).toMatch(message);
        expect(exited.stdout).toBe('');
      }
    });
  });

  describe('start faults', () => {
    it('says the server refused the token and exits 1, for a wrong or revoked token', async () => {
      for (const token of ['wrong-token-0123456789', `${ALICE}x`, 'Bearer demo']) {
        const exited = await runToExit(['mcp', '--url', h.server.url], { TOOLGATE_TOKEN: token });
        expect(exited.code).toBe(1);
        expect(exited.stderr).toMatch(/the server at 127\.0\.0\.1:\d+ refused the token/);
        expect(exited.stderr).not.toContain(token);
        expect(exited.stdout).toBe('');
      }
    });

    it('names the host it cannot reach and exits 1, never the token', async () => {
      const closed = await new Promise<number>((r) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const { port } = s.address() as AddressInfo;
          s.close(() => r(port));
        });
      });
      const exited = await runToExit(['mcp', '--url', `http://127.0.0.1:${closed}`, '--token', ALICE]);
      expect(exited.code).toBe(1);
      expect(exited.stderr).toContain(`cannot reach the Toolgate server at 127.0.0.1:${closed}`);
      expect(exited.stderr).not.toContain(ALICE);
      expect(exited.stdout).toBe('');
    });

    it('fails the start against something that is not a Toolgate MCP server', async () => {
      const other = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('nothing here'));
      await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
      const { port } = other.address() as AddressInfo;
      const exited = await runToExit(['mcp', '--url', `http://127.0.0.1:${port}`, '--token', ALICE]);
      await new Promise<void>((r) => other.close(() => r()));
      expect(exited.code).toBe(1);
      expect(exited.stderr).toContain(`127.0.0.1:${port}`);
      expect(exited.stderr).not.toContain(ALICE);
    });
  });

  describe('token confinement', () => {
    let catcher: Server;
    let redirector: Server;
    const caught: IncomingHttpHeaders[] = [];
    beforeAll(async () => {
      catcher = createServer((req, res) => {
        caught.push(req.headers);
        res.writeHead(404).end();
      });
      await new Promise<void>((r) => catcher.listen(0, '127.0.0.1', r));
      const target = `http://127.0.0.1:${(catcher.address() as AddressInfo).port}/mcp`;
      // A server (or a proxy in front of it) that sends the bridge elsewhere, with each redirect status.
      redirector = createServer((req, res) => {
        const status = [301, 302, 303, 307, 308][Number(req.url?.split('/')[1] ?? 0) % 5] ?? 307;
        res.writeHead(status, { location: target }).end();
      });
      await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    });
    afterAll(async () => {
      await new Promise<void>((r) => catcher.close(() => r()));
      await new Promise<void>((r) => redirector.close(() => r()));
    });

    it('never follows a redirect to another origin with the token', async () => {
      const port = (redirector.address() as AddressInfo).port;
      for (const prefix of ['0', '1', '2', '3', '4']) {
        const exited = await runToExit(['mcp', '--url', `http://127.0.0.1:${port}/${prefix}`, '--token', ALICE]);
        expect(exited.code).toBe(1);
        expect(exited.stderr).not.toContain(ALICE);
      }
      expect(caught.filter((headers) => JSON.stringify(headers).includes(ALICE))).toEqual([]);
    });
  });

  describe('malformed input on stdin', () => {
    const init = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

    it('answers each bad line with the JSON-RPC error the spec names, and keeps serving', async () => {
      const raw = new RawBridge(h.server.url, ALICE);
      try {
        const bad: [string, number, string | number | null][] = [
          ['not json', -32700, null],
          ['{"jsonrpc":"2.0","id":1,"method":"initialize"', -32700, null],
          ['\u0000\u00ff\u00fe', -32700, null],
          ["{'jsonrpc':'2.0'}", -32700, null],
          ['[]', -32600, null],
          [`[${init(2)}]`, -32600, null],
          ['{"foo":1}', -32600, null],
          ['42', -32600, null],
          ['"initialize"', -32600, null],
          ['null', -32600, null],
          ['{"jsonrpc":"1.0","id":7,"method":"initialize"}', -32600, 7],
          ['{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}', -32600, null],
        ];
        for (const [line, code, id] of bad) {
          raw.write(`${line}\n`);
          const answer = await raw.next();
          expect(answer, line).toMatchObject({ jsonrpc: '2.0', id, error: { code } });
        }
        raw.write(`${init(1)}\n`);
        expect(await raw.next()).toMatchObject({ id: 1, result: { serverInfo: { name: 'toolgate' } } });
        raw.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
        raw.write('garbage after the handshake\n');
        expect(await raw.next()).toMatchObject({ id: null, error: { code: -32700 } });
        raw.write('{"jsonrpc":"2.0","id":3,"method":"no/such/method","params":{}}\n');
        expect(await raw.next()).toMatchObject({ id: 3, error: { code: -32601 } });
        // A message split across writes is still one message.
        const list = '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}\n';
        raw.write(list.slice(0, 10));
        raw.write(list.slice(10));
        expect((await raw.next()).result.tools.length).toBeGreaterThan(0);
      } finally {
        raw.child.stdin.end();
      }
      expect(await raw.exited).toBe(0);
      expect(raw.stderr).not.toContain(ALICE);
    });

    it('refuses an oversized line without buffering it, and serves the next', async () => {
      const raw = new RawBridge(h.server.url, ALICE);
      try {
        // 5 MiB in 64 KiB writes: over the 4 MiB line cap.
        const chunk = Buffer.alloc(64 * 1024, 'a');
        for (let i = 0; i < 80; i++) raw.write(chunk);
        raw.write('\n');
        expect(await raw.next()).toMatchObject({ id: null, error: { code: -32600, message: expect.stringMatching(/exceeds the bridge's limit/) } });
        raw.write(`${init(1)}\n`);
        expect(await raw.next()).toMatchObject({ id: 1, result: { serverInfo: { name: 'toolgate' } } });
      } finally {
        raw.child.stdin.end();
      }
      expect(await raw.exited).toBe(0);
    });
  });

  describe('the server going away mid-session', () => {
    it('answers each request with a JSON-RPC error naming the host, stays up, and serves again when the server is back', async () => {
      const own = await startHarness();
      const b = await bridge(own.server.url, 'demo');
      try {
        expect(((await b.client.callTool({ name: 'calculator', arguments: { expression: '1+2' } })) as any).structuredContent).toEqual({ result: 3 });
        const port = own.server.port;
        await own.server.close();
        for (const request of [() => b.client.callTool({ name: 'calculator', arguments: { expression: '1+2' } }), () => b.client.listTools({}), () => b.client.ping()]) {
          await expect(request()).rejects.toMatchObject({ code: -32603, message: expect.stringContaining(`cannot reach the Toolgate server at 127.0.0.1:${port}`) });
        }
        await own.restart();
        expect(own.server.port).toBe(port);
        expect(((await b.client.callTool({ name: 'calculator', arguments: { expression: '2+2' } })) as any).structuredContent).toEqual({ result: 4 });
        // Said once per outage, and its end said too.
        expect(b.stderr().split(`cannot reach the Toolgate server at 127.0.0.1:${port}`)).toHaveLength(2);
        expect(b.stderr()).toContain(`the server at 127.0.0.1:${port} answers again`);
      } finally {
        await b.close();
        await own.stop();
      }
    });
  });

  it('never wrote a token to stderr in any test above', () => {
    const text = allStderr.join('');
    expect(text.length).toBeGreaterThan(0);
    for (const token of [ALICE, PETE, OLGA]) expect(text).not.toContain(token);
  });
});
