import { describe, expect, it } from 'vitest';
import { MIN_KEY_BYTES, SignedTokens, type TokenProblem } from '../src/index.js';

const KEY = Buffer.alloc(32, 1);
let now = 1_000_000;
const tokens = new SignedTokens({ key: KEY, now: () => now });
const PURPOSE = 'toolgate/test';

describe('SignedTokens', () => {
  it('round-trips a payload with its expiry', () => {
    const token = tokens.sign(PURPOSE, { a: 'b', n: 1 }, 1000);
    expect(token).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(tokens.verify(PURPOSE, token)).toEqual({ ok: true, payload: { a: 'b', n: 1, exp: now + 1000 } });
  });

  it('refuses a key shorter than 32 bytes, and copies the key it is given', () => {
    expect(() => new SignedTokens({ key: Buffer.alloc(MIN_KEY_BYTES - 1) })).toThrow(/at least 32 bytes/);
    const key = Buffer.alloc(32, 5);
    const mine = new SignedTokens({ key });
    const token = mine.sign(PURPOSE, {}, 1000);
    key.fill(0);
    expect(mine.verify(PURPOSE, token).ok).toBe(true);
  });

  it('refuses to sign a payload over the size cap, so no token is issued that cannot come back', () => {
    expect(() => tokens.sign(PURPOSE, { big: 'x'.repeat(4000) }, 1000)).toThrow(/over the cap of 2048/);
  });

  describe('expiry', () => {
    it('holds until exp and is refused from exp on', () => {
      const token = tokens.sign(PURPOSE, {}, 500);
      now += 499;
      expect(tokens.verify(PURPOSE, token).ok).toBe(true);
      now += 1;
      expect(tokens.verify(PURPOSE, token)).toEqual({ ok: false, problem: 'expired' });
    });
  });

  describe('tampering and forgery (hostile tokens)', () => {
    const good = (): string => tokens.sign(PURPOSE, { t: 'acme', p: 'w' }, 60_000);
    const swap = (s: string, at: number) => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
    const payloadOf = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const cases: [string, (t: string) => unknown, TokenProblem][] = [
      ['a changed payload character', (t) => swap(t, 5), 'bad_signature'],
      ['a changed tag character', (t) => swap(t, t.length - 2), 'bad_signature'],
      ['a payload swapped for an elevated one', (t) => `v1.${payloadOf({ t: 'acme', p: 'boss', exp: now + 60_000 })}.${t.split('.')[2]}`, 'bad_signature'],
      ['a truncated tag (shorter than 32 bytes)', (t) => t.slice(0, -4), 'bad_signature'],
      ['a doubled tag', (t) => t + (t.split('.')[2] ?? ''), 'bad_signature'],
      ['an empty tag', (t) => t.slice(0, t.lastIndexOf('.') + 1), 'malformed'],
      ['no tag', (t) => t.slice(0, t.lastIndexOf('.')), 'malformed'],
      ['an extra segment', (t) => `${t}.AAAA`, 'malformed'],
      ['standard base64 characters (+ and /)', (t) => t.replace(/-/g, '+').replace(/_/g, '/').replace(/\.([^.]*)$/, '.+/$1'), 'malformed'],
      ['padding', (t) => `${t}==`, 'malformed'],
      ['another version', (t) => `v2${t.slice(2)}`, 'unsupported_version'],
      ['an unversioned token', (t) => t.slice(3), 'malformed'],
      ['a version spelled with punctuation', (t) => `v1!${t.slice(2)}`, 'malformed'],
      ['surrounding whitespace', (t) => ` ${t}`, 'malformed'],
      ['a NUL inside', (t) => `${t.slice(0, 6)}\u0000${t.slice(6)}`, 'malformed'],
      ['a huge token', (t) => t + 'A'.repeat(100_000), 'too_large'],
      ['the empty string', () => '', 'malformed'],
      ['a number', () => 42, 'malformed'],
      ['null', () => null, 'malformed'],
      ['an object', () => ({ token: 'v1.a.b' }), 'malformed'],
      ['an array', () => ['v1', 'a', 'b'], 'malformed'],
    ];
    it.each(cases)('%s is refused as %s', (_name, mangle, problem) => {
      expect(tokens.verify(PURPOSE, mangle(good()))).toEqual({ ok: false, problem });
    });

    it('a tag whose last character is spelled another way is refused, though it decodes to the same bytes', () => {
      // 32 bytes take 43 base64url characters, whose last carries 2 bits no decoder reads: four
      // spellings of each tag decode alike. Only the one the server wrote verifies, every time.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      let sameBytes = 0;
      for (let n = 0; n < 16; n += 1) {
        const token = tokens.sign(PURPOSE, { t: 'acme', p: 'w', n }, 60_000);
        const last = alphabet.indexOf(token.at(-1)!);
        for (let low = 1; low < 4; low += 1) {
          const other = `${token.slice(0, -1)}${alphabet[last ^ low]}`;
          expect(Buffer.from(other.split('.')[2]!, 'base64url')).toEqual(Buffer.from(token.split('.')[2]!, 'base64url'));
          sameBytes += 1;
          expect(tokens.verify(PURPOSE, other)).toEqual({ ok: false, problem: 'bad_signature' });
        }
        expect(tokens.verify(PURPOSE, token).ok).toBe(true);
      }
      expect(sameBytes).toBe(48);
    });

    it('a token signed with another key is refused', () => {
      const other = new SignedTokens({ key: Buffer.alloc(32, 2), now: () => now });
      expect(tokens.verify(PURPOSE, other.sign(PURPOSE, { t: 'acme' }, 60_000))).toEqual({ ok: false, problem: 'bad_signature' });
    });

    it('a token signed for one purpose is refused for another, however the purposes are spelled', () => {
      const token = tokens.sign('toolgate/mcp-session', {}, 60_000);
      for (const purpose of ['toolgate/approval-state', 'toolgate/mcp-session ', 'Toolgate/mcp-session', 'toolgate/mcp-session\u0000', '']) {
        expect(tokens.verify(purpose, token)).toEqual({ ok: false, problem: 'bad_signature' });
      }
    });

    it('a correctly signed payload without a numeric exp is refused: the shape is checked after the MAC too', () => {
      // A clock gone wrong writes exp as null (JSON has no NaN); such a token must never verify as unexpiring.
      const broken = new SignedTokens({ key: KEY, now: () => Number.NaN });
      expect(tokens.verify(PURPOSE, broken.sign(PURPOSE, {}, 1000))).toEqual({ ok: false, problem: 'malformed' });
    });
  });
});
