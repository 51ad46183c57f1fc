import { describe, expect, it } from 'vitest';
import { createHostGuard, type GuardedRequest, type HostGuardOptions } from './host-guard.js';
import { canonicalConfiguredHost, canonicalReceivedName, parseReceivedOrigin, quoteHeader } from './host-names.js';

const PORT = 8765;
const LOOPBACK: HostGuardOptions = { bindHost: '127.0.0.1', allowedHosts: [], allowedOrigins: [] };

/** A request as node hands it to the guard: raw header pairs, so duplicates are visible. */
function request(headers: [string, string][], init: { url?: string; httpVersion?: string; localPort?: number } = {}): GuardedRequest {
  return {
    url: init.url ?? '/api/v1/tools',
    httpVersion: init.httpVersion ?? '1.1',
    rawHeaders: headers.flat(),
    socket: { localPort: init.localPort ?? PORT },
  };
}

const codeOf = (options: HostGuardOptions, req: GuardedRequest) => {
  const verdict = createHostGuard(options).check(req);
  return verdict.ok ? 'OK' : verdict.refusal.code;
};

describe('host names: one canonical spelling each', () => {
  it.each(['localhost', '127.0.0.1', '10.20.30.40', 'toolgate.example.com', 'xn--bcher-kva.example', '[::1]', '[2001:db8::1]'])('%s is canonical', (name) => {
    expect(canonicalReceivedName(name)).toEqual({ name });
  });
  it('folds letter case, as hosts are case-insensitive', () => {
    expect(canonicalReceivedName('LOCALHOST')).toEqual({ name: 'localhost' });
    expect(canonicalReceivedName('[2001:DB8::1]')).toEqual({ name: '[2001:db8::1]' });
  });
  it.each(['2130706433', '0x7f000001', '0x7F.0.0.1', '0177.0.0.1', '127.1', '127.0.0.01', '127.0.0.256', '1.2.3.4.5', '127.0.0.1.', 'localhost.', '[0:0:0:0:0:0:0:1]', '[::0001]', '[::ffff:127.0.0.1]', '[::1', 'a..b', '-x.example', 'under_score.example', ''])(
    '%s is not a canonical host name',
    (name) => {
      expect(canonicalReceivedName(name)).toHaveProperty('problem');
    },
  );
  it('canonicalizes configured IPv6 in any spelling but keeps IPv4 strict', () => {
    expect(canonicalConfiguredHost('::1')).toEqual({ name: '[::1]' });
    expect(canonicalConfiguredHost('[0:0:0:0:0:0:0:1]')).toEqual({ name: '[::1]' });
    expect(canonicalConfiguredHost('0x7f000001')).toHaveProperty('problem');
    expect(canonicalConfiguredHost('toolgate.example:8765')).toEqual({ problem: expect.stringMatching(/port/) });
    expect(canonicalConfiguredHost('*.example.com')).toEqual({ problem: expect.stringMatching(/wildcard/) });
  });
  it('parses an origin only in its serialized shape', () => {
    expect(parseReceivedOrigin('http://127.0.0.1:8765')).toEqual({ scheme: 'http', name: '127.0.0.1', port: 8765 });
    expect(parseReceivedOrigin('https://example.com')).toEqual({ scheme: 'https', name: 'example.com', port: 443 });
    for (const bad of ['http://127.0.0.1:8765/', 'http://u@127.0.0.1', 'ftp://127.0.0.1', 'http://127.0.0.1:99999', 'http://2130706433', '127.0.0.1:8765']) {
      expect(parseReceivedOrigin(bad)).toHaveProperty('problem');
    }
  });
  it('quotes at most 80 printable characters of a header', () => {
    const quoted = quoteHeader(`${'a'.repeat(500)}\u00ff`);
    expect(quoted.length).toBeLessThanOrEqual(81);
    expect(quoteHeader('caf\u00e9\u0007')).toBe('caf??');
  });
});

