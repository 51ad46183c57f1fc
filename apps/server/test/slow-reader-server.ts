import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { threadSchedule } from '@toolgate/testing';
import { expect } from 'vitest';

/** What the server saw of one answered request: its response, when it closed after the request began, and whether it was complete. */
export interface Served {
  readonly res: ServerResponse;
  readonly closed: Promise<{ readonly afterMs: number; readonly finished: boolean }>;
}

/**
 * A real node:http server on a loopback port that answers `/healthz` at once and hands every
 * other request to `answer`, recording each of those, so a slow-reader test can hold one answer
 * and time `/healthz` beside it.
 */
export async function serveBesideHealthz(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; port: number; served: Served[] }> {
  const served: Served[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
      return;
    }
    const started = performance.now();
    served.push({ res, closed: new Promise((resolve) => res.once('close', () => resolve({ afterMs: performance.now() - started, finished: res.writableFinished }))) });
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, served };
}

/** One `/healthz` on the server, less the time the box kept this thread (server and client share it) off a CPU. */
export async function healthMs(port: number): Promise<number> {
  const started = performance.now();
  const waited = threadSchedule().waitedMs;
  const res = await fetch(`http://127.0.0.1:${port}/healthz`);
  expect(res.status).toBe(200);
  await res.text();
  return performance.now() - started - (threadSchedule().waitedMs - waited);
}
