import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { healthMs, serveBesideHealthz } from '../../test/slow-reader-server.js';
import { writeWebResponse } from './web-response.js';

const STALL_MS = 300;
/** More than loopback's socket buffers on both ends hold (about 4 MB here), so a client that stops reading stalls the writer. */
const BEYOND_BUFFERS = 24 * 1024 * 1024;

/** A server beside `/healthz` that answers every other request with the web `Response` the test makes, through `writeWebResponse`. */
const serve = (answer: () => Response) => serveBesideHealthz((_req, res) => void writeWebResponse(res, answer(), { 'x-extra': 'yes' }, STALL_MS));

/** A raw client that sends one GET and then reads `readBytes` at most before it stops reading. */
function stoppingClient(port: number, readBytes: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('GET /answer HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      let read = 0;
      if (readBytes === 0) socket.pause();
      socket.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= readBytes) socket.pause();
      });
      resolve(socket);
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

/** An event stream that never ends, counting what it produced and whether it was cancelled. */
function endlessEvents(): { response: Response; state: { produced: number; cancelled: boolean } } {
  const state = { produced: 0, cancelled: false };
  const event = new TextEncoder().encode(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { pad: 'p'.repeat(60_000) } })}\n\n`);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      state.produced += event.length;
      controller.enqueue(event);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { response: new Response(body, { headers: { 'content-type': 'text/event-stream' } }), state };
}

/**
 * Times `/healthz` on the same server `count` times while something else is going on, less the
 * time the box kept this thread off a CPU (server and client share it here).
 */
async function healthWhile(port: number, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    times.push(await healthMs(port));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return times;
}

/** One `/healthz` before a test's probes, so they time the server, not the client's first connection. */
async function warm(port: number): Promise<void> {
  await (await fetch(`http://127.0.0.1:${port}/healthz`)).text();
}

let open: { server: Server; sockets: Socket[] } | undefined;
afterEach(async () => {
  for (const socket of open?.sockets ?? []) socket.destroy();
  await new Promise((resolve) => open?.server.close(resolve) ?? resolve(undefined));
  open = undefined;
});

describe('slow readers: a client that stops reading cannot hold a response forever', () => {
  const spellings: [string, number][] = [
    ['never reads a byte', 0],
    ['reads the headers and a little, then stops', 100 * 1024],
    ['reads several megabytes, then stops', 6 * 1024 * 1024],
  ];

  for (const [name, readBytes] of spellings) {
    it(`an endless event stream to a client that ${name} is destroyed and its body cancelled, and /healthz keeps answering`, async () => {
      const streams: ReturnType<typeof endlessEvents>[] = [];
      const { server, port, served } = await serve(() => {
        const stream = endlessEvents();
        streams.push(stream);
        return stream.response;
      });
      open = { server, sockets: [] };
      await warm(port);
      const socket = await stoppingClient(port, readBytes);
      open.sockets.push(socket);
      const health = healthWhile(port, 4);
      await expect.poll(() => served.length).toBe(1);
      const closed = await served[0]!.closed;
      expect(closed.finished).toBe(false);
      // The bound, not forever: the stall is seen once the buffers are full, then STALL_MS later the response goes.
      expect(closed.afterMs).toBeGreaterThanOrEqual(STALL_MS);
      expect(closed.afterMs).toBeLessThan(STALL_MS + 5_000);
      await expect.poll(() => streams[0]!.state.cancelled).toBe(true);
      const produced = streams[0]!.state.produced;
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Nothing is pulled from a cancelled body: the SDK's stream is released, not drained into memory.
      expect(streams[0]!.state.produced).toBe(produced);
      expect(Math.max(...(await health))).toBeLessThan(100);
    });
  }

  it('a JSON answer larger than the socket buffers, to a client that never reads, is destroyed within the bound', async () => {
    // Encoded here, not in the server's turn: what is timed is the writer holding a stalled
    // answer, not how long turning 24 MB of text into bytes takes (the SDK's cost, at a size no
    // capped tool output reaches).
    const big = new TextEncoder().encode(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text: 'j'.repeat(BEYOND_BUFFERS) } }));
    const { server, port, served } = await serve(() => new Response(big, { headers: { 'content-type': 'application/json' } }));
    open = { server, sockets: [] };
    await warm(port);
    const socket = await stoppingClient(port, 0);
    open.sockets.push(socket);
    const health = healthWhile(port, 4);
    await expect.poll(() => served.length).toBe(1);
    const closed = await served[0]!.closed;
    expect(closed.finished).toBe(false);
    expect(closed.afterMs).toBeLessThan(STALL_MS + 5_000);
    expect(Math.max(...(await health))).toBeLessThan(100);
  });

  it('a slow but steady reader is never cut off: each write that drains resets the bound', async () => {
    const total = 12 * 1024 * 1024;
    const chunk = new Uint8Array(256 * 1024).fill(115);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const { server, port, served } = await serve(() => new Response(body, { headers: { 'content-type': 'text/event-stream' } }));
    const received = await new Promise<number>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /answer HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'));
      open = { server, sockets: [socket] };
      let bytes = 0;
      // About 5 MB/s: far slower than the writer, never idle for anything near the bound.
      const tick = setInterval(() => {
        socket.resume();
        setTimeout(() => socket.pause(), 5);
      }, 50);
      socket.on('data', (data: Buffer) => (bytes += data.length));
      socket.on('end', () => {
        clearInterval(tick);
        resolve(bytes);
      });
      socket.on('error', reject);
    });
    expect(received).toBeGreaterThan(total);
    expect((await served[0]!.closed).finished).toBe(true);
  });
});

describe('whole bodies go out in one piece', () => {
  it('a small JSON answer carries its exact length, the extra headers and the body unchanged', async () => {
    const text = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'é — ok' }] } });
    const { server, port } = await serve(() => new Response(text, { status: 200, headers: { 'content-type': 'application/json' } }));
    open = { server, sockets: [] };
    const res = await fetch(`http://127.0.0.1:${port}/answer`);
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(res.headers.get('x-extra')).toBe('yes');
    expect(await res.text()).toBe(text);
  });

  it('a body-less answer (202) is ended at once', async () => {
    const { server, port } = await serve(() => new Response(null, { status: 202 }));
    open = { server, sockets: [] };
    const res = await fetch(`http://127.0.0.1:${port}/answer`);
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });

  it('a JSON answer larger than one slice arrives whole to a reader that reads', async () => {
    const text = JSON.stringify({ result: 'r'.repeat(3 * 1024 * 1024 + 17) });
    const { server, port } = await serve(() => new Response(text, { headers: { 'content-type': 'application/json; charset=utf-8' } }));
    open = { server, sockets: [] };
    const res = await fetch(`http://127.0.0.1:${port}/answer`);
    expect(await res.text()).toBe(text);
  });
});