describe('DNS rebinding (Host): the guard on its own', () => {
  it.each([
    ['evil.example', 'HOST_NOT_ALLOWED'],
    ['evil.example:8765', 'HOST_NOT_ALLOWED'],
    ['localhost.evil.example', 'HOST_NOT_ALLOWED'],
    ['127.0.0.1.nip.io:8765', 'HOST_NOT_ALLOWED'],
    ['2130706433:8765', 'HOST_NOT_ALLOWED'],
    ['0x7f000001:8765', 'HOST_NOT_ALLOWED'],
    ['0.0.0.0:8765', 'HOST_NOT_ALLOWED'],
    ['127.0.0.1:8765@evil.example', 'BAD_HOST_HEADER'],
    ['127.0.0.1 evil.example', 'BAD_HOST_HEADER'],
    ['127.0.0.1:8765/x', 'BAD_HOST_HEADER'],
    ['127.0.0.1:99999', 'BAD_HOST_HEADER'],
    ['', 'BAD_HOST_HEADER'],
  ])('Host %j is refused with %s', (host, code) => {
    expect(codeOf(LOOPBACK, request([['Host', host]]))).toBe(code);
  });

  it.each(['localhost', 'LOCALHOST:8765', '127.0.0.1', '127.0.0.1:8765', '127.42.0.7:8765', '[::1]:8765', 'localhost:3000'])('Host %j is a loopback name', (host) => {
    expect(codeOf(LOOPBACK, request([['Host', host]]))).toBe('OK');
  });

  it('refuses a missing Host (421 for HTTP/1.0, 400 for HTTP/1.1) and a duplicate one', () => {
    const guard = createHostGuard(LOOPBACK);
    expect(guard.check(request([], { httpVersion: '1.0' }))).toMatchObject({ ok: false, refusal: { status: 421, code: 'HOST_NOT_ALLOWED' } });
    expect(guard.check(request([], { httpVersion: '1.1' }))).toMatchObject({ ok: false, refusal: { status: 400, code: 'BAD_HOST_HEADER' } });
    const twice = guard.check(request([['Host', '127.0.0.1'], ['host', '127.0.0.1']]));
    expect(twice).toMatchObject({ ok: false, refusal: { status: 400, code: 'BAD_HOST_HEADER', message: expect.stringMatching(/2 Host headers/) } });
  });

  it('checks the authority of an absolute-form target as well as Host, and routes on its path only', () => {
    const guard = createHostGuard(LOOPBACK);
    expect(guard.check(request([['Host', '127.0.0.1:8765']], { url: 'http://evil.example/api/v1/tools' }))).toMatchObject({ ok: false, refusal: { status: 421 } });
    expect(guard.check(request([['Host', '127.0.0.1:8765']], { url: 'http://127.0.0.1:8765@evil.example/api/v1/tools' }))).toMatchObject({ ok: false, refusal: { status: 400, code: 'BAD_REQUEST_TARGET' } });
    expect(guard.check(request([['Host', '127.0.0.1:8765']], { url: 'https://127.0.0.1:8765/api/v1/tools' }))).toMatchObject({ ok: false, refusal: { code: 'BAD_REQUEST_TARGET' } });
    expect(guard.check(request([['Host', '127.0.0.1:8765']], { url: '*' }))).toMatchObject({ ok: false, refusal: { code: 'BAD_REQUEST_TARGET' } });
    const fine = guard.check(request([['Host', '127.0.0.1:8765']], { url: 'http://localhost:8765/api/v1/tools?x=1' }));
    expect(fine.ok && `${fine.url.pathname}${fine.url.search}`).toBe('/api/v1/tools?x=1');
  });

  it('keeps a path that looks like an authority a path', () => {
    const verdict = createHostGuard(LOOPBACK).check(request([['Host', '127.0.0.1']], { url: '//evil.example/api/v1/tools' }));
    expect(verdict.ok && verdict.url.pathname).toBe('//evil.example/api/v1/tools');
  });

  it('allows TOOLGATE_ALLOWED_HOSTS and the public URL host, nothing near them', () => {
    const options: HostGuardOptions = { ...LOOPBACK, allowedHosts: ['toolgate.lan', '[2001:db8::5]'], publicUrl: 'https://gateway.example.com/toolgate' };
    for (const host of ['toolgate.lan', 'TOOLGATE.LAN:8765', '[2001:db8::5]:8765', 'gateway.example.com', 'gateway.example.com:443']) {
      expect(codeOf(options, request([['Host', host]]))).toBe('OK');
    }
    for (const host of ['toolgate.lan.evil.example', 'evil.toolgate.lan', 'toolgate.lan.', 'example.com', 'gateway.example.com.evil']) {
      expect(codeOf(options, request([['Host', host]]))).toBe('HOST_NOT_ALLOWED');
    }
  });

  it('allows a specific non-loopback bound address as Host, and never an any-address', () => {
    expect(codeOf({ ...LOOPBACK, bindHost: '10.1.2.3' }, request([['Host', '10.1.2.3:8765']]))).toBe('OK');
    expect(codeOf({ ...LOOPBACK, bindHost: '10.1.2.3' }, request([['Host', 'localhost:8765']]))).toBe('OK');
    expect(codeOf({ ...LOOPBACK, bindHost: '10.1.2.3' }, request([['Host', '10.1.2.4:8765']]))).toBe('HOST_NOT_ALLOWED');
    expect(codeOf({ ...LOOPBACK, bindHost: '0.0.0.0' }, request([['Host', '0.0.0.0:8765']]))).toBe('HOST_NOT_ALLOWED');
    expect(codeOf({ ...LOOPBACK, bindHost: '::' }, request([['Host', '[::]:8765']]))).toBe('HOST_NOT_ALLOWED');
    expect(codeOf({ ...LOOPBACK, bindHost: '0.0.0.0' }, request([['Host', '127.0.0.1:8765']]))).toBe('OK');
  });
});

