import { describe, expect, it } from 'vitest';
import { isStorableText, jsonObjectText, requireInteger, requireName, requireText } from './text-rules.js';

describe('requireText / isStorableText', () => {
  it.each(['', 'tenant-a', 'é€😀', 'line\nbreak', '\uD83D\uDE00'])('accepts %j', (text) => {
    expect(requireText('id', text)).toBe(text);
    expect(isStorableText(text)).toBe(true);
  });

  it.each([
    ['a NUL character', 'a\u0000b'],
    ['a lone high surrogate', 'a\uD83D'],
    ['a lone low surrogate', '\uDE00b'],
    ['surrogates in the wrong order', '\uDE00\uD83D'],
  ])('refuses %s: a SQL store could not give it back unchanged', (_what, text) => {
    expect(() => requireText('id', text)).toThrow(new TypeError('id must be well-formed Unicode text without NUL characters'));
    expect(isStorableText(text)).toBe(false);
  });

  it.each([undefined, null, 42, ['a'], { toString: () => 'a' }])('refuses the non-string %j', (value) => {
    expect(() => requireText('tenant', value)).toThrow(new TypeError('tenant must be a string'));
    expect(isStorableText(value)).toBe(false);
  });
});

describe('requireName', () => {
  it('accepts non-empty text and refuses empty or unstorable text', () => {
    expect(requireName('channel', 'ops')).toBe('ops');
    expect(() => requireName('channel', '')).toThrow(new TypeError('channel must not be empty'));
    expect(() => requireName('channel', 'a\u0000')).toThrow('channel must be well-formed Unicode text');
    expect(() => requireName('channel', 7)).toThrow('channel must be a string');
  });
});

describe('requireInteger', () => {
  it.each([0, -1, 1_700_000_000_000, Number.MAX_SAFE_INTEGER])('accepts %s', (value) => {
    expect(requireInteger('now', value)).toBe(value);
  });

  it.each([1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '1', 1n, null])('refuses %s', (value) => {
    expect(() => requireInteger('now', value)).toThrow(new TypeError('now must be an integer (epoch milliseconds or a count)'));
  });
});

describe('jsonObjectText', () => {
  it.each([[null], [[1, 2]], ['text'], [3], [undefined]])('refuses %j as not a JSON object', (value) => {
    expect(() => jsonObjectText('args', value)).toThrow(new TypeError('args must be a JSON object'));
  });

  it('stores NUL and lone surrogates escaped, so the text itself is storable', () => {
    const text = jsonObjectText('args', { a: 'x\u0000y', b: '\uD83D' });
    expect(isStorableText(text)).toBe(true);
    expect(JSON.parse(text)).toEqual({ a: 'x\u0000y', b: '\uD83D' });
  });

});
