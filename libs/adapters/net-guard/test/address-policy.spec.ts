import { describe, expect, it } from 'vitest';
import { classifyAddress, describeAddressClass, parseCidrList } from '../src/index.js';

describe('classifyAddress', () => {
  const blocked: Array<[string, string, string?]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fec0::1', 'siteLocal'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['100::1', 'reserved'],
    ['::7f00:1', 'reserved'], // deprecated IPv4-compatible form of 127.0.0.1
    ['4000::1', 'reserved'], // outside 2000::/3
    ['64:ff9b:1::a00:1', 'private'],
    ['::ffff:127.0.0.1', 'loopback', 'ipv4Mapped'],
    ['::ffff:7f00:1', 'loopback', 'ipv4Mapped'],
    ['::ffff:a9fe:a9fe', 'linkLocal', 'ipv4Mapped'],
    ['::ffff:0:a00:1', 'private', 'ipv4Translated'],
    ['64:ff9b::7f00:1', 'loopback', 'nat64'],
    ['64:ff9b::10.0.0.1', 'private', 'nat64'],
    ['2002:7f00:1::', 'loopback', '6to4'],
    ['2002:a9fe:a9fe::1', 'linkLocal', '6to4'],
    // Teredo: server 65.54.227.120, client 127.0.0.1 stored inverted (0x80ff:0xfffe).
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback', 'teredo'],
    // Teredo whose server is private.
    ['2001:0:a00:1:8000:63bf:3fff:fdd2', 'private', 'teredo'],
  ];
  it.each(blocked)('blocks %s as %s', (ip, range, via) => {
    const verdict = classifyAddress(ip);
    expect(verdict.allowed).toBe(false);
    expect(verdict.range).toBe(range);
    expect(verdict.via).toBe(via);
  });

  const allowed = [
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1', // just outside 172.16/12
    '100.128.0.1', // just outside 100.64/10
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    // Teredo: server 65.54.227.120, client 192.0.2.45 would be documentation; use 8.8.8.8 (inverted f7f7:f7f7).
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
  ];
  it.each(allowed)('allows public %s', (ip) => {
    const verdict = classifyAddress(ip);
    expect(verdict).toMatchObject({ allowed: true, range: 'unicast' });
  });

  it('parses every legacy IPv4 spelling to the address it means', () => {
    for (const spelling of ['127.1', '0x7f000001', '2130706433', '0177.0.0.1', '0x7f.0.0.1', '127.0.1']) {
      expect(classifyAddress(spelling), spelling).toEqual({ allowed: false, range: 'loopback' });
    }
    expect(classifyAddress('[::ffff:127.0.0.1]')).toMatchObject({ allowed: false, range: 'loopback' });
  });

  it('refuses what is not an address', () => {
    for (const junk of ['', 'localhost', 'example.com', '1.2.3.4.5', '::g', '999.1.1.1']) {
      expect(classifyAddress(junk), junk).toEqual({ allowed: false, range: 'invalid' });
    }
  });

  it('opens exactly the operator ranges', () => {
    const cidrs = parseCidrList('127.0.0.0/8, 10.1.0.0/16, fd00::/8');
    expect(classifyAddress('127.0.0.1', cidrs)).toEqual({ allowed: true, range: 'loopback', allowlisted: true });
    expect(classifyAddress('10.1.200.3', cidrs)).toMatchObject({ allowed: true, allowlisted: true });
    expect(classifyAddress('10.2.0.1', cidrs)).toMatchObject({ allowed: false, range: 'private' });
    expect(classifyAddress('fd00::5', cidrs)).toMatchObject({ allowed: true, range: 'uniqueLocal' });
    expect(classifyAddress('fc00::5', cidrs)).toMatchObject({ allowed: false });
    expect(classifyAddress('169.254.169.254', cidrs)).toMatchObject({ allowed: false, range: 'linkLocal' });
    // The mapped form is the same IPv4 address, so the IPv4 allowlist covers it …
    expect(classifyAddress('::ffff:127.0.0.1', cidrs)).toMatchObject({ allowed: true, via: 'ipv4Mapped' });
    // … but NAT64 and 6to4 reach another network's gateway: the default policy still applies.
    expect(classifyAddress('64:ff9b::7f00:1', cidrs)).toMatchObject({ allowed: false, via: 'nat64' });
    expect(classifyAddress('2002:7f00:1::', cidrs)).toMatchObject({ allowed: false, via: '6to4' });
  });

  it('describes a refusal in words', () => {
    expect(describeAddressClass(classifyAddress('10.0.0.1'))).toBe('a private address');
    expect(describeAddressClass(classifyAddress('2002:7f00:1::'))).toBe('a loopback address embedded in a 6to4 address');
  });
});

describe('parseCidrList', () => {
  it('parses CIDRs and bare addresses, ignoring blanks', () => {
    expect(parseCidrList('').map((c) => c.text)).toEqual([]);
    expect(parseCidrList(' , ').map((c) => c.text)).toEqual([]);
    expect(parseCidrList('10.0.0.0/8,192.168.1.7, fd00::/8 ,::1').map((c) => c.text)).toEqual([
      '10.0.0.0/8',
      '192.168.1.7/32',
      'fd00::/8',
      '::1/128',
    ]);
  });

  it.each([
    ['10.0.0.0/33', /invalid CIDR '10\.0\.0\.0\/33': the prefix length must be a number from 0 to 32/],
    ['fd00::/129', /from 0 to 128/],
    ['10.0.0.0/', /prefix length/],
    ['10.0.0.0/x', /prefix length/],
    ['banana', /invalid CIDR 'banana': 'banana' is not an IP address/],
    ['127.1/8', /'127\.1' is not an IP address/],
    ['0x7f000001/32', /is not an IP address/],
    ['10.0.0.1/8', /host bits are set; did you mean 10\.0\.0\.0\/8\?/],
    ['fd00::1/8', /did you mean fd00::\/8\?/],
    ['fe80::1%eth0/64', /is not an IP address/],
  ])('rejects %s with a clear message', (entry, message) => {
    expect(() => parseCidrList(`10.0.0.0/8, ${entry}`)).toThrow(message);
  });
});
