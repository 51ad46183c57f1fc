import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import zlib from 'node:zlib';
import { EgressDeniedError, ToolAbortedError, ToolError } from '@toolgate/contracts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GuardedHttpClient, type ResolvedAddress } from '../src/index.js';
import { startLocalServer, type LocalServer } from './local-server.js';

const LOOPBACK = ['127.0.0.0/8'];
const MiB = 1024 * 1024;

/** A resolver seam that answers from a fixed table and counts its calls. */
function scriptedResolver(table: Record<string, ResolvedAddress[] | (() => ResolvedAddress[])>) {
  const calls: string[] = [];
  const resolver = async (host: string) => {
    calls.push(host);
    const entry = table[host];
    if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return typeof entry === 'function' ? entry() : entry;
  };
  return { resolver, calls };
}
const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

function canDial(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

async function rejection(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error('expected the request to be refused, but it succeeded');
}

describe('GuardedHttpClient', () => {
  let server: LocalServer;
  const clients: GuardedHttpClient[] = [];
  const client = (options: ConstructorParameters<typeof GuardedHttpClient>[0] = {}) => {
    const c = new GuardedHttpClient(options);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    server = await startLocalServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/redirect') {
        res.writeHead(302, { location: '/target' }).end('moved');
      } else if (path === '/close') {
        res.writeHead(200, { connection: 'close', 'content-type': 'text/plain' }).end('closing');
      } else if (path === '/cookies') {
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.setHeader('x-multi', ['one', 'two']);
        res.writeHead(200, { 'X-Upper': 'Yes' }).end('ok');
      } else if (path === '/exact') {
        res.end(Buffer.alloc(1000, 0x61));
      } else if (path === '/gzip') {
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' });
        res.end(zlib.gzipSync('hello, compressed world'));
      } else if (path === '/gzip-bomb') {
        // 64 MiB of zeros compress to about 64 KiB.
        res.writeHead(200, { 'content-encoding': 'gzip' });
        res.end(zlib.gzipSync(Buffer.alloc(64 * MiB)));
      } else if (path === '/bad-gzip') {
        res.writeHead(200, { 'content-encoding': 'gzip' }).end('this is not gzip at all');
      } else if (path === '/cut') {
        res.writeHead(200, { 'content-length': '1000' });
        res.write('only part of it');
        setTimeout(() => res.socket?.destroy(), 20);
      } else if (path === '/echo') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, headers: req.headers }));
      } else {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`hello from ${path}`);
      }
    });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => server.close());

  describe('addresses', () => {
    it('blocks a loopback server by default and reaches it once 127.0.0.0/8 is opened', async () => {
      const before = server.requests.length;
      const err = await rejection(client().request({ url: `${server.origin}/x` }));
      expect(err).toBeInstanceOf(EgressDeniedError);
      expect(err.message).toBe("egress to '127.0.0.1' refused: is a loopback address");
      expect(server.requests.length).toBe(before);

      const res = await client({ allowedCidrs: LOOPBACK }).request({ url: `${server.origin}/x` });
      expect(res.status).toBe(200);
      expect(Buffer.from(res.body).toString()).toBe('hello from /x');
      expect(res.truncated).toBe(false);
      expect(res.url).toBe(`${server.origin}/x`);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    });

    const loopbackSpellings = ['127.1', '0x7f000001', '2130706433', '0177.0.0.1', '0x7f.1', '127.0.1', '127.0.0.1.'];
    it.each(loopbackSpellings)('classifies the IPv4 spelling %s as the loopback address it is', async (spelling) => {
      const url = `http://${spelling}:${server.port}/spelled`;
      const err = await rejection(client().request({ url }));
      expect(err).toBeInstanceOf(EgressDeniedError);
      expect(err.message).toMatch(/is a loopback address/);
      // Opened, the same spelling reaches the server: it really is 127.0.0.1.
      const res = await client({ allowedCidrs: LOOPBACK }).request({ url });
      expect(Buffer.from(res.body).toString()).toBe('hello from /spelled');
    });

    it.each(['[::ffff:127.0.0.1]', '[::ffff:7f00:1]'])('classifies the IPv4-mapped literal %s as loopback', async (literal) => {
      const url = `http://${literal}:${server.port}/mapped`;
      const err = await rejection(client().request({ url }));
      expect(err.message).toMatch(/a loopback address embedded in an IPv4-mapped IPv6 address/);
      // Reaching it needs IPv6 sockets, which some containers lack; the refusal above does not.
      if (!(await canDial('::ffff:127.0.0.1', server.port))) return;
      const res = await client({ allowedCidrs: LOOPBACK }).request({ url });
      expect(Buffer.from(res.body).toString()).toBe('hello from /mapped');
    });

    it.each([
      ['[64:ff9b::7f00:1]', /a loopback address embedded in a NAT64 address/],
      ['[2002:7f00:1::]', /a loopback address embedded in a 6to4 address/],
      ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', /a loopback address embedded in a Teredo address/],
      ['[::1]', /is a loopback address/],
      ['0.0.0.0', /is an unspecified address/],
      ['[::]', /is an unspecified address/],
      ['10.0.0.1', /is a private address/],
      ['172.16.5.4', /is a private address/],
      ['192.168.0.1', /is a private address/],
      ['100.64.0.1', /is a carrier-grade NAT address/],
      ['169.254.169.254', /is a link-local address/],
      ['[fe80::1]', /is a link-local address/],
      ['[fd00::1]', /is a unique-local address/],
      ['224.0.0.1', /is a multicast address/],
      ['[ff02::1]', /is a multicast address/],
      ['255.255.255.255', /is a broadcast address/],
      ['240.0.0.1', /is a reserved address/],
      ['192.0.2.1', /is a documentation address/],
      ['198.18.0.1', /is a benchmarking address/],
      ['[::ffff:169.254.169.254]', /link-local address .*embedded in an IPv4-mapped/],
    ])('refuses the literal %s before connecting, even with loopback opened', async (literal, reason) => {
      const err = await rejection(client({ allowedCidrs: LOOPBACK }).request({ url: `http://${literal}:${server.port}/` }));
      expect(err).toBeInstanceOf(EgressDeniedError);
      expect(err.reason).toBe('EGRESS_DENIED');
      expect(err.message).toMatch(reason);
    });

    it('refuses host names that resolve to non-public addresses, without naming the address', async () => {
      const { resolver } = scriptedResolver({
        'intranet.example': [v4('10.0.0.5')],
        'metadata.example': [v4('169.254.169.254')],
        'ula.example': [v6('fd00::1')],
        'mapped.example': [v6('::ffff:10.0.0.1')],
        'cgnat.example': [v4('100.64.3.2')],
      });
      const c = client({ resolver, allowedCidrs: LOOPBACK });
      const cases: Array<[string, RegExp]> = [
        ['intranet.example', /^egress to 'intranet\.example' refused: resolves to a private address$/],
        ['metadata.example', /resolves to a link-local address \(this includes cloud metadata endpoints\)/],
        ['ula.example', /resolves to a unique-local address/],
        ['mapped.example', /resolves to a private address embedded in an IPv4-mapped IPv6 address/],
        ['cgnat.example', /resolves to a carrier-grade NAT address/],
      ];
      for (const [host, message] of cases) {
        const err = await rejection(c.request({ url: `http://${host}:${server.port}/` }));
        expect(err, host).toBeInstanceOf(EgressDeniedError);
        expect(err.message, host).toMatch(message);
        expect(err.message).not.toMatch(/10\.0\.0|169\.254|fd00|100\.64/);
      }
    });

    it('refuses a mixed answer whole, even when its first address is public', async () => {
      const { resolver, calls } = scriptedResolver({ 'mixed.example': [v4('93.184.215.14'), v4('127.0.0.1')] });
      const before = server.requests.length;
      const err = await rejection(client({ resolver }).request({ url: `http://mixed.example:${server.port}/` }));
      expect(err.message).toBe("egress to 'mixed.example' refused: resolves to a loopback address (one of its 2 addresses)");
      expect(calls).toEqual(['mixed.example']);
      expect(server.requests.length).toBe(before);
    });

    it('reaches a host name that resolves into an opened range, sending the name as Host', async () => {
      const { resolver } = scriptedResolver({ 'local.example': [v4('127.0.0.1')] });
      const denied = await rejection(client({ resolver }).request({ url: `http://local.example:${server.port}/` }));
      expect(denied.message).toMatch(/resolves to a loopback address/);

      const res = await client({ resolver, allowedCidrs: LOOPBACK }).request({ url: `http://local.example:${server.port}/named` });
      expect(Buffer.from(res.body).toString()).toBe('hello from /named');
      expect(server.requests.at(-1)?.headers.host).toBe(`local.example:${server.port}`);
    });

    it('checks the system resolver answer too: localhost is loopback', async () => {
      const err = await rejection(client().request({ url: `http://localhost:${server.port}/` }));
      expect(err.message).toMatch(/^egress to 'localhost' refused: resolves to a loopback address/);
    });

    it('defeats DNS rebinding: the socket dials the answer that was checked, and each new answer is checked', async () => {
      // The first answer is allowed (only 127.0.0.1 is opened); every later answer points at
      // 127.0.0.2, a loopback address that stays closed. A client that checked one answer and
      // let the socket resolve again would dial 127.0.0.2 and fail to reach the server.
      let answers = 0;
      const { resolver, calls } = scriptedResolver({
        'rebind.example': () => (answers++ === 0 ? [v4('127.0.0.1')] : [v4('127.0.0.2')]),
      });
      const c = client({ resolver, allowedCidrs: ['127.0.0.1/32'] });
      // `/close` makes the server drop the connection, so the next request needs a new one.
      const first = await c.request({ url: `http://rebind.example:${server.port}/close` });
      expect(Buffer.from(first.body).toString()).toBe('closing');
      expect(calls).toEqual(['rebind.example']);

      const err = await rejection(c.request({ url: `http://rebind.example:${server.port}/close` }));
      expect(err).toBeInstanceOf(EgressDeniedError);
      expect(err.message).toMatch(/resolves to a loopback address/);
      expect(calls).toEqual(['rebind.example', 'rebind.example']);
    });

    it('reports DNS failures as tool errors', async () => {
      const { resolver } = scriptedResolver({ 'empty.example': [] });
      const c = client({ resolver });
      const missing = await rejection(c.request({ url: 'http://nowhere.example/' }));
      expect(missing).not.toBeInstanceOf(EgressDeniedError);
      expect(missing.message).toBe("could not resolve host 'nowhere.example'");
      expect(missing.reason).toBe('DNS_FAILED');
      const empty = await rejection(c.request({ url: 'http://empty.example/' }));
      expect(empty.reason).toBe('DNS_FAILED');
    });
  });

  describe('URLs', () => {
    it.each([
      ['ftp://example.com/file.txt', /only http: and https: URLs are allowed, not ftp:/],
      ['file:///etc/passwd', /only http: and https: URLs are allowed, not file:/],
      ['gopher://example.com/', /not gopher:/],
      ['javascript:alert(1)', /not javascript:/],
      ['data:text/plain,hi', /not data:/],
    ])('refuses %s', async (url, message) => {
      const err = await rejection(client({ allowedCidrs: LOOPBACK }).request({ url }));
      expect(err).toBeInstanceOf(EgressDeniedError);
      expect(err.message).toMatch(message);
    });

    it('refuses credentials in the URL without echoing them', async () => {
      for (const url of [`http://user:s3cret@127.0.0.1:${server.port}/`, `http://s3cret@127.0.0.1:${server.port}/`]) {
        const err = await rejection(client({ allowedCidrs: LOOPBACK }).request({ url }));
        expect(err).toBeInstanceOf(EgressDeniedError);
        expect(err.message).toBe("egress to '127.0.0.1' refused: URLs with credentials (user:password@host) are not allowed");
        expect(err.message).not.toContain('s3cret');
      }
    });

    it('refuses what is not a URL, quoting it only when it cannot hold credentials', async () => {
      const err = await rejection(client().request({ url: 'not a url' }));
      expect(err.reason).toBe('INVALID_URL');
      expect(err.message).toBe("'not a url' is not a valid absolute http(s) URL");
      const secret = await rejection(client().request({ url: 'http://us:pw@[bad' }));
      expect(secret.message).toBe('the URL is not a valid absolute http(s) URL');
    });
  });

  describe('responses', () => {
    it('returns redirects as they are and never follows them', async () => {
      const before = server.requests.filter((r) => r.url === '/target').length;
      const res = await client({ allowedCidrs: LOOPBACK }).request({ url: `${server.origin}/redirect` });
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe('/target');
      expect(Buffer.from(res.body).toString()).toBe('moved');
      expect(server.requests.filter((r) => r.url === '/target').length).toBe(before);
    });

    it('lower-cases header names and joins repeated headers', async () => {
      const res = await client({ allowedCidrs: LOOPBACK }).request({ url: `${server.origin}/cookies` });
      expect(res.headers['x-upper']).toBe('Yes');
      expect(res.headers['x-multi']).toBe('one, two');
      expect(res.headers['set-cookie']).toBe('a=1, b=2');
    });

    it('sends its user agent and the caller headers, and refuses headers it owns or cannot send safely', async () => {
      const c = client({ allowedCidrs: LOOPBACK, userAgent: 'ToolgateTest/1' });
      const res = await c.request({ url: `${server.origin}/echo`, headers: { Accept: 'application/json', 'X-Trace': 'abc' } });
      const echoed = JSON.parse(Buffer.from(res.body).toString()) as { headers: Record<string, string> };
      expect(echoed.headers['user-agent']).toBe('ToolgateTest/1');
      expect(echoed.headers['accept']).toBe('application/json');
      expect(echoed.headers['x-trace']).toBe('abc');

      const host = await rejection(c.request({ url: `${server.origin}/echo`, headers: { Host: 'evil.example' } }));
      expect(host.message).toBe("the 'host' header is set by the client itself");
      const injected = await rejection(c.request({ url: `${server.origin}/echo`, headers: { 'x-a': 'b\r\nx-evil: 1' } }));
      expect(injected.reason).toBe('INVALID_REQUEST');
      const badName = await rejection(c.request({ url: `${server.origin}/echo`, headers: { 'bad name': 'x' } }));
      expect(badName.message).toMatch(/is not a valid header name/);
    });

    it('sends POST bodies, answers HEAD without a body, and refuses a GET body', async () => {
      const c = client({ allowedCidrs: LOOPBACK });
      await c.request({ url: `${server.origin}/post`, method: 'POST', body: '{"q":1}', headers: { 'content-type': 'application/json' } });
      expect(server.requests.at(-1)).toMatchObject({ method: 'POST', url: '/post', body: '{"q":1}' });
      const head = await c.request({ url: `${server.origin}/head`, method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      const err = await rejection(c.request({ url: `${server.origin}/`, body: 'x' }));
      expect(err.message).toBe('a GET request cannot carry a body');
    });

    it('decodes gzip, caps a decompression bomb, and reports a corrupt encoding', async () => {
      const c = client({ allowedCidrs: LOOPBACK });
      const res = await c.request({ url: `${server.origin}/gzip` });
      expect(Buffer.from(res.body).toString()).toBe('hello, compressed world');
      expect(res.headers['content-encoding']).toBeUndefined();

      const bomb = await c.request({ url: `${server.origin}/gzip-bomb`, maxBytes: MiB });
      expect(bomb.body.length).toBe(MiB);
      expect(bomb.truncated).toBe(true);

      const bad = await rejection(c.request({ url: `${server.origin}/bad-gzip` }));
      expect(bad.message).toBe(`the response body from '127.0.0.1:${server.port}' could not be decoded (gzip)`);
    });

    it('is not truncated when the body is exactly the cap', async () => {
      const c = client({ allowedCidrs: LOOPBACK });
      const exact = await c.request({ url: `${server.origin}/exact`, maxBytes: 1000 });
      expect(exact).toMatchObject({ truncated: false });
      expect(exact.body.length).toBe(1000);
      const over = await c.request({ url: `${server.origin}/exact`, maxBytes: 999 });
      expect(over).toMatchObject({ truncated: true });
      expect(over.body.length).toBe(999);
    });

    it('reports refused and broken connections without internal details', async () => {
      const closed = await startLocalServer((_req, res) => res.end());
      const port = closed.port;
      await closed.close();
      const refused = await rejection(client({ allowedCidrs: LOOPBACK }).request({ url: `http://127.0.0.1:${port}/` }));
      expect(refused.message).toBe(`connection to '127.0.0.1:${port}' was refused`);
      expect(refused.reason).toBe('CONNECTION_REFUSED');

      const cut = await rejection(client({ allowedCidrs: LOOPBACK }).request({ url: `${server.origin}/cut` }));
      expect(cut.message).toBe(`the connection to '127.0.0.1:${server.port}' closed before the response was complete`);
    });
  });

  describe('TLS', () => {
    it('checks the address of an https host too, and reports a rejected certificate plainly', async () => {
      const pem = readFileSync(new URL('./fixtures/tls-example.pem', import.meta.url), 'utf8');
      const tls = https.createServer({ cert: pem, key: pem }, (_req, res) => res.end('secret'));
      tls.listen(0, '127.0.0.1');
      await once(tls, 'listening');
      const port = (tls.address() as { port: number }).port;
      try {
        const { resolver, calls } = scriptedResolver({ 'tls.example': [v4('127.0.0.1')] });
        const url = `https://tls.example:${port}/`;
        const denied = await rejection(client({ resolver }).request({ url }));
        expect(denied).toBeInstanceOf(EgressDeniedError);
        expect(calls).toEqual(['tls.example']);

        // Opened, the connection reaches the TLS handshake, where the self-signed certificate fails.
        const rejected = await rejection(client({ resolver, allowedCidrs: LOOPBACK }).request({ url }));
        expect(rejected.message).toBe(`the TLS certificate of 'tls.example:${port}' was rejected (DEPTH_ZERO_SELF_SIGNED_CERT)`);
        expect(rejected.reason).toBe('TLS_FAILED');
      } finally {
        tls.closeAllConnections();
        tls.close();
      }
    });
  });

  describe('limits', () => {
    let stream: LocalServer;
    let written = 0;
    let closedEarly: Promise<unknown>;

    beforeAll(async () => {
      stream = await startLocalServer((req, res) => {
        if (req.url === '/stall-after-headers') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('a first chunk, then nothing');
          return; // never ends
        }
        if (req.url === '/stall-before-headers') return; // never answers
        // 100 MB, written with back-pressure so the server holds nothing the client did not ask for.
        const chunk = Buffer.alloc(64 * 1024, 0x78);
        const total = 100 * 1000 * 1000;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
        closedEarly = once(res, 'close');
        const pump = () => {
          while (written < total && !res.destroyed) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end();
        };
        pump();
      });
    });
    afterAll(async () => stream.close());

    it('caps a 100 MB body at 1 MiB, stops reading and keeps memory bounded', async () => {
      const c = client({ allowedCidrs: LOOPBACK });
      const memoryBefore = process.memoryUsage();
      const started = performance.now();
      const res = await c.request({ url: `${stream.origin}/big` });
      const elapsed = performance.now() - started;
      const memoryAfter = process.memoryUsage();

      expect(res.body.length).toBe(MiB);
      expect(res.truncated).toBe(true);
      expect(elapsed).toBeLessThan(3_000);
      await closedEarly; // the server saw the client hang up
      // The server could only write what the socket buffers took: nowhere near 100 MB.
      expect(written).toBeLessThan(24 * MiB);
      const growth =
        memoryAfter.heapUsed + memoryAfter.arrayBuffers - (memoryBefore.heapUsed + memoryBefore.arrayBuffers);
      expect(growth).toBeLessThan(32 * MiB);
    });

    it('fires the time limit when the server stalls after the headers', async () => {
      const started = performance.now();
      const err = await rejection(client({ allowedCidrs: LOOPBACK }).request({ url: `${stream.origin}/stall-after-headers`, timeoutMs: 300 }));
      expect(err.message).toBe(`request to '127.0.0.1:${stream.port}' timed out after 300 ms`);
      expect(err.reason).toBe('TIMEOUT');
      expect(performance.now() - started).toBeLessThan(2_000);
    });

    it('fires the time limit when the server never answers', async () => {
      const err = await rejection(client({ allowedCidrs: LOOPBACK, defaultTimeoutMs: 250 }).request({ url: `${stream.origin}/stall-before-headers` }));
      expect(err.reason).toBe('TIMEOUT');
    });

    it('stops when the caller aborts', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = performance.now();
      const err = await rejection(
        client({ allowedCidrs: LOOPBACK }).request({ url: `${stream.origin}/stall-after-headers`, signal: controller.signal }),
      );
      expect(err).toBeInstanceOf(ToolAbortedError);
      expect(performance.now() - started).toBeLessThan(2_000);
      const already = await rejection(client({ allowedCidrs: LOOPBACK }).request({ url: stream.origin, signal: AbortSignal.abort() }));
      expect(already).toBeInstanceOf(ToolAbortedError);
    });

    it('validates its own limits', async () => {
      const c = client({ allowedCidrs: LOOPBACK });
      expect((await rejection(c.request({ url: server.origin, timeoutMs: 0 }))).message).toBe('timeoutMs must be a positive integer');
      expect((await rejection(c.request({ url: server.origin, maxBytes: -1 }))).message).toBe('maxBytes must be a non-negative integer');
      expect(() => new GuardedHttpClient({ allowedCidrs: ['10.0.0.0/40'] })).toThrow(/invalid CIDR '10\.0\.0\.0\/40'/);
    });
  });
});
