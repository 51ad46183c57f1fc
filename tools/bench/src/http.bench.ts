import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { target, type BenchLine } from './targets.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const BODY = JSON.stringify({ tool: 'calculator', version: '1.0.0', args: { expression: '2+3*4' } });
/** The same call as one stateless MCP `tools/call` (a 2025-era request: no session, no initialize). */
const MCP_BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'calculator', arguments: { expression: '2+3*4' } } });
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const CONNECTIONS = 32;
const SECONDS = 4;

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

async function waitFor(url: string, child: ChildProcess, seconds = 60): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${seconds} s`);
}

/** Fires requests on `CONNECTIONS` keep-alive connections for `SECONDS`; returns requests/s. */
async function load(origin: string, path: string, headers: Record<string, string>, check: (body: string) => boolean, body = BODY): Promise<{ rps: number; errors: number }> {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  let done = 0;
  let errors = 0;
  const until = Date.now() + SECONDS * 1000;
  const worker = async () => {
    while (Date.now() < until) {
      try {
        const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body });
        const text = await res.body.text();
        if (res.statusCode === 200 && check(text)) done += 1;
        else errors += 1;
      } catch {
        errors += 1;
      }
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const elapsed = (Date.now() - started) / 1000;
  await pool.close();
  return { rps: done / elapsed, errors };
}

/**
 * HTTP invoke throughput through tRPC (`POST /trpc/tools.invoke`, the whole gate pipeline with
 * SQLite state and the durable file audit) against a bare `node:http` server answering the same
 * JSON, both as separate processes on this machine, loaded by the same client; then the same call
 * over REST (`POST /api/v1/tools/invoke`) and over MCP (`POST /mcp`, `tools/call`), measured in the
 * same run so their ratio is not the machine's mood.
 */
export async function bench(): Promise<BenchLine[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'toolgate-bench-http-'));
  const [gatewayPort, barePort] = [await freePort(), await freePort()];
  const answer = JSON.stringify({ result: { data: { ok: true, callId: '00000000-0000-0000-0000-000000000000', output: { result: 14 } } } });
  const bare = spawn(
    process.execPath,
    ['-e', `require('node:http').createServer((q,s)=>{q.resume();q.on('end',()=>{s.writeHead(200,{'content-type':'application/json'});s.end(${JSON.stringify(answer)})})}).listen(${barePort},'127.0.0.1')`],
    { stdio: 'ignore' },
  );
  const gateway = spawn(process.execPath, ['--import', 'tsx', 'apps/server/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, TOOLGATE_PORT: String(gatewayPort), TOOLGATE_DATA_DIR: dataDir },
    stdio: 'ignore',
  });
  try {
    await waitFor(`http://127.0.0.1:${gatewayPort}/healthz`, gateway);
    await new Promise((r) => setTimeout(r, 300));
    const ok = (text: string) => text.includes('"result":14');
    // Warm both up, then measure each once, alternating order would not help on 2 cores.
    await load(`http://127.0.0.1:${barePort}`, '/', {}, ok);
    await load(`http://127.0.0.1:${gatewayPort}`, '/trpc/tools.invoke', { authorization: 'Bearer demo' }, ok);
    const bareResult = await load(`http://127.0.0.1:${barePort}`, '/', {}, ok);
    const gatewayResult = await load(`http://127.0.0.1:${gatewayPort}`, '/trpc/tools.invoke', { authorization: 'Bearer demo' }, ok);
    const origin = `http://127.0.0.1:${gatewayPort}`;
    const auth = { authorization: 'Bearer demo' };
    await load(origin, '/api/v1/tools/invoke', auth, ok);
    const restResult = await load(origin, '/api/v1/tools/invoke', auth, ok);
    await load(origin, '/mcp', { ...auth, ...MCP_HEADERS }, ok, MCP_BODY);
    const mcpResult = await load(origin, '/mcp', { ...auth, ...MCP_HEADERS }, ok, MCP_BODY);
    const ratio = gatewayResult.rps / bareResult.rps;
    const mcpToRest = mcpResult.rps / restResult.rps;
    return [
      `load: ${CONNECTIONS} keep-alive connections for ${SECONDS} s each, client in this process`,
      `bare node:http, same JSON answer:      ${bareResult.rps.toFixed(0)} req/s (${bareResult.errors} errors)`,
      `toolgate tools.invoke over tRPC:       ${gatewayResult.rps.toFixed(0)} req/s (${gatewayResult.errors} errors)`,
      `toolgate tools/invoke over REST:       ${restResult.rps.toFixed(0)} req/s (${restResult.errors} errors)`,
      `toolgate tools/call over MCP (/mcp):   ${mcpResult.rps.toFixed(0)} req/s (${mcpResult.errors} errors)`,
      `ratio toolgate / bare: ${ratio.toFixed(2)}; each call is audited twice with fdatasync (group commit)`,
      target('toolgate / bare node:http throughput', ratio, '>=', 0.5),
      target('MCP / REST invoke throughput', mcpToRest, '>=', 1.0),
    ];
  } finally {
    bare.kill('SIGKILL');
    gateway.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    if (gateway.exitCode === null) gateway.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
}
