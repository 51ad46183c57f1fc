import type { JsonSchema } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { compileSchema } from './schema-compiler.js';

describe('compileSchema', () => {
  it('compiles once per schema object and once per schema text', () => {
    const a = { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false };
    const b = JSON.parse(JSON.stringify(a));
    expect(compileSchema(a)).toBe(compileSchema(a));
    expect(compileSchema(b)).toBe(compileSchema(a));
  });

  it('does not coerce, default or remove anything while validating', () => {
    const validate = compileSchema({ type: 'object', properties: { n: { type: 'number', default: 1 } }, additionalProperties: false });
    const args = { n: '5' };
    expect(validate(args)).toBe(false);
    expect(args).toEqual({ n: '5' });
  });

  it('refuses unknown keywords (strict) and understands formats and draft 2020-12', () => {
    expect(() => compileSchema({ type: 'string', frobnicate: 1 })).toThrow(/unknown keyword/);
    expect(compileSchema({ type: 'string', format: 'email' })('not-an-email')).toBe(false);
    expect(compileSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'number' }], items: false, minItems: 1 })(['x'])).toBe(false);
  });

  it('bounds the cache for sources that keep sending new schemas', () => {
    const first = { type: 'object', properties: { k0: { type: 'string' } }, required: ['k0'] };
    const original = compileSchema(JSON.parse(JSON.stringify(first)));
    for (let i = 1; i <= 1000; i++) compileSchema({ type: 'object', properties: { [`k${i}`]: { type: 'string' } }, required: [`k${i}`] });
    const again = compileSchema(JSON.parse(JSON.stringify(first)));
    expect(again).not.toBe(original);
    expect(again({ k0: 'x' })).toBe(true);
    expect(again({})).toBe(false);
  });
});

/** Runs `work` and returns how long it held the thread, in ms. */
function timed<T>(work: () => T): { value: T; ms: number } {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}

// Patterns that take exponential (or high-polynomial) time on a backtracking engine, each with
// an input that sends it there. On the linear engine every one answers in well under 100 ms.
const HOSTILE: readonly (readonly [string, string])[] = [
  ['^(a+)+$', `${'a'.repeat(30_000)}!`],
  ['(a|aa)+$', `${'a'.repeat(30_000)}!`],
  ['(.*a){20}', `${'a'.repeat(19)}${'b'.repeat(30_000)}`],
  ['^(\\w+\\s?)*$', `${'word '.repeat(6_000)}!`],
  ['^(a|a?)+$', `${'a'.repeat(30_000)}!`],
  ['(x+x+)+y', 'x'.repeat(30_000)],
  ['^(([a-z])+.)+[A-Z]([a-z])+$', `${'aaaaaaaaaa'.repeat(3_000)}!`],
  ['^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$', `${'a'.repeat(30_000)}@`],
];

describe('catastrophic backtracking in schema patterns', () => {
  it.each(HOSTILE)('`pattern` %s answers in linear time', (pattern, input) => {
    const validate = compileSchema({ type: 'object', properties: { s: { type: 'string', pattern } }, additionalProperties: false });
    const { value, ms } = timed(() => validate({ s: input }));
    expect(value).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ keyword: 'pattern' });
    expect(ms).toBeLessThan(100);
  });

  it.each(HOSTILE)('a `patternProperties` key %s answers in linear time', (pattern, input) => {
    const validate = compileSchema({ type: 'object', patternProperties: { [pattern]: { type: 'number' } }, additionalProperties: false });
    const { value, ms } = timed(() => validate({ [input]: 1 }));
    expect(value).toBe(false);
    expect(ms).toBeLessThan(100);
  });

  it.each(HOSTILE)('a `propertyNames` pattern %s answers in linear time', (pattern, input) => {
    const validate = compileSchema({ type: 'object', propertyNames: { pattern } });
    const { value, ms } = timed(() => validate({ [input]: 1 }));
    expect(value).toBe(false);
    expect(ms).toBeLessThan(100);
  });

  it.each(HOSTILE)('%s answers in linear time in the 2020-12 dialect too, nested in items and anyOf', (pattern, input) => {
    const validate = compileSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'array',
      items: { anyOf: [{ type: 'number' }, { type: 'string', pattern }] },
    });
    const { value, ms } = timed(() => validate([1, input]));
    expect(value).toBe(false);
    expect(ms).toBeLessThan(100);
  });

  it('compiles a schema whose property names would send its patternProperties into backtracking', () => {
    // Strict mode would otherwise test every pattern against every `properties` name while compiling.
    const names = Object.fromEntries(HOSTILE.map(([, input], i) => [`${input.slice(0, 40)}!${i}`, { type: 'string' }]));
    const { value, ms } = timed(() =>
      compileSchema({ type: 'object', properties: names, patternProperties: Object.fromEntries(HOSTILE.map(([p]) => [p, { type: 'string' }])) }),
    );
    expect(typeof value).toBe('function');
    expect(ms).toBeLessThan(500);
  });

  it('keeps the meaning of the patterns it runs', () => {
    const check = (pattern: string, text: string) => compileSchema({ type: 'string', pattern })(text);
    expect(check('^(a+)+$', 'aaaa')).toBe(true);
    expect(check('(a|aa)+$', 'xaa')).toBe(true);
    expect(check('^(\\w+\\s?)*$', 'two words')).toBe(true);
    expect(check('^\\d{3}-\\d{4}$', '555-1234')).toBe(true);
    expect(check('^\\d{3}-\\d{4}$', '555-12345')).toBe(false);
  });
});

