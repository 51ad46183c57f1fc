import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argsDigest, canonicalJson, payloadDigest } from './canonical-json.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('gives equal text for equal values whatever the key order', () => {
    expect(canonicalJson({ x: 1, y: 'é' })).toBe(canonicalJson({ y: 'é', x: 1 }));
  });

  it('escapes strings as JSON does and keeps an own __proto__ key', () => {
    expect(canonicalJson({ s: 'a"b\n\u2028' })).toBe('{"s":"a\\"b\\n\u2028"}');
    expect(canonicalJson(JSON.parse('{"__proto__": 1}'))).toBe('{"__proto__":1}');
  });

  it('refuses values JSON cannot carry', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow('non-finite');
    expect(() => canonicalJson({ f: (() => 1) as never })).toThrow('function');
  });
});

describe('digests', () => {
  it('is sha256 of the canonical JSON, prefixed', () => {
    const expected = createHash('sha256').update('{"a":1,"b":2}').digest('hex');
    expect(argsDigest({ b: 2, a: 1 })).toBe(`sha256:${expected}`);
  });

  it('binds tenant, principal, tool, version and args: changing any one changes the digest', () => {
    const base = { tenant: 't', principal: 'p', tool: 'x', version: '1.0.0', args: { a: 1 } };
    const digest = payloadDigest(base);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    for (const changed of [
      { ...base, tenant: 'u' },
      { ...base, principal: 'q' },
      { ...base, tool: 'y' },
      { ...base, version: '1.0.1' },
      { ...base, args: { a: 2 } },
    ]) {
      expect(payloadDigest(changed)).not.toBe(digest);
    }
  });
});
