import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable, sendExact, startHarness, timedLessCpuWait, type ExactAnswer, type Harness } from './e2e-harness.js';

// Response bodies are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */
/** One request with exactly the given header lines, by GET unless told otherwise. */
const send = (port: number, init: { method?: string; path: string; headers: [string, string][]; body?: string }) => sendExact(port, { method: 'GET', ...init });

/** Raw bytes on a socket, for what node's client cannot send (HTTP/1.0 without Host). */
function sendRaw(port: number, text: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    const chunks: Buffer[] = [];
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const response = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = response.split('\r\n\r\n', 2);
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        /* not JSON: keep the text */
      }
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), body: parsed });
    });
  });
}

const hasBwrap = (await bwrapUnavailable('host-origin e2e')) === undefined;

const BASH_GRANTS = [
  { type: 'exec', scope: '*' },
  { type: 'filesystem', scope: 'workspace' },
];
/** The issue's scenario: a rebound page runs bash as the dev principal and approves it itself. */
const ISSUE_CALL = JSON.stringify({ tool: 'bash', args: { command: 'id > rebound.txt' }, grants: BASH_GRANTS, approved: true });

/** Every route family and the fallback: GET and POST, tRPC and REST, a path no route serves. */
const ROUTES = [
  { method: 'GET', path: '/trpc/tools.list' },
  { method: 'POST', path: '/trpc/tools.invoke', body: ISSUE_CALL },
  { method: 'GET', path: '/api/v1/tools' },
  { method: 'POST', path: '/api/v1/tools/invoke', body: ISSUE_CALL },
  { method: 'GET', path: '/no/such/route' },
] as const;

const noCorsHeaders = (answer: ExactAnswer) => Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'));

