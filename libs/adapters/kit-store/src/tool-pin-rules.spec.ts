import { describe, expect, it } from 'vitest';
import { checkToolPin, isPinnableToolName, MAX_PIN_TOOL_LENGTH, sha256Digest } from './tool-pin-rules.js';

/**
 * The canonical form as the port words it (and the gateway's `canonicalJson` writes it), in the
 * plainest code: keys sorted by UTF-16 code units, scalars by `JSON.stringify`. The kit's writer
 * is written for speed; it must agree with this on every value.
 */
function reference(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  const object = value as Record<string, unknown>;
  return `{${Object.keys(object)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${reference(object[key])}`)
    .join(',')}}`;
}

/** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Keys and strings that sort or escape differently by code unit, code point or locale.
const TEXTS = ['a', 'B', '_', '-', 'é', 'e\u0301', '😀', '\uffff', '\u0000', '\u001f', '"', '\\', '/', '\u2028', '\ud800', '__proto__', 'constructor', ''];
const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 5e-324, Number.MAX_SAFE_INTEGER, 123.456];

function value(next: () => number, depth: number): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const kind = depth > 4 ? Math.floor(next() * 4) : Math.floor(next() * 6);
  switch (kind) {
    case 0:
      return pick(TEXTS) + pick(TEXTS);
    case 1:
      return pick(NUMBERS);
    case 2:
      return pick([true, false, null]);
    case 3:
      return pick(TEXTS);
    case 4:
      return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
    default:
      return object(next, depth + 1);
  }
}

function object(next: () => number, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const count = Math.floor(next() * 5);
  for (let i = 0; i < count; i++) {
    const key = TEXTS[Math.floor(next() * TEXTS.length)] + TEXTS[Math.floor(next() * TEXTS.length)]!;
    Object.defineProperty(out, key, { value: value(next, depth), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

const pinWith = (definition: string) => ({
  tool: 'files__read_file',
  provenance: 'mcp:files',
  digest: sha256Digest(definition),
  definition,
  pinnedAt: 0,
  pinnedBy: 'first-seen',
});

describe('canonical definitions', () => {
  it('accepts what the plain canonical writer writes, for 2,000 generated objects', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const text = reference(object(random(seed), 1));
      expect(() => checkToolPin(pinWith(text)), `seed ${seed}`).not.toThrow();
    }
  });

  it('refuses every other spelling of the same objects: keys out of order, or a space', () => {
    let reordered = 0;
    for (let seed = 1; seed <= 2000; seed++) {
      const generated = object(random(seed), 1);
      const keys = Object.keys(generated);
      const text = reference(generated);
      expect(() => checkToolPin(pinWith(`${text} `)), `seed ${seed}`).toThrow(/pin\.definition is not canonical JSON/);
      const reversed = `{${[...keys]
        .sort()
        .reverse()
        .map((key) => `${JSON.stringify(key)}:${reference(generated[key])}`)
        .join(',')}}`;
      if (reversed !== text) {
        reordered++;
        expect(() => checkToolPin(pinWith(reversed)), `seed ${seed}`).toThrow(/pin\.definition is not canonical JSON/);
      }
    }
    expect(reordered).toBeGreaterThan(500);
  });
});

describe('checkToolPin', () => {
  it('returns a copy holding only the port’s fields', () => {
    const pin = pinWith('{"name":"read_file"}');
    const checked = checkToolPin({ ...pin, tenant: 'acme', toJSON: () => 'x' });
    expect(checked).toEqual(pin);
    expect(Object.keys(checked).sort()).toEqual(['definition', 'digest', 'pinnedAt', 'pinnedBy', 'provenance', 'tool']);
  });

  it('digests UTF-8 bytes as SHA-256 (the empty string and a two-byte character)', () => {
    expect(sha256Digest('')).toBe('sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Digest('é')).toBe(sha256Digest(Buffer.from([0xc3, 0xa9]).toString('utf8')));
  });
});

describe('isPinnableToolName', () => {
  it.each(['files__read_file', 'a', 'web_search', 'gh-x__List.Issues', 'x'.repeat(MAX_PIN_TOOL_LENGTH)])('accepts %j', (name) => {
    expect(isPinnableToolName(name)).toBe(true);
  });
  it.each(['', 'x'.repeat(MAX_PIN_TOOL_LENGTH + 1), 'a b', 'a\u0000', 'é', 'a/b', 42, null])('refuses %j', (name) => {
    expect(isPinnableToolName(name)).toBe(false);
  });
});
