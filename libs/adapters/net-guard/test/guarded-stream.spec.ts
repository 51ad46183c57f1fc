import type http from 'node:http';
import { EgressDeniedError, ToolAbortedError, ToolError } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuardedHttpClient, type ResolvedAddress } from '../src/index.js';
import { startLocalServer, type LocalServer } from './local-server.js';

const LOOPBACK = ['127.0.0.0/8'];
const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });

async function refusal(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }
  throw new Error('expected the request to be refused, but it succeeded');
}

describe('GuardedHttpClient.stream', () => {
  let server: LocalServer;
  /** Event-stream responses still open, so a test can end them or see them closed. */
  const open = new Set<http.ServerResponse>();
  let closedStreams = 0;
  const clients: GuardedHttpClient[] = [];
  const client = (options: ConstructorParameters<typeof GuardedHttpClient>[0] = { allowedCidrs: LOOPBACK }) => {
    const c = new GuardedHttpClient(options);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    server = await startLocalServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: one\n\n');
        open.add(res);
        res.on('close', () => {
          open.delete(res);
          closedStreams += 1;
        });
        return;
      }
      if (path.startsWith('/redirect/')) {
        res.writeHead(Number(path.slice('/redirect/'.length)), { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
        return;
      }
      if (path === '/gzip') {
        res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/event-stream' });
        res.end('not really gzip');
        return;
      }
      if (path === '/stall') return; // never answers
      res.writeHead(200, { 'content-type': 'application/json', 'x-method': req.method ?? '' });
      res.end(JSON.stringify({ method: req.method }));
    });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await server.close();
  });

  it('hands over each chunk as it arrives, before the server has ended the body', async () => {
    const response = await client().stream({ url: `${server.origin}/events`, method: 'GET' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream');
    const reader = response.body[Symbol.asyncIterator]();
    expect(Buffer.from((await reader.next()).value as Uint8Array).toString()).toBe('data: one\n\n');
    const [res] = [...open];
    res?.write('data: two\n\n');
    expect(Buffer.from((await reader.next()).value as Uint8Array).toString()).toBe('data: two\n\n');
    const before = closedStreams;
    response.cancel();
    await expect.poll(() => closedStreams).toBe(before + 1);
  });

  it('sends POST bodies and DELETE, asks for an unencoded body, and refuses an encoded one', async () => {
    const c = client();
    const post = await c.stream({ url: `${server.origin}/json`, method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    let text = '';
    for await (const chunk of post.body) text += Buffer.from(chunk).toString();
    expect(JSON.parse(text)).toEqual({ method: 'POST' });
    const seen = server.requests.at(-1);
    expect(seen?.body).toBe('{"a":1}');
    expect(seen?.headers['accept-encoding']).toBe('identity');
    expect((await c.stream({ url: `${server.origin}/json`, method: 'DELETE' })).headers['x-method']).toBe('DELETE');
    expect((await refusal(c.stream({ url: `${server.origin}/gzip`, method: 'GET' }))).message).toBe(
      `the response from '127.0.0.1:${server.port}' is encoded (gzip), though an unencoded one was asked for`,
    );
    expect((await refusal(c.stream({ url: `${server.origin}/json`, method: 'HEAD' as 'GET' }))).message).toBe("HTTP method 'HEAD' is not supported");
    expect((await refusal(c.stream({ url: `${server.origin}/json`, method: 'GET', body: 'x' }))).message).toBe('a GET request cannot carry a body');
  });

  describe('header injection', () => {
    it.each([
      ['authorization', 'Bearer x\r\nHost: evil'],
      ['authorization', 'Bearer x\nX-Evil: 1'],
      ['x-key', 'a\u0000b'],
    ])('refuses %s with a CR, LF or NUL in its value', async (name, value) => {
      const err = await refusal(client().stream({ url: `${server.origin}/json`, method: 'GET', headers: { [name]: value } }));
      expect(err.message).toBe(`the value of header '${name}' contains characters not allowed in HTTP headers`);
      expect(err.message).not.toContain('evil');
    });

    it.each(['host', 'Content-Length', 'transfer-encoding', 'connection'])('refuses the header %s it owns', async (name) => {
      const err = await refusal(client().stream({ url: `${server.origin}/json`, method: 'GET', headers: { [name]: 'x' } }));
      expect(err.message).toBe(`the '${name.toLowerCase()}' header is set by the client itself`);
    });
  });

  describe('SSRF', () => {
    it('refuses loopback unless the operator opened it', async () => {
      const err = await refusal(client({}).stream({ url: `${server.origin}/events`, method: 'GET' }));
      expect(err).toBeInstanceOf(EgressDeniedError);
    });

    it.each([
      ['metadata.example', '169.254.169.254'],
      ['private.example', '10.0.0.7'],
      ['mapped.example', '::ffff:127.0.0.1'],
    ])('refuses a host name %s that resolves to %s, without naming the address', async (host, address) => {
      const resolver = async () => [{ address, family: address.includes(':') ? 6 : 4 }];
      const err = await refusal(client({ resolver }).stream({ url: `http://${host}:${server.port}/events`, method: 'GET' }));
      expect(err).toBeInstanceOf(EgressDeniedError);
      expect(err.message).not.toContain(address);
    });

    it('checks each new connection against a fresh answer (DNS rebinding between two resolutions)', async () => {
      let answers = 0;
      const resolver = async () => (answers++ === 0 ? [v4('127.0.0.1')] : [v4('169.254.169.254')]);
      const c = client({ resolver, allowedCidrs: ['127.0.0.1/32'] });
      const first = await c.stream({ url: `http://rebind.example:${server.port}/events`, method: 'GET' });
      expect(first.status).toBe(200);
      // The first stream holds its connection, so the second request needs a new one and a new answer.
      const err = await refusal(c.stream({ url: `http://rebind.example:${server.port}/events`, method: 'GET' }));
      expect(err).toBeInstanceOf(EgressDeniedError);
      expect(err.message).toMatch(/resolves to a link-local/);
      first.cancel();
    });

    it.each([301, 302, 303, 307, 308])('returns a %i redirect as it is and never follows it', async (status) => {
      const before = server.requests.length;
      const response = await client().stream({ url: `${server.origin}/redirect/${status}`, method: 'POST', body: '{}' });
      expect(response.status).toBe(status);
      expect(response.headers['location']).toBe('http://169.254.169.254/latest/meta-data/');
      response.cancel();
      expect(server.requests.length).toBe(before + 1);
    });
  });

  describe('a stalling server', () => {
    it('gives up on headers that never come after headersTimeoutMs', async () => {
      const started = Date.now();
      const err = await refusal(client().stream({ url: `${server.origin}/stall`, method: 'GET', headersTimeoutMs: 200 }));
      expect(err.message).toBe(`request to '127.0.0.1:${server.port}' timed out after 200 ms`);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('ends a never-ending body when the caller aborts', async () => {
      const controller = new AbortController();
      const response = await client().stream({ url: `${server.origin}/events`, method: 'GET', signal: controller.signal });
      const before = closedStreams;
      const reading = (async () => {
        for await (const chunk of response.body) void chunk;
      })();
      setTimeout(() => controller.abort(), 50);
      await expect(reading).rejects.toBeInstanceOf(ToolAbortedError);
      await expect.poll(() => closedStreams).toBe(before + 1);
    });

    it('refuses to start an already aborted request', async () => {
      const controller = new AbortController();
      controller.abort();
      await expect(client().stream({ url: `${server.origin}/events`, method: 'GET', signal: controller.signal })).rejects.toBeInstanceOf(ToolAbortedError);
    });
  });
});