describe('patterns a linear-time engine cannot run', () => {
  const REFUSED: readonly (readonly [string, RegExp])[] = [
    ['(a)\\1', /backreference/],
    ['^(a+)\\1$', /backreference/],
    ['(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10', /backreference/],
    ['(?<word>\\w+) \\k<word>', /named backreference/],
    ['foo(?=bar)', /lookahead/],
    ['foo(?!bar)', /lookahead/],
    ['(?<=\\$)\\d+', /lookbehind/],
    ['(?<!-)\\d+', /lookbehind/],
    ['a{1001}', /repeat count/],
    ['\\p{Script_Extensions=Greek}', /Unicode property/],
    ['(unclosed', /not a valid ECMA-262/],
    ['\\uD800', /lone surrogate/],
  ];

  it.each(REFUSED)('refuses %s at compile time, naming the pattern and why', (pattern, why) => {
    const attempt = (schema: JsonSchema) => () => compileSchema(schema);
    for (const schema of [
      { type: 'string', pattern },
      { type: 'object', patternProperties: { [pattern]: { type: 'number' } } },
      { type: 'object', propertyNames: { pattern } },
      { type: 'object', properties: { deep: { type: 'array', items: { type: 'string', pattern } } } },
    ]) {
      expect(attempt(schema)).toThrow(why);
      expect(attempt(schema)).toThrow(`pattern '${pattern}'`);
    }
  });
});

describe('the linear reading of ECMA-262 patterns', () => {
  const check = (pattern: string, text: string) => compileSchema({ type: 'string', pattern })(text);

  it('reads \\s, \\S, . and $ as ECMA-262 does, not as RE2 does', () => {
    expect(check('^\\s$', '\u00a0')).toBe(true);
    expect(check('^\\s$', '\u2028')).toBe(true);
    expect(check('^\\s$', '\ufeff')).toBe(true);
    expect(check('^[\\s]$', '\u3000')).toBe(true);
    expect(check('^[^\\S]$', '\u00a0')).toBe(true);
    expect(check('^\\S$', '\u00a0')).toBe(false);
    expect(check('^.$', '\r')).toBe(false);
    expect(check('^.$', '\u2029')).toBe(false);
    expect(check('^.$', '😀')).toBe(true);
    expect(check('a$', 'a\n')).toBe(false);
    expect(check('^[^]$', '\n')).toBe(true);
    expect(check('[]', 'anything')).toBe(false);
    expect(check('^\\u{1F600}$', '😀')).toBe(true);
    expect(check('^\\uD83D\\uDE00$', '😀')).toBe(true);
    expect(check('^\\p{Lu}\\p{Ll}+$', 'Éa')).toBe(true);
    expect(check('^\\p{Script=Greek}+$', 'αβγ')).toBe(true);
    expect(check('^[\\b]$', '\b')).toBe(true);
    expect(check('^\\cJ$', '\n')).toBe(true);
    expect(check('^(?<year>\\d{4})$', '2026')).toBe(true);
    expect(check('^[[]$', '[')).toBe(true);
    expect(check('^[a\\-z]+$', '-az')).toBe(true);
    expect(check('^[a\\-z]+$', 'b')).toBe(false);
  });

  it('agrees with the native engine on thousands of generated patterns and inputs', () => {
    // A seeded generator, so a failure names a pattern that reproduces.
    let seed = 0x2025;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pick = <T>(items: readonly T[]): T => items[rand(items.length)] as T;
    const ATOMS = ['a', 'b', '.', '\\s', '\\S', '\\d', '\\w', '\\W', '\\b', '\\B', '[ab]', '[^a]', '[\\s]', '[^\\S]', '[\\d_-]', '\\u00a0', '\\x61', '\\.', '\\n', '😀', '[😀b]', '\\p{L}'];
    const QUANTIFIERS = ['', '', '', '*', '+', '?', '{1,2}', '*?', '{2}'];
    const atom = (depth: number): string => {
      if (depth < 2 && rand(5) === 0) return `(${term(depth + 1)}|${term(depth + 1)})`;
      if (depth < 2 && rand(6) === 0) return `(?:${term(depth + 1)})`;
      return pick(ATOMS);
    };
    const term = (depth: number): string => {
      let out = '';
      for (let n = 1 + rand(3); n > 0; n--) {
        const a = atom(depth);
        out += a === '\\b' || a === '\\B' ? a : a + pick(QUANTIFIERS);
      }
      return out;
    };
    const ALPHABET = ['a', 'b', ' ', '\u00a0', '\n', '\r', '\u2028', '1', '_', '😀', '-', '.', 'é'];
    let compared = 0;
    for (let p = 0; p < 1500; p++) {
      const pattern = (rand(3) === 0 ? '^' : '') + term(0) + (rand(3) === 0 ? '$' : '');
      const native = new RegExp(pattern, 'u');
      const validate = compileSchema({ type: 'string', pattern });
      for (let s = 0; s < 12; s++) {
        let text = '';
        for (let n = rand(7); n > 0; n--) text += pick(ALPHABET);
        expect({ pattern, text, matches: validate(text) }).toEqual({ pattern, text, matches: native.test(text) });
        compared++;
      }
    }
    expect(compared).toBe(18_000);
  });
});

describe('the regex format', () => {
  it('accepts ECMA-262 patterns and refuses unparsable or over-long ones without matching anything', () => {
    const validate = compileSchema({ type: 'string', format: 'regex' });
    expect(validate('^(a+)+$')).toBe(true);
    expect(validate('(a)\\1')).toBe(true);
    expect(validate('(unclosed')).toBe(false);
    const { value, ms } = timed(() => validate('a|'.repeat(30_000)));
    expect(value).toBe(false);
    expect(ms).toBeLessThan(50);
  });
});
