import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

function io(env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { env, out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) }, out, err };
}

describe('toolgate CLI without a server', () => {
  it('exits 2 with a specific message for a malformed --args', async () => {
    const { io: sink, err } = io();
    expect(await runCli(['tools', 'invoke', 'calculator', '--args', '[1,2]'], sink)).toBe(2);
    expect(err.join('')).toMatch(/--args must be a JSON object/);
  });

  it('exits 2 for a malformed --grant', async () => {
    const { io: sink, err } = io();
    expect(await runCli(['tools', 'invoke', 'http_fetch', '--grant', 'network'], sink)).toBe(2);
    expect(err.join('')).toMatch(/--grant takes type:scope/);
  });

  it.each(['gemini', 'OpenAI', '', 'openai,mcp'])('exits 2 for `tools list --format %s`, naming the accepted formats, before any request', async (format) => {
    const { io: sink, err, out } = io({ TOOLGATE_URL: 'http://127.0.0.1:9' });
    expect(await runCli(['tools', 'list', '--format', format], sink)).toBe(2);
    expect(err.join('')).toContain('Allowed choices are openai, anthropic, mcp, toolgate');
    // Refused by the CLI itself: it did not try the (unreachable) server.
    expect(err.join('')).not.toMatch(/cannot reach/);
    expect(out).toEqual([]);
  });

  it('exits 2 for `tools accept` without --digest, before any request: the operator names the definition they reviewed', async () => {
    const { io: sink, err, out } = io({ TOOLGATE_URL: 'http://127.0.0.1:9' });
    expect(await runCli(['tools', 'accept', 'files__read'], sink)).toBe(2);
    expect(err.join('')).toMatch(/required option '--digest <sha256:…>' not specified/);
    expect(err.join('')).not.toMatch(/cannot reach/);
    expect(out).toEqual([]);
    expect(await runCli(['tools', 'accept', '--digest', `sha256:${'a'.repeat(64)}`], sink)).toBe(2);
    expect(err.join('')).toMatch(/missing required argument 'tool'/);
  });

  it('exits 2 for an unknown command, with help', async () => {
    const { io: sink, err } = io();
    expect(await runCli(['frobnicate'], sink)).toBe(2);
    expect(err.join('')).toMatch(/unknown command 'frobnicate'/);
  });

  it('never prints the token from TOOLGATE_TOKEN in --help', async () => {
    const { io: sink, out } = io({ TOOLGATE_TOKEN: 'secret-token-0123456789' });
    expect(await runCli(['--help'], sink)).toBe(0);
    expect(out.join('')).toContain('--token <token>');
    expect(out.join('')).not.toContain('secret-token-0123456789');
  });

  it('says clearly when the server cannot be reached', async () => {
    const { io: sink, err } = io({ TOOLGATE_URL: 'http://127.0.0.1:9' });
    expect(await runCli(['tools', 'list'], sink)).toBe(1);
    expect(err.join('')).toMatch(/cannot reach the server at http:\/\/127\.0\.0\.1:9/);
  });

  it('lists `mcp` in --help and never prints the token from TOOLGATE_TOKEN in `mcp --help`', async () => {
    const { io: sink, out } = io({ TOOLGATE_TOKEN: 'secret-token-0123456789' });
    expect(await runCli(['--help'], sink)).toBe(0);
    expect(out.join('')).toMatch(/^\s+mcp\b/m);
    expect(await runCli(['mcp', '--help'], sink)).toBe(0);
    expect(out.join('')).toContain('--token-file <file>');
    expect(out.join('')).not.toContain('secret-token-0123456789');
  });

  it('exits 2 for `mcp` without a process stdio to speak on, or without a token', async () => {
    const noStdio = io({ TOOLGATE_TOKEN: 'tok' });
    expect(await runCli(['mcp'], noStdio.io)).toBe(2);
    expect(noStdio.err.join('')).toMatch(/needs the process stdio/);
    const noToken = io();
    expect(await runCli(['mcp'], { ...noToken.io, stdio: { stdin: new PassThrough(), stdout: new PassThrough() } })).toBe(2);
    expect(noToken.err.join('')).toMatch(/no token: pass --token, --token-file or set TOOLGATE_TOKEN/);
    expect(noToken.out).toEqual([]);
  });

  it('reports a missing audit directory offline, exit 1', async () => {
    const { io: sink, out } = io();
    expect(await runCli(['audit', 'verify', '--dir', '/nonexistent/toolgate-audit'], sink)).toBe(1);
    expect(out.join('')).toMatch(/no audit directory/);
  });
});

describe('toolgate CLI sends the token and parses tRPC answers', () => {
  let server: Server;
  let url: string;
  const seen: { auth?: string; path?: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ ...(req.headers.authorization ? { auth: req.headers.authorization } : {}), ...(req.url ? { path: req.url } : {}) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: { data: { ok: true, version: '0.1.0', reasons: [] } } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('calls health with the bearer token from TOOLGATE_TOKEN', async () => {
    const { io: sink, out } = io({ TOOLGATE_URL: url, TOOLGATE_TOKEN: 'tok-123' });
    expect(await runCli(['health'], sink)).toBe(0);
    expect(out.join('')).toBe('ok (version 0.1.0)\n');
    expect(seen.at(-1)).toEqual({ auth: 'Bearer tok-123', path: '/trpc/health' });
  });
});