describe('HTTP face of the demo server (loopback, dev principal)', () => {
  let h: Harness;
  let port: number;
  let marker: string;
  const auditRecords = async () => {
    const tail = await h.call('/api/v1/audit?limit=1000', { token: 'demo' });
    expect(tail.status).toBe(200);
    return tail.body as { tool?: string; event: string }[];
  };
  const ownHost = (): [string, string] => ['Host', `127.0.0.1:${port}`];
  const withToken = (token: boolean, headers: [string, string][]): [string, string][] =>
    token ? [...headers, ['Authorization', 'Bearer demo'], ['Content-Type', 'application/json']] : [...headers, ['Content-Type', 'application/json']];

  beforeAll(async () => {
    h = await startHarness();
    port = h.server.port;
    marker = join(h.dataDir, 'data', 'workspaces', 'default', 'rebound.txt');
  });
  afterAll(async () => h?.stop());

  describe('DNS rebinding (Host)', () => {
    const notAllowed = () => [
      'evil.example',
      `evil.example:${port}`,
      `localhost.evil.example:${port}`,
      `127.0.0.1.nip.io:${port}`,
      `2130706433:${port}`,
      `0x7f000001:${port}`,
      `0177.0.0.1:${port}`,
      `127.1:${port}`,
      `127.0.0.01:${port}`,
      `localhost.:${port}`,
      `[0:0:0:0:0:0:0:1]:${port}`,
      `[::ffff:127.0.0.1]:${port}`,
      `0.0.0.0:${port}`,
    ];
    const malformed = () => [`127.0.0.1:${port}@evil.example`, `127.0.0.1:${port} evil.example`, `127.0.0.1:${port}/x`, `evil.example:${port}:${port}`];

    it('refuses every foreign or non-canonical Host on every route, with and without a token, with 421 HOST_NOT_ALLOWED', async () => {
      const before = await auditRecords();
      for (const host of notAllowed()) {
        for (const route of ROUTES) {
          for (const token of [true, false]) {
            const answer = await send(port, { ...route, headers: withToken(token, [['Host', host]]) });
            const where = `${route.method} ${route.path} Host ${host} token ${token}`;
            expect(answer.status, where).toBe(421);
            expect(answer.body.error.code, where).toBe('HOST_NOT_ALLOWED');
            expect(answer.body.error.message, where).toMatch(/TOOLGATE_ALLOWED_HOSTS|canonical/);
            expect(answer.headers['connection'], where).toBe('close');
            expect(noCorsHeaders(answer), where).toEqual([]);
          }
        }
      }
      // Nothing reached the gateway: not one record, and bash never ran.
      expect(await auditRecords()).toEqual(before);
      expect(existsSync(marker)).toBe(false);
    });

    it('refuses a Host that is not host[:port] with 400 BAD_HOST_HEADER, echoing at most a bounded piece', async () => {
      for (const host of [...malformed(), `${'a.'.repeat(2000)}evil.example`]) {
        for (const route of ROUTES) {
          const answer = await send(port, { ...route, headers: withToken(true, [['Host', host]]) });
          expect(answer.status, host).toBe(host.length > 1000 ? 421 : 400);
          expect(answer.body.error.code, host).toBe(host.length > 1000 ? 'HOST_NOT_ALLOWED' : 'BAD_HOST_HEADER');
          expect(answer.body.error.message.length, host).toBeLessThan(300);
        }
      }
    });

    it('serves the loopback names in any letter case and [::1]', async () => {
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `LocalHost`, `[::1]:${port}`, `127.8.9.10:${port}`, '127.0.0.1']) {
        const answer = await send(port, { path: '/api/v1/tools', headers: withToken(true, [['Host', host]]) });
        expect(answer.status, host).toBe(200);
        expect(answer.body.tools.length, host).toBeGreaterThan(0);
      }
    });

    it('refuses two Host headers, whichever comes first', async () => {
      for (const hosts of [
        [`127.0.0.1:${port}`, 'evil.example'],
        ['evil.example', `127.0.0.1:${port}`],
        [`127.0.0.1:${port}`, `127.0.0.1:${port}`],
      ]) {
        const answer = await send(port, { path: '/api/v1/tools', headers: withToken(true, hosts.map((host): [string, string] => ['Host', host])) });
        expect(answer.status).toBe(400);
        expect(answer.body.error).toEqual({ code: 'BAD_HOST_HEADER', message: 'the request carries 2 Host headers; send exactly one' });
      }
    });

    it('refuses a request without Host: 421 for HTTP/1.0, 400 for HTTP/1.1', async () => {
      const old = await sendRaw(port, 'POST /api/v1/tools/invoke HTTP/1.0\r\nAuthorization: Bearer demo\r\nContent-Type: application/json\r\n' + `Content-Length: ${ISSUE_CALL.length}\r\n\r\n${ISSUE_CALL}`);
      expect(old.status).toBe(421);
      expect(old.body.error.code).toBe('HOST_NOT_ALLOWED');
      const modern = await send(port, { path: '/api/v1/tools', headers: withToken(true, []) });
      expect(modern.status).toBe(400);
      expect(modern.body.error).toEqual({ code: 'BAD_HOST_HEADER', message: 'an HTTP/1.1 request must carry a Host header' });
    });

    it('checks the authority of an absolute-form target too, and routes on its path', async () => {
      const hostile = [
        'http://evil.example/api/v1/tools',
        `http://evil.example:${port}/trpc/tools.list`,
        `http://2130706433:${port}/api/v1/tools`,
        'http://evil.example/no/such/route',
      ];
      for (const path of hostile) {
        const answer = await send(port, { path, headers: withToken(true, [ownHost()]) });
        expect(answer.status, path).toBe(421);
        expect(answer.body.error.code, path).toBe('HOST_NOT_ALLOWED');
      }
      for (const path of [`http://127.0.0.1:${port}@evil.example/api/v1/tools`, `https://127.0.0.1:${port}/api/v1/tools`, '*']) {
        const answer = await send(port, { method: path === '*' ? 'OPTIONS' : 'GET', path, headers: withToken(true, [ownHost()]) });
        expect(answer.status, path).toBe(400);
        expect(answer.body.error.code, path).toBe('BAD_REQUEST_TARGET');
      }
      const served = await send(port, { path: `http://localhost:${port}/api/v1/tools`, headers: withToken(true, [ownHost()]) });
      expect(served.status).toBe(200);
      // A path that looks like an authority stays a path: no route, not /api/v1/tools on another host.
      const pathOnly = await send(port, { path: '//evil.example/api/v1/tools', headers: withToken(true, [ownHost()]) });
      expect(pathOnly.status).toBe(404);
    });

    it('answers /healthz to any Host, revealing nothing but liveness', async () => {
      const full = await send(port, { path: '/healthz', headers: [ownHost()] });
      expect(full.status).toBe(200);
      expect(full.body).toHaveProperty('version');
      for (const headers of [[['Host', 'evil.example']], [['Host', `2130706433:${port}`]], [ownHost(), ['Origin', 'http://evil.example']], [ownHost(), ['Sec-Fetch-Site', 'cross-site']]] as [string, string][][]) {
        const answer = await send(port, { path: '/healthz', headers });
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({ ok: true });
      }
      const probe = await sendRaw(port, 'GET /healthz HTTP/1.0\r\n\r\n');
      expect(probe).toEqual({ status: 200, body: { ok: true } });
      const post = await send(port, { method: 'POST', path: '/healthz', headers: [['Host', 'evil.example']] });
      expect(post.status).toBe(421);
    });

    it('keeps answering other callers while hostile Hosts arrive', async () => {
      // Warm the path first, so the measurement is of the hostile requests, not of a cold start.
      await send(port, { path: '/healthz', headers: [ownHost()] });
      const hostile = Array.from({ length: 10 }, (_, i) =>
        send(port, { method: 'POST', path: '/api/v1/tools/invoke', headers: withToken(true, [['Host', `${'a.'.repeat(3000)}evil${i}.example`]]), body: ISSUE_CALL }),
      );
      const health = await timedLessCpuWait(() => send(port, { path: '/healthz', headers: [ownHost()] }));
      expect(health.value.status).toBe(200);
      expect(health.ms).toBeLessThan(100);
      for (const answer of await Promise.all(hostile)) expect(answer.status).toBe(421);
    });
  });

  describe('cross-origin browser request (Origin)', () => {
    const foreign = () => [
      'http://evil.example',
      `http://evil.example:${port}`,
      'null',
      `http://127.0.0.1:${port}.evil.example`,
      `http://127.0.0.1:${port + 1}`,
      `http://localhost:${port === 65535 ? port - 1 : port + 1}`,
      `https://127.0.0.1:${port}`,
      'http://127.0.0.1',
      `http://127.0.0.1:${port}/`,
      `http://2130706433:${port}`,
      `http://127.0.0.1:${port}, http://evil.example`,
      'file://',
    ];

    it('refuses every foreign Origin on every route, with and without a token, with 403 ORIGIN_NOT_ALLOWED', async () => {
      const before = await auditRecords();
      for (const origin of foreign()) {
        for (const route of ROUTES) {
          for (const token of [true, false]) {
            const answer = await send(port, { ...route, headers: withToken(token, [ownHost(), ['Origin', origin]]) });
            const where = `${route.method} ${route.path} Origin ${origin} token ${token}`;
            expect(answer.status, where).toBe(403);
            expect(answer.body.error.code, where).toBe('ORIGIN_NOT_ALLOWED');
            expect(noCorsHeaders(answer), where).toEqual([]);
          }
        }
      }
      expect(await auditRecords()).toEqual(before);
      expect(existsSync(marker)).toBe(false);
    });

    it('names the rule in the refusal', async () => {
      const evil = await send(port, { path: '/api/v1/tools', headers: withToken(true, [ownHost(), ['Origin', 'http://evil.example']]) });
      expect(evil.body.error).toEqual({ code: 'ORIGIN_NOT_ALLOWED', message: "Origin 'http://evil.example' may not call this server; set TOOLGATE_ALLOWED_ORIGINS to let a browser origin call the gateway" });
      const sandboxed = await send(port, { path: '/api/v1/tools', headers: withToken(true, [ownHost(), ['Origin', 'null']]) });
      expect(sandboxed.body.error.message).toMatch(/^Origin 'null' .* is never allowed$/);
    });

    it('refuses a cross-site browser request that sends no Origin (Sec-Fetch-Site)', async () => {
      for (const site of ['cross-site', 'same-site', 'unheard-of']) {
        for (const route of ROUTES) {
          const answer = await send(port, { ...route, headers: withToken(true, [ownHost(), ['Sec-Fetch-Site', site]]) });
          expect(answer.status, `${route.path} ${site}`).toBe(403);
          expect(answer.body.error.code).toBe('CROSS_SITE_NOT_ALLOWED');
        }
      }
      const typed = await send(port, { path: '/api/v1/tools', headers: withToken(true, [ownHost(), ['Sec-Fetch-Site', 'none']]) });
      expect(typed.status).toBe(200);
    });

    it('serves the same origin, under each loopback name, without CORS headers', async () => {
      for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]) {
        const answer = await send(port, { path: '/api/v1/tools', headers: withToken(true, [ownHost(), ['Origin', origin], ['Sec-Fetch-Site', 'same-origin']]) });
        expect(answer.status, origin).toBe(200);
        expect(noCorsHeaders(answer)).toEqual([]);
      }
      const anonymous = await send(port, { path: '/api/v1/tools', headers: withToken(false, [ownHost(), ['Origin', `http://127.0.0.1:${port}`]]) });
      expect(anonymous.status).toBe(401);
    });

    it('sees an Origin or a second Host sent after 2,000 filler header lines', async () => {
      const filler: [string, string][] = Array.from({ length: 2000 }, (_, i) => [`x-f${i}`, '1']);
      const call = JSON.stringify({ tool: 'calculator', args: { expression: '6*7' } });
      for (const [late, code] of [
        [['Origin', 'http://evil.example'], 'ORIGIN_NOT_ALLOWED'],
        [['Sec-Fetch-Site', 'cross-site'], 'CROSS_SITE_NOT_ALLOWED'],
        [['Host', 'evil.example'], 'BAD_HOST_HEADER'],
      ] as const) {
        const answer = await send(port, { method: 'POST', path: '/api/v1/tools/invoke', headers: withToken(true, [ownHost(), ...filler, [...late]]), body: call });
        expect(answer.status, late.join(': ')).not.toBe(200);
        expect(answer.body, late.join(': ')).toMatchObject({ error: { code } });
      }
    });

    it('does not invite the body of a refused request with 100 Continue', async () => {
      const probe = (host: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () =>
            socket.write(`POST /api/v1/tools/invoke HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer demo\r\nContent-Type: application/json\r\nContent-Length: 60\r\nExpect: 100-continue\r\n\r\n`),
          );
          let text = '';
          socket.setTimeout(3_000, () => socket.destroy());
          socket.on('data', (chunk: Buffer) => {
            text += chunk.toString('utf8');
            // The first status line is the whole question: 100, or the final answer.
            if (text.includes('\r\n')) socket.destroy();
          });
          socket.on('error', reject);
          socket.on('close', () => resolve(text.split('\r\n')[0] ?? ''));
        });
      expect(await probe('evil.example')).toMatch(/^HTTP\/1\.1 421 /);
      expect(await probe(`127.0.0.1:${port}`)).toMatch(/^HTTP\/1\.1 100 /);
    });

    it('answers no preflight when no origin is configured', async () => {
      for (const origin of [`http://127.0.0.1:${port}`, 'http://evil.example']) {
        const answer = await send(port, {
          method: 'OPTIONS',
          path: '/api/v1/tools/invoke',
          headers: [ownHost(), ['Origin', origin], ['Access-Control-Request-Method', 'POST'], ['Access-Control-Request-Headers', 'authorization, content-type']],
        });
        expect(answer.status).not.toBe(204);
        expect(noCorsHeaders(answer)).toEqual([]);
      }
    });
  });

  describe('the issue: a rebound page runs bash as demo with approved: true', () => {
    it('never reaches the gateway through a rebound Host or a foreign Origin, and does through the real origin', async () => {
      const before = await auditRecords();
      const attacks: [string, string][][] = [
        [['Host', `evil.example:${port}`], ['Origin', `http://evil.example:${port}`]],
        [['Host', `evil.example:${port}`]],
        [ownHost(), ['Origin', `http://evil.example:${port}`]],
        [ownHost(), ['Origin', 'null']],
        [ownHost(), ['Sec-Fetch-Site', 'cross-site']],
      ];
      for (const headers of attacks) {
        for (const path of ['/api/v1/tools/invoke', '/trpc/tools.invoke']) {
          const answer = await send(port, { method: 'POST', path, headers: withToken(true, headers), body: ISSUE_CALL });
          expect([421, 403]).toContain(answer.status);
          expect(answer.body.error.code).toMatch(/^(HOST|ORIGIN|CROSS_SITE)_NOT_ALLOWED$/);
        }
      }
      expect(await auditRecords()).toEqual(before);
      expect(existsSync(marker)).toBe(false);

      // The control: the same call from the gateway's own origin reaches the gateway and is audited.
      const own = await send(port, { method: 'POST', path: '/api/v1/tools/invoke', headers: withToken(true, [ownHost(), ['Origin', `http://127.0.0.1:${port}`]]), body: ISSUE_CALL });
      expect(own.status).toBe(200);
      const after = await auditRecords();
      expect(after.filter((record) => record.tool === 'bash').length).toBeGreaterThan(0);
    });

    // ADR 0021: with rebinding closed, the dev principal keeps self-approval on its own origin.
    it.runIf(hasBwrap)('still lets demo self-approve bash from the real origin (bash needs the bwrap tier)', async () => {
      const own = await send(port, { method: 'POST', path: '/api/v1/tools/invoke', headers: withToken(true, [ownHost(), ['Origin', `http://localhost:${port}`]]), body: ISSUE_CALL });
      expect(own.body).toMatchObject({ ok: true, output: { exit_code: 0 } });
      expect(existsSync(marker)).toBe(true);
      const authorized = (await auditRecords()).filter((record) => record.tool === 'bash' && record.event === 'authorized');
      expect(authorized.at(-1)).toMatchObject({ principal: 'demo', approvedBy: 'demo' });
    });

    it('says at start which self-approval is in force and which hosts are served', () => {
      expect(h.logs).toContainEqual(
        "warn no TOOLGATE_PRINCIPALS_FILE: dev principal 'demo' (token 'demo', roles worker, operator, approver), self-approval ON (loopback only, Host and Origin guarded; set TOOLGATE_PRINCIPALS_FILE for real principals)",
      );
      expect(h.logs).toContainEqual("info HTTP answers Host localhost, 127.0.0.0/8, [::1]; browser origins: the server's own; no CORS (TOOLGATE_ALLOWED_ORIGINS unset)");
    });
  });
});

