import { describe, expect, it } from 'vitest';
import { hostOfUrl, normalizeEgressHost } from './egress-host.js';
import { GatewayError } from '../denials/gateway-error.js';

function refusal(input: string): string {
  try {
    normalizeEgressHost(input);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('INVALID');
    return (error as Error).message;
  }
  throw new Error(`'${input}' was accepted`);
}

describe('normalizeEgressHost', () => {
  it.each([
    ['example.com', 'example.com'],
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['  api.example.com  ', 'api.example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['10.0.0.1', '10.0.0.1'],
    ['[::1]', '::1'],
    ['2001:DB8:0:0::1', '2001:db8::1'],
    ['a-b.c-d.test', 'a-b.c-d.test'],
    ['localhost', 'localhost'],
  ])('%j → %j', (input, expected) => {
    expect(normalizeEgressHost(input)).toBe(expected);
  });

  it.each([
    ['', 'the host is empty'],
    ['   ', 'the host is empty'],
    ['.', 'the host is empty'],
    ['https://example.com', 'is a URL'],
    ['example.com/path', 'contains a path'],
    ['example.com?q', 'contains a path'],
    ['example.com:8080', 'contains a port'],
    ['user@example.com', 'userinfo'],
    ['*.example.com', 'wildcard'],
    ['exa mple.com', 'contains a space'],
    ['a..b', "empty label ('..')"],
    ['-a.com', "invalid label '-a'"],
    ['a_b.com', "invalid label 'a_b'"],
    [`${'a'.repeat(64)}.com`, 'invalid label'],
    [`${'abcdefghi.'.repeat(26)}com`, 'longer than 253'],
    ['1.2.3', 'not a dotted-quad'],
    ['0x7f.1', 'not a dotted-quad'],
    ['999.1.1.1', 'not a valid host name'],
    ['[example.com]', 'not a valid IPv6'],
  ])('refuses %j (%s)', (input, why) => {
    expect(refusal(input)).toContain(why);
  });
});

describe('hostOfUrl', () => {
  it('returns the host as normalizeEgressHost would write it', () => {
    for (const [url, host] of [
      ['https://Example.COM./x', 'example.com'],
      ['http://[::1]:8080/', '::1'],
      ['https://bücher.de/', 'xn--bcher-kva.de'],
      ['http://0x7f.1/', '127.0.0.1'],
    ]) {
      expect(hostOfUrl(url as string)).toEqual({ host });
    }
  });

  it('explains why a URL cannot be used', () => {
    expect(hostOfUrl('example.com')).toEqual({ problem: 'is not a valid absolute URL' });
    expect(hostOfUrl('javascript:alert(1)')).toEqual({ problem: "uses 'javascript:'; only http and https are allowed" });
    expect(hostOfUrl('https://a:b@x.test/')).toMatchObject({ problem: expect.stringContaining('userinfo') });
  });
});
