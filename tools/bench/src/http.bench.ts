import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
/** The same call in the 2026-07-28 revision: the per-request `_meta` envelope and its standard headers. */
const MODERN_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'calculator',
    arguments: { expression: '2+3*4' },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
const MODERN_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'calculator' };
/** Sequential calls on one connection for the latency percentiles: no queueing, only the work of one call. */
const LATENCY_CALLS = 400;
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

async function waitFor(url: string, child: ChildProcess, seconds = 60, init?: RequestInit): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url, init)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${seconds} s`);
}

/** The median of sequential calls on one keep-alive connection, in milliseconds. */
async function latency(origin: string, path: string, headers: Record<string, string>, check: (body: string) => boolean, body: string): Promise<{ p50: number; errors: number }> {
  const pool = new Pool(origin, { connections: 1, pipelining: 1 });
  const times: number[] = [];
  let errors = 0;
  try {
    for (let i = 0; i < LATENCY_CALLS; i++) {
      const started = process.hrtime.bigint();
      try {
        const res = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body });
        const text = await res.body.text();
        if (res.statusCode === 200 && check(text)) times.push(Number(process.hrtime.bigint() - started) / 1e6);
        else errors += 1;
      } catch {
        errors += 1;
      }
    }
  } finally {
    await pool.close();
  }
  times.sort((a, b) => a - b);
  return { p50: times.length > 0 ? times[Math.floor(times.length / 2)]! : Number.NaN, errors };
}

/** Clock ticks per second of /proc's CPU times (Linux), or NaN where that cannot be read. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    return Number.NaN;
  }
})();

/**
 * CPU time a process has used so far, in ms (user + system, Linux /proc), or NaN. CPU time per
 * call holds on a shared box where requests per second do not: other work there slows the wall
 * clock, not what one call costs.
 */
function cpuMsOf(child: ChildProcess): number {
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/**
 * Fires requests on `CONNECTIONS` keep-alive connections for `SECONDS`; returns requests/s and,
 * when the serving process is given, its CPU time per answered call in µs.
 */
async function load(
  origin: string,
  path: string,
  headers: Record<string, string>,
  check: (body: string) => boolean,
  body = BODY,
  server?: ChildProcess,
): Promise<{ rps: number; errors: number; cpuUs: number }> {
  const cpuBefore = server ? cpuMsOf(server) : Number.NaN;
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
  const cpuUs = ((server ? cpuMsOf(server) : Number.NaN) - cpuBefore) * 1000 / done;
  await pool.close();
  return { rps: done / elapsed, errors, cpuUs };
}

/**
 * HTTP invoke throughput through tRPC (`POST /trpc/tools.invoke`, the whole gate pipeline with
 * SQLite state and the durable file audit) against a bare `node:http` server answering the same
 * JSON, both as separate processes on this machine, loaded by the same client; then the same call
 * over REST (`POST /api/v1/tools/invoke`) and over MCP (`POST /mcp`, `tools/call`), measured in the
 * same run so their ratio is not the machine's mood.
 *
 * MCP is also measured against a bare MCP server (`bare-mcp-server.ts`: the calculator behind the
 * same SDK's `createMcpHandler` on node:http, no gateway), in both eras: throughput under the same
 * load, and the median latency of sequential calls on one connection. Toolgate's median minus the
 * bare one's, from the same run, is the latency Toolgate adds over a bare server.
 */
export async function bench(): Promise<BenchLine[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'toolgate-bench-http-'));
  const [gatewayPort, barePort, bareMcpPort] = [await freePort(), await freePort(), await freePort()];
  const answer = JSON.stringify({ result: { data: { ok: true, callId: '00000000-0000-0000-0000-000000000000', output: { result: 14 } } } });
  const bare = spawn(
    process.execPath,
    ['-e', `require('node:http').createServer((q,s)=>{q.resume();q.on('end',()=>{s.writeHead(200,{'content-type':'application/json'});s.end(${JSON.stringify(answer)})})}).listen(${barePort},'127.0.0.1')`],
    { stdio: 'ignore' },
  );
  const bareMcp = spawn(process.execPath, ['--import', 'tsx', 'tools/bench/src/bare-mcp-server.ts', String(bareMcpPort)], { cwd: ROOT, stdio: 'ignore' });
  const gateway = spawn(process.execPath, ['--import', 'tsx', 'apps/server/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, TOOLGATE_PORT: String(gatewayPort), TOOLGATE_DATA_DIR: dataDir },
    stdio: 'ignore',
  });
  try {
    await waitFor(`http://127.0.0.1:${gatewayPort}/healthz`, gateway);
    await waitFor(`http://127.0.0.1:${bareMcpPort}/mcp`, bareMcp, 60, { method: 'POST', headers: { 'content-type': 'application/json', ...MCP_HEADERS }, body: MCP_BODY });
    await new Promise((r) => setTimeout(r, 300));
    const ok = (text: string) => text.includes('"result":14');
    const origin = `http://127.0.0.1:${gatewayPort}`;
    const bareMcpOrigin = `http://127.0.0.1:${bareMcpPort}`;
    const auth = { authorization: 'Bearer demo' };
    const legacy = { ...auth, ...MCP_HEADERS };
    const modern = { ...auth, ...MODERN_HEADERS };
    // Warm each up, then measure each once; alternating order would not help on 2 cores.
    await load(`http://127.0.0.1:${barePort}`, '/', {}, ok);
    await load(origin, '/trpc/tools.invoke', auth, ok);
    const bareResult = await load(`http://127.0.0.1:${barePort}`, '/', {}, ok);
    const gatewayResult = await load(origin, '/trpc/tools.invoke', auth, ok);
    await load(origin, '/api/v1/tools/invoke', auth, ok);
    const restResult = await load(origin, '/api/v1/tools/invoke', auth, ok, BODY, gateway);
    await load(origin, '/mcp', legacy, ok, MCP_BODY);
    const mcpResult = await load(origin, '/mcp', legacy, ok, MCP_BODY, gateway);
    await load(bareMcpOrigin, '/mcp', MCP_HEADERS, ok, MCP_BODY);
    const bareMcpResult = await load(bareMcpOrigin, '/mcp', MCP_HEADERS, ok, MCP_BODY, bareMcp);
    const modernResult = await load(origin, '/mcp', modern, ok, MODERN_BODY, gateway);
    const bareModernResult = await load(bareMcpOrigin, '/mcp', MODERN_HEADERS, ok, MODERN_BODY, bareMcp);
    // Latency pairs back to back, the bare server first, so both medians see the same machine.
    const bareLegacyLatency = await latency(bareMcpOrigin, '/mcp', MCP_HEADERS, ok, MCP_BODY);
    const legacyLatency = await latency(origin, '/mcp', legacy, ok, MCP_BODY);
    const bareModernLatency = await latency(bareMcpOrigin, '/mcp', MODERN_HEADERS, ok, MODERN_BODY);
    const modernLatency = await latency(origin, '/mcp', modern, ok, MODERN_BODY);
    const restLatency = await latency(origin, '/api/v1/tools/invoke', auth, ok, BODY);
    const ratio = gatewayResult.rps / bareResult.rps;
    const mcpToRest = mcpResult.rps / restResult.rps;
    const modernToRest = modernResult.rps / restResult.rps;
    const rps = (r: { rps: number; errors: number; cpuUs: number }) =>
      `${r.rps.toFixed(0)} req/s (${r.errors} errors)${Number.isFinite(r.cpuUs) ? `, ${r.cpuUs.toFixed(0)} µs CPU per call` : ''}`;
    const ms = (r: { p50: number; errors: number }) => `p50 ${r.p50.toFixed(3)} ms (${r.errors} errors)`;
    return [
      `load: ${CONNECTIONS} keep-alive connections for ${SECONDS} s each, client in this process; latency: ${LATENCY_CALLS} sequential calls on one connection`,
      `bare node:http, same JSON answer:      ${rps(bareResult)}`,
      `toolgate tools.invoke over tRPC:       ${rps(gatewayResult)}`,
      `toolgate tools/invoke over REST:       ${rps(restResult)}`,
      `toolgate tools/call over MCP (/mcp):   ${rps(mcpResult)}  [2025-06-18]`,
      `bare SDK MCP server, same tool:        ${rps(bareMcpResult)}  [2025-06-18]`,
      `toolgate tools/call over MCP (/mcp):   ${rps(modernResult)}  [2026-07-28]`,
      `bare SDK MCP server, same tool:        ${rps(bareModernResult)}  [2026-07-28]`,
      `latency REST:                          ${ms(restLatency)}`,
      `latency toolgate MCP / bare SDK MCP:   ${ms(legacyLatency)} / ${ms(bareLegacyLatency)}  [2025-06-18]`,
      `latency toolgate MCP / bare SDK MCP:   ${ms(modernLatency)} / ${ms(bareModernLatency)}  [2026-07-28]`,
      `latency MCP over REST (the face's own share, same gateway work): ${(legacyLatency.p50 - restLatency.p50).toFixed(3)} ms [2025-06-18], ${(modernLatency.p50 - restLatency.p50).toFixed(3)} ms [2026-07-28]`,
      `CPU per call, MCP / REST: ${(mcpResult.cpuUs / restResult.cpuUs).toFixed(2)} [2025-06-18], ${(modernResult.cpuUs / restResult.cpuUs).toFixed(2)} [2026-07-28]; bare SDK MCP / REST: ${(bareMcpResult.cpuUs / restResult.cpuUs).toFixed(2)} [2025-06-18], ${(bareModernResult.cpuUs / restResult.cpuUs).toFixed(2)} [2026-07-28]`,
      `ratio toolgate / bare: ${ratio.toFixed(2)}; each call is audited twice with fdatasync (group commit)`,
      `ratio bare SDK MCP / REST: ${(bareMcpResult.rps / restResult.rps).toFixed(2)} [2025-06-18], ${(bareModernResult.rps / restResult.rps).toFixed(2)} [2026-07-28]: the SDK alone, with no gateway, against Toolgate's REST`,
      target('toolgate / bare node:http throughput', ratio, '>=', 0.5),
      target('MCP / REST invoke throughput [2025-06-18]', mcpToRest, '>=', 1.0),
      target('MCP / REST invoke throughput [2026-07-28]', modernToRest, '>=', 1.0),
      target('MCP p50 added over a bare SDK server [2025-06-18]', legacyLatency.p50 - bareLegacyLatency.p50, '<', 1, ' ms', 3),
      target('MCP p50 added over a bare SDK server [2026-07-28]', modernLatency.p50 - bareModernLatency.p50, '<', 1, ' ms', 3),
    ];
  } finally {
    bare.kill('SIGKILL');
    bareMcp.kill('SIGKILL');
    gateway.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    if (gateway.exitCode === null) gateway.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
}