describe('cross-origin browser request (Origin): the guard on its own', () => {
  const withOrigin = (origin: string) => request([['Host', '127.0.0.1:8765'], ['Origin', origin]]);
  it.each([
    'http://evil.example',
    'null',
    'NULL',
    'http://127.0.0.1:8765.evil.example',
    'http://127.0.0.1:8766',
    'https://127.0.0.1:8765',
    'http://127.0.0.1',
    'http://127.0.0.1:8765/',
    'http://127.0.0.1:8765, http://evil.example',
    'http://user@127.0.0.1:8765',
    'http://2130706433:8765',
    'http://0.0.0.0:8765',
    'file://',
    '',
  ])('Origin %j is refused', (origin) => {
    expect(codeOf(LOOPBACK, withOrigin(origin))).toBe('ORIGIN_NOT_ALLOWED');
  });

  it.each(['http://127.0.0.1:8765', 'http://localhost:8765', 'http://[::1]:8765', 'HTTP://LOCALHOST:8765'])('own origin %j is allowed without CORS', (origin) => {
    const verdict = createHostGuard(LOOPBACK).check(withOrigin(origin));
    expect(verdict).toMatchObject({ ok: true });
    expect(verdict).not.toHaveProperty('corsOrigin');
  });

  it('refuses two Origin headers even when both are the server’s own', () => {
    expect(codeOf(LOOPBACK, request([['Host', '127.0.0.1:8765'], ['Origin', 'http://127.0.0.1:8765'], ['Origin', 'http://127.0.0.1:8765']]))).toBe('ORIGIN_NOT_ALLOWED');
  });

  it.each([['cross-site'], ['same-site'], ['CROSS-SITE'], ['bogus'], ['same-origin', 'cross-site']])('Sec-Fetch-Site %j without Origin is refused', (...sites) => {
    const headers: [string, string][] = [['Host', '127.0.0.1:8765'], ...sites.map((site): [string, string] => ['Sec-Fetch-Site', site])];
    expect(codeOf(LOOPBACK, request(headers))).toBe('CROSS_SITE_NOT_ALLOWED');
  });

  it.each(['same-origin', 'none'])('Sec-Fetch-Site %j without Origin is allowed', (site) => {
    expect(codeOf(LOOPBACK, request([['Host', '127.0.0.1:8765'], ['Sec-Fetch-Site', site]]))).toBe('OK');
  });

  it('marks a configured origin for CORS, exactly, and the public URL origin as the server’s own', () => {
    const guard = createHostGuard({ ...LOOPBACK, allowedOrigins: ['https://console.example.com'], publicUrl: 'https://gateway.example.com' });
    expect(guard.check(withOrigin('https://console.example.com'))).toMatchObject({ ok: true, corsOrigin: 'https://console.example.com' });
    expect(guard.check(withOrigin('https://console.example.com:443'))).toMatchObject({ ok: true, corsOrigin: 'https://console.example.com' });
    expect(guard.check(withOrigin('http://console.example.com'))).toMatchObject({ ok: false, refusal: { code: 'ORIGIN_NOT_ALLOWED' } });
    expect(guard.check(withOrigin('https://console.example.com.evil.example'))).toMatchObject({ ok: false });
    const proxied = guard.check(withOrigin('https://gateway.example.com'));
    expect(proxied).toMatchObject({ ok: true });
    expect(proxied).not.toHaveProperty('corsOrigin');
  });

  it('uses the port the request arrived on: a request with no local port has no own origin', () => {
    const req = { ...withOrigin('http://127.0.0.1:8765'), socket: {} };
    expect(codeOf(LOOPBACK, req)).toBe('ORIGIN_NOT_ALLOWED');
  });
});