describe('HTTP face with operator-configured hosts and origins', () => {
  const CONSOLE = 'http://console.example:5173';
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await startHarness({ TOOLGATE_ALLOWED_HOSTS: 'toolgate.test', TOOLGATE_ALLOWED_ORIGINS: CONSOLE, TOOLGATE_PUBLIC_URL: 'https://gateway.example.com' });
    port = h.server.port;
  });
  afterAll(async () => h?.stop());
  const auth: [string, string][] = [['Authorization', 'Bearer demo']];

  it('serves TOOLGATE_ALLOWED_HOSTS and the public URL host, and still refuses their neighbours', async () => {
    for (const host of [`toolgate.test:${port}`, 'gateway.example.com', `127.0.0.1:${port}`]) {
      expect((await send(port, { path: '/api/v1/tools', headers: [['Host', host], ...auth] })).status, host).toBe(200);
    }
    for (const host of ['toolgate.test.evil.example', 'evil.toolgate.test', 'gateway.example.com.evil.example', 'toolgate.test.']) {
      expect((await send(port, { path: '/api/v1/tools', headers: [['Host', host], ...auth] })).status, host).toBe(421);
    }
  });

  it('treats the public URL origin and the allowed hosts at this port as the server’s own: no CORS headers', async () => {
    for (const origin of ['https://gateway.example.com', `http://toolgate.test:${port}`]) {
      const answer = await send(port, { path: '/api/v1/tools', headers: [['Host', 'gateway.example.com'], ['Origin', origin], ...auth] });
      expect(answer.status, origin).toBe(200);
      expect(noCorsHeaders(answer)).toEqual([]);
    }
  });

  describe('CORS for TOOLGATE_ALLOWED_ORIGINS, exactly', () => {
    const preflight = (origin: string, method: string, headers: string, extra: [string, string][] = []) =>
      send(port, {
        method: 'OPTIONS',
        path: '/api/v1/tools/invoke',
        headers: [['Host', `127.0.0.1:${port}`], ['Origin', origin], ['Access-Control-Request-Method', method], ['Access-Control-Request-Headers', headers], ...extra],
      });

    it('answers a preflight from the configured origin with 204 and that origin only', async () => {
      const answer = await preflight(CONSOLE, 'POST', 'authorization, content-type');
      expect(answer.status).toBe(204);
      expect(answer.headers['access-control-allow-origin']).toBe(CONSOLE);
      expect(answer.headers['access-control-allow-methods']).toMatch(/\bPOST\b/);
      expect(answer.headers['access-control-allow-headers']).toMatch(/\bauthorization\b/);
      expect(answer.headers).not.toHaveProperty('access-control-allow-credentials');
      expect(answer.headers).not.toHaveProperty('access-control-allow-private-network');
      const privateNetwork = await preflight(CONSOLE, 'GET', 'authorization', [['Access-Control-Request-Private-Network', 'true']]);
      expect(privateNetwork.headers['access-control-allow-private-network']).toBe('true');
    });

    it('refuses a preflight for a method or header it does not allow, naming it', async () => {
      const patch = await preflight(CONSOLE, 'PATCH', 'authorization');
      expect(patch.status).toBe(403);
      expect(patch.body.error).toMatchObject({ code: 'CORS_PREFLIGHT_REFUSED', message: expect.stringMatching(/^method 'PATCH' is not allowed cross-origin/) });
      const header = await preflight(CONSOLE, 'POST', 'authorization, x-forwarded-host');
      expect(header.status).toBe(403);
      expect(header.body.error.message).toMatch(/^request header 'x-forwarded-host' is not allowed cross-origin/);
      expect(header.headers).not.toHaveProperty('access-control-allow-methods');
    });

    it('refuses a preflight and a request from any other origin, without CORS headers', async () => {
      for (const origin of ['http://console.example', 'https://console.example:5173', 'http://console.example:5173.evil.example', 'http://evil.example', 'null']) {
        const pre = await preflight(origin, 'POST', 'authorization');
        expect(pre.status, origin).toBe(403);
        expect(noCorsHeaders(pre)).toEqual([]);
        const actual = await send(port, { path: '/api/v1/tools', headers: [['Host', `127.0.0.1:${port}`], ['Origin', origin], ...auth] });
        expect(actual.status, origin).toBe(403);
        expect(noCorsHeaders(actual)).toEqual([]);
      }
    });

    it('lets the configured origin call, with Access-Control-Allow-Origin on the answer', async () => {
      const answer = await send(port, {
        method: 'POST',
        path: '/trpc/tools.invoke',
        headers: [['Host', `127.0.0.1:${port}`], ['Origin', CONSOLE], ['Sec-Fetch-Site', 'cross-site'], ['Content-Type', 'application/json'], ...auth],
        body: JSON.stringify({ tool: 'calculator', args: { expression: '2+3*4' } }),
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ result: { data: { ok: true, output: { result: 14 } } } });
      expect(answer.headers['access-control-allow-origin']).toBe(CONSOLE);
      expect(answer.headers['vary']).toMatch(/Origin/);
      const anonymous = await send(port, { path: '/api/v1/tools', headers: [['Host', `127.0.0.1:${port}`], ['Origin', CONSOLE]] });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers['access-control-allow-origin']).toBe(CONSOLE);
    });

    it('names the configured hosts and origins at start', () => {
      expect(h.logs).toContainEqual(
        "info HTTP answers Host localhost, 127.0.0.0/8, [::1], toolgate.test, gateway.example.com; browser origins: the server's own and https://gateway.example.com; CORS for http://console.example:5173",
      );
    });
  });
});

