import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVAL_PAGE_CSP } from '../src/http/approval-page.js';
import { sendExact, timedLessCpuWait, type Harness } from './e2e-harness.js';
import { ALICE, CAROL, GINA, requestEcho, startApprovalServer } from './approval-page-setup.js';

const PAGE_HEADERS = {
  'content-security-policy': APPROVAL_PAGE_CSP,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

describe('the approval page over HTTP', () => {
  let h: Harness;
  let port: number;
  let id: string;
  let foreignId: string;
  const host = (): [string, string] => ['Host', `127.0.0.1:${port}`];
  const get = (path: string, headers: [string, string][] = []) => sendExact(port, { method: 'GET', path, headers: [host(), ...headers] });

  beforeAll(async () => {
    h = await startApprovalServer();
    port = h.server.port;
    id = await requestEcho(h, 'deploy <b>prod</b>');
    foreignId = await requestEcho(h, 'globex secret', GINA);
  });
  afterAll(async () => h?.stop());

  describe('headers', () => {
    it('serves the page with a strict CSP, no framing, nosniff and no-store', async () => {
      const page = await get(`/approvals/${id}`);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers).toMatchObject(PAGE_HEADERS);
      expect(page.headers['set-cookie']).toBeUndefined();
    });

    it.each([
      ['/approval-page/page.js', 'text/javascript; charset=utf-8'],
      ['/approval-page/page.css', 'text/css; charset=utf-8'],
    ])('serves %s as %s with the same headers', async (path, type) => {
      const asset = await get(path);
      expect(asset.status).toBe(200);
      expect(asset.headers['content-type']).toBe(type);
      expect(asset.headers).toMatchObject(PAGE_HEADERS);
    });

    it('answers HEAD without a body and refuses other methods with 405 and Allow', async () => {
      const head = await sendExact(port, { method: 'HEAD', path: `/approvals/${id}`, headers: [host()] });
      expect(head.status).toBe(200);
      expect(head.body).toBe('');
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const answer = await sendExact(port, { method, path: `/approvals/${id}`, headers: [host(), ['Content-Length', '0']] });
        expect(answer.status, method).toBe(405);
        expect(answer.headers.allow).toBe('GET, HEAD');
        expect(answer.body.error).toEqual({ code: 'METHOD_NOT_SUPPORTED', message: 'use GET' });
      }
    });
  });

  describe('the page holds no data', () => {
    it('is the same document for a real id, an unknown id and another tenant’s id, with or without a token', async () => {
      const mine = await get(`/approvals/${id}`);
      const unknown = await get('/approvals/no-such-approval');
      const foreign = await get(`/approvals/${foreignId}`);
      const withToken = await get(`/approvals/${id}`, [['Authorization', `Bearer ${CAROL}`]]);
      expect(unknown.body).toBe(mine.body);
      expect(foreign.body).toBe(mine.body);
      expect(withToken.body).toBe(mine.body);
      for (const secret of [id, foreignId, 'deploy', 'globex secret', 'files__echo', 'alice', 'carol']) expect(mine.body).not.toContain(secret);
    });

    it('has no inline script or style, and its script never writes markup or stores anything', async () => {
      const html = (await get(`/approvals/${id}`)).body as string;
      expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i);
      expect(html).not.toMatch(/<style/i);
      expect(html).not.toMatch(/\sstyle=/i);
      expect(html).not.toMatch(/\son[a-z]+=/i);
      expect(html).not.toMatch(/javascript:/i);
      const script = (await get('/approval-page/page.js')).body as string;
      for (const sink of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function', 'localStorage', 'sessionStorage', 'indexedDB', 'document.cookie', 'searchParams', 'location.search', 'location.hash']) {
        expect(script, sink).not.toContain(sink);
      }
    });

    it('labels every input and names every button (readable without CSS)', async () => {
      const html = (await get(`/approvals/${id}`)).body as string;
      for (const [, field] of html.matchAll(/<(?:input|textarea)[^>]*\sid="([^"]+)"/g)) expect(html).toContain(`<label for="${field}">`);
      for (const [, text] of html.matchAll(/<button[^>]*>([^<]*)<\/button>/g)) expect(text!.trim()).not.toBe('');
      expect(html).toMatch(/<html lang="en">/);
    });
  });

  describe('hostile ids: path traversal and encoded slashes', () => {
    it('dot segments are resolved before routing, so they never reach a file or the page with a different path', async () => {
      // WHATWG URL rules, as a browser applies them: these land on the API, /healthz or nowhere.
      expect((await get(`/approvals/../api/v1/approvals/${id}`)).status).toBe(401);
      expect((await get('/approvals/%2e%2e/healthz')).body).toMatchObject({ ok: true });
      expect((await get('/approvals/%2E%2E/%2E%2E/etc/passwd')).body.error.code).toBe('NOT_FOUND');
      expect((await get('/approval-page/../../package.json')).body.error.code).toBe('NOT_FOUND');
    });

    it.each(['..%2F..%2Fetc%2Fpasswd', '%2e%2e%2fapi%2fv1%2faudit', 'a%5C..%5C..%5Cpackage.json', '%00', '%3Cscript%3Ealert(1)%3C%2Fscript%3E', 'javascript%3Aalert(1)'])(
      'an encoded id %s is served the same data-free page, and the API says it does not exist',
      async (segment) => {
        const page = await get(`/approvals/${segment}`);
        expect(page.status).toBe(200);
        expect(page.body).toBe((await get(`/approvals/${id}`)).body);
        const api = await h.call(`/api/v1/approvals/${segment}`, { token: CAROL });
        expect(api.status).toBe(404);
        expect(api.body.error.code).toBe('NOT_FOUND');
      },
    );

    it('more than one segment, an empty id, or an unknown asset is no page', async () => {
      for (const path of [`/approvals/${id}/x`, '/approvals/', `/approvals/${id}/`, '/approval-page/page.html', '/approval-page/PAGE.JS', '/approval-page/page.js%00', '/approval-page/..%2Fapproval-page.ts', '/approval-page/']) {
        const answer = await get(path);
        expect(answer.status, path).toBe(404);
        expect(answer.body.error.code).toBe('NOT_FOUND');
      }
    });

    it('an id over 128 characters or a malformed escape is a 400 that says which', async () => {
      const long = await get(`/approvals/${'a'.repeat(129)}`);
      expect(long.status).toBe(400);
      expect(long.body.error).toEqual({ code: 'BAD_REQUEST', message: 'an approval id is at most 128 characters' });
      expect((await get(`/approvals/${'a'.repeat(128)}`)).status).toBe(200);
      const malformed = await get('/approvals/%E0%A4%A');
      expect(malformed.status).toBe(400);
      expect(malformed.body.error).toEqual({ code: 'BAD_REQUEST', message: 'the approval id in the path has a malformed percent-encoding' });
    });

    it('keeps answering /healthz quickly while hostile ids arrive', async () => {
      const flood = Promise.all(Array.from({ length: 200 }, (_, i) => get(`/approvals/${'%2F'.repeat(40)}${i}`)));
      const { value, ms } = await timedLessCpuWait(() => h.call('/healthz'));
      expect(value.status).toBe(200);
      expect(ms).toBeLessThan(100);
      expect((await flood).every((a) => a.status === 200)).toBe(true);
    });
  });

  describe('the API the page calls: another tenant, a wrong token', () => {
    it("another tenant's id is the same 404 as an unknown one, to its approver too", async () => {
      const unknown = await h.call('/api/v1/approvals/no-such-approval', { token: CAROL });
      expect(unknown.status).toBe(404);
      const foreign = await h.call(`/api/v1/approvals/${foreignId}`, { token: CAROL });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.message).toBe(`There is no approval '${foreignId}' that you can see in your tenant.`);
      const fromGlobex = await h.call(`/api/v1/approvals/${id}`, { token: GINA });
      expect(fromGlobex.status).toBe(404);
      const decide = await h.call(`/api/v1/approvals/${id}/decide`, { method: 'POST', token: GINA, json: { approve: true } });
      expect(decide.status).toBe(404);
      expect((await h.call(`/api/v1/approvals/${id}`, { token: CAROL })).body.status).toBe('pending');
    });

    it('a wrong or missing token is 401 and shows nothing', async () => {
      for (const token of [undefined, 'not-a-token-0000000000000000', `${CAROL}x`, CAROL.toUpperCase()]) {
        const answer = await h.call(`/api/v1/approvals/${id}`, token ? { token } : {});
        expect(answer.status).toBe(401);
        expect(JSON.stringify(answer.body)).not.toContain('deploy');
      }
    });

    it('the requester sees its own request, and is refused when it decides it', async () => {
      expect((await h.call(`/api/v1/approvals/${id}`, { token: ALICE })).body).toMatchObject({ id, requester: 'alice', args: { text: 'deploy <b>prod</b>' } });
      const self = await h.call(`/api/v1/approvals/${id}/decide`, { method: 'POST', token: ALICE, json: { approve: true } });
      expect(self.status).toBe(403);
    });
  });

  describe('behind the Host/Origin guard', () => {
    const origin = (): [string, string] => ['Origin', `http://127.0.0.1:${port}`];

    it("accepts the page's same-origin fetches: GET with Sec-Fetch-Site same-origin, POST with the server's own Origin", async () => {
      const read = await get(`/api/v1/approvals/${id}`, [['Authorization', `Bearer ${CAROL}`], ['Sec-Fetch-Site', 'same-origin'], ['Sec-Fetch-Mode', 'cors']]);
      expect(read.status).toBe(200);
      expect(read.headers['access-control-allow-origin']).toBeUndefined();
      const other = await requestEcho(h, 'for the guard');
      const body = JSON.stringify({ approve: false, reason: 'guard check' });
      const decide = await sendExact(port, {
        method: 'POST',
        path: `/api/v1/approvals/${other}/decide`,
        headers: [host(), origin(), ['Sec-Fetch-Site', 'same-origin'], ['Authorization', `Bearer ${CAROL}`], ['Content-Type', 'application/json'], ['Content-Length', String(Buffer.byteLength(body))]],
        body,
      });
      expect(decide.status).toBe(200);
      expect(decide.body).toMatchObject({ status: 'denied', reason: 'guard check' });
    });

    it('serves the page to a top-level navigation from another site (a link in a web chat client), but nothing else cross-site', async () => {
      const navigate: [string, string][] = [['Sec-Fetch-Site', 'cross-site'], ['Sec-Fetch-Mode', 'navigate'], ['Sec-Fetch-Dest', 'document'], ['Sec-Fetch-User', '?1']];
      for (const headers of [navigate, [['Sec-Fetch-Site', 'same-site'], ['Sec-Fetch-Mode', 'navigate'], ['Sec-Fetch-Dest', 'document']], [['Sec-Fetch-Site', 'CROSS-SITE'], ['Sec-Fetch-Mode', 'Navigate'], ['Sec-Fetch-Dest', 'DOCUMENT']]] as [string, string][][]) {
        const page = await get(`/approvals/${id}`, headers);
        expect(page.status).toBe(200);
        expect(page.headers).toMatchObject(PAGE_HEADERS);
        expect(page.body).toBe((await get(`/approvals/${id}`)).body);
      }
      const form = await sendExact(port, { method: 'POST', path: `/approvals/${id}`, headers: [host(), ...navigate, ['Content-Length', '0']] });
      expect(form.status).toBe(403);
      expect(form.body.error.code).toBe('CROSS_SITE_NOT_ALLOWED');
      const refusals: [string, [string, string][]][] = [
        ['the API by navigation', navigate],
        ['a cross-site fetch of the page', [['Sec-Fetch-Site', 'cross-site'], ['Sec-Fetch-Mode', 'cors'], ['Sec-Fetch-Dest', 'empty']]],
        ['the page in a frame', [['Sec-Fetch-Site', 'cross-site'], ['Sec-Fetch-Mode', 'navigate'], ['Sec-Fetch-Dest', 'iframe']]],
        ['the page as a script', [['Sec-Fetch-Site', 'cross-site'], ['Sec-Fetch-Mode', 'no-cors'], ['Sec-Fetch-Dest', 'script']]],
        ['two Sec-Fetch-Dest', [['Sec-Fetch-Site', 'cross-site'], ['Sec-Fetch-Mode', 'navigate'], ['Sec-Fetch-Dest', 'document'], ['Sec-Fetch-Dest', 'iframe']]],
        ['the script cross-site', navigate],
      ];
      for (const [what, headers] of refusals) {
        const path = what === 'the API by navigation' ? `/api/v1/approvals/${id}` : what === 'the script cross-site' ? '/approval-page/page.js' : `/approvals/${id}`;
        const answer = await get(path, headers);
        expect(answer.status, what).toBe(403);
        expect(answer.body.error.code, what).toBe('CROSS_SITE_NOT_ALLOWED');
      }
    });

    it('still refuses a foreign Host (DNS rebinding) and a foreign Origin on the page and its API', async () => {
      const rebound = await sendExact(port, { method: 'GET', path: `/approvals/${id}`, headers: [['Host', `evil.example:${port}`], ['Sec-Fetch-Site', 'cross-site'], ['Sec-Fetch-Mode', 'navigate'], ['Sec-Fetch-Dest', 'document']] });
      expect(rebound.status).toBe(421);
      expect(rebound.body.error.code).toBe('HOST_NOT_ALLOWED');
      for (const foreign of ['https://evil.example', `http://127.0.0.1:${port + 1}`, `https://127.0.0.1:${port}`, 'null']) {
        const answer = await get(`/api/v1/approvals/${id}`, [['Origin', foreign], ['Authorization', `Bearer ${CAROL}`]]);
        expect(answer.status, foreign).toBe(403);
        expect(answer.body.error.code).toBe('ORIGIN_NOT_ALLOWED');
        const page = await get(`/approvals/${id}`, [['Origin', foreign]]);
        expect(page.status, foreign).toBe(403);
      }
    });
  });
});

describe('the approval page behind a reverse proxy (TOOLGATE_PUBLIC_URL)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startApprovalServer({ TOOLGATE_PUBLIC_URL: 'https://gw.example.test/toolgate' });
  });
  afterAll(async () => h?.stop());

  it("accepts the public origin as the page's own, and refuses a lookalike", async () => {
    const port = h.server.port;
    const id = await requestEcho(h, 'behind a proxy');
    const viaProxy: [string, string][] = [['Host', 'gw.example.test'], ['Authorization', `Bearer ${CAROL}`]];
    const page = await sendExact(port, { method: 'GET', path: `/approvals/${id}`, headers: [['Host', 'gw.example.test']] });
    expect(page.status).toBe(200);
    const read = await sendExact(port, { method: 'GET', path: `/api/v1/approvals/${id}`, headers: [...viaProxy, ['Origin', 'https://gw.example.test']] });
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(id);
    for (const lookalike of ['http://gw.example.test', 'https://gw.example.test.evil.example', 'https://evil.example']) {
      const answer = await sendExact(port, { method: 'GET', path: `/api/v1/approvals/${id}`, headers: [...viaProxy, ['Origin', lookalike]] });
      expect(answer.status, lookalike).toBe(403);
    }
  });
});
