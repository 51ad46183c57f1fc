import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GuardedHttpClient } from '@toolgate/adapter-net-guard';
import { Agent, request, type Dispatcher } from 'undici';
import { target, type BenchLine } from './targets.js';

const WARMUP = 300;
const REQUESTS = 3_000;
const TARGET_RATIO = 1.2;
const BODY = Buffer.alloc(1024, 0x61);

type Variant = { readonly name: string; readonly run: () => Promise<void> };

/**
 * The guarded client's overhead per request against plain undici `request` to the same
 * 127.0.0.1 server, both with keep-alive pools: URL and header checks, address classification,
 * the capped body reader and the deadline timer. Variants run interleaved request by request so
 * machine noise hits all of them alike. Target: guarded ≤ 1.2× plain (mean and p50).
 */
export async function bench(): Promise<BenchLine[]> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(BODY.length) }).end(BODY);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/bench`;

  const plainAgent = new Agent({ keepAliveTimeout: 10_000 });
  const dispatchAgent = new Agent({ keepAliveTimeout: 10_000 });
  const guardedLiteral = new GuardedHttpClient({ allowedCidrs: ['127.0.0.0/8'] });
  const guardedNamed = new GuardedHttpClient({
    allowedCidrs: ['127.0.0.0/8'],
    resolver: async () => [{ address: '127.0.0.1', family: 4 }],
  });

  const variants: Variant[] = [
    {
      name: 'plain undici request',
      run: async () => {
        const res = await request(url, { dispatcher: plainAgent });
        const bytes = await res.body.arrayBuffer();
        if (res.statusCode !== 200 || bytes.byteLength !== BODY.length) throw new Error('plain request failed');
      },
    },
    {
      // The guard reads bodies on undici's dispatch API; this is that path with no guard at all.
      name: 'plain undici dispatch',
      run: async () => {
        const { status, size } = await dispatchGet(dispatchAgent, `http://127.0.0.1:${port}`, '/bench');
        if (status !== 200 || size !== BODY.length) throw new Error('plain dispatch failed');
      },
    },
    {
      name: 'guarded (IP literal)',
      run: async () => {
        const res = await guardedLiteral.request({ url });
        if (res.status !== 200 || res.body.length !== BODY.length) throw new Error('guarded request failed');
      },
    },
    {
      name: 'guarded (host name)',
      run: async () => {
        const res = await guardedNamed.request({ url: `http://bench.example:${port}/bench` });
        if (res.status !== 200 || res.body.length !== BODY.length) throw new Error('guarded request failed');
      },
    },
  ];

  try {
    // Sanity first: without an opened range the guard must refuse this very server.
    const unguardedPath = await new GuardedHttpClient().request({ url }).then(
      () => 'reached',
      (err: Error) => err.name,
    );
    if (unguardedPath !== 'EgressDenied') throw new Error(`the guard did not refuse loopback (${unguardedPath}); the bench would be meaningless`);

    for (const variant of variants) for (let i = 0; i < WARMUP; i++) await variant.run();

    // Interleave request by request, rotating the order, so load from anything else on the
    // machine lands on every variant alike.
    const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    for (let i = 0; i < REQUESTS; i++) {
      for (let k = 0; k < variants.length; k++) {
        const variant = variants[(i + k) % variants.length]!;
        const started = process.hrtime.bigint();
        await variant.run();
        samples.get(variant.name)!.push(Number(process.hrtime.bigint() - started) / 1e3);
      }
    }

    const stats = variants.map((v) => ({ name: v.name, ...summarise(samples.get(v.name)!) }));
    const base = stats[0]!;
    const lines: BenchLine[] = [`net-guard: ${REQUESTS} sequential GETs of ${BODY.length} B per variant to 127.0.0.1 (keep-alive, interleaved), after ${WARMUP} warm-up`];
    for (const s of stats) {
      lines.push(
        `  ${s.name.padEnd(22)} p50 ${s.p50.toFixed(1).padStart(7)} µs   mean ${s.mean.toFixed(1).padStart(7)} µs   p99 ${s.p99.toFixed(1).padStart(7)} µs` +
          (s === base ? '' : `   vs request: p50 ${(s.p50 / base.p50).toFixed(2)}× mean ${(s.mean / base.mean).toFixed(2)}×`),
      );
    }
    const guardedStats = stats.filter((s) => s.name.startsWith('guarded'));
    const worst = Math.max(...guardedStats.map((s) => Math.max(s.mean / base.mean, s.p50 / base.p50)));
    lines.push(target('guarded vs plain request, worst ratio', worst, '<=', TARGET_RATIO, '×'));
    const raw = stats[1]!;
    const guardCost = Math.max(...guardedStats.map((s) => s.p50 / raw.p50));
    lines.push(`  the guard's own cost over the same dispatch path: p50 ${guardCost.toFixed(2)}×`);
    return lines;
  } finally {
    await Promise.all([plainAgent.close(), dispatchAgent.close(), guardedLiteral.close(), guardedNamed.close()]);
    server.closeAllConnections();
    server.close();
  }
}

/** A GET on undici's dispatch API that counts the body bytes: the guard's transport path, unguarded. */
function dispatchGet(agent: Agent, origin: string, path: string): Promise<{ status: number; size: number }> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let size = 0;
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: () => {}, // undici treats a handler without it as the legacy kind
      onResponseStart: (_controller, statusCode) => {
        status = statusCode;
      },
      onResponseData: (_controller, chunk) => {
        size += chunk.length;
      },
      onResponseEnd: () => resolve({ status, size }),
      onResponseError: (_controller, err) => reject(err),
    };
    agent.dispatch({ origin, path, method: 'GET' }, handler);
  });
}

function summarise(micros: number[]): { p50: number; p99: number; mean: number } {
  const sorted = [...micros].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99), mean: sorted.reduce((sum, v) => sum + v, 0) / sorted.length };
}