describe('HTTP face bound to every address (principals file)', () => {
  const TOKEN = 'a-long-random-token-for-alice';
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await startHarness(
      { TOOLGATE_HOST: '0.0.0.0', TOOLGATE_ALLOWED_HOSTS: 'toolgate.test' },
      {
        principals: {
          principals: [{ id: 'alice', token: TOKEN, tenant: 'acme', roles: ['worker'] }],
          roles: { worker: ['*'] },
          tenants: { acme: { tools: ['*'], selfApproval: false } },
        },
      },
    );
    port = h.server.port;
  });
  afterAll(async () => h?.stop());

  it('keeps the loopback names and the configured hosts, and refuses the any-address and other names', async () => {
    const auth: [string, string] = ['Authorization', `Bearer ${TOKEN}`];
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `toolgate.test:${port}`]) {
      expect((await send(port, { path: '/api/v1/tools', headers: [['Host', host], auth] })).status, host).toBe(200);
    }
    for (const host of [`0.0.0.0:${port}`, `evil.example:${port}`, `2130706433:${port}`]) {
      const answer = await send(port, { path: '/api/v1/tools', headers: [['Host', host], auth] });
      expect(answer.status, host).toBe(421);
    }
    expect(h.logs.some((line) => line.includes("dev principal 'demo'"))).toBe(false);
  });
});
