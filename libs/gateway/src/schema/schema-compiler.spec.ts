import {
  expandedChecks,
  MAX_CHECKS_ON_ONE_VALUE,
  MAX_DEEP_UNIQUE_ITEMS,
  MAX_SCHEMA_BRANCHES,
  MAX_SCHEMA_CHECKS,
  SchemaCostRefused,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
} from '@toolgate/contracts';
import { filling, MAX_ARGS_ARRAY_BYTES, timeOnThread } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { describeProblems } from './input-problems.js';
import { compileSchema, MAX_SCHEMA_ERRORS } from './schema-compiler.js';

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

/** Runs `work` and returns how long it held the thread, in ms (CPU time where the kernel says). */
const timed = timeOnThread;

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

/** The longest argument the API accepts, less room for the envelope. */
const ARGS_BYTES = MAX_ARGS_ARRAY_BYTES;

/**
 * `count` items that deep equality takes longest to tell apart within one argument: wide objects
 * with the same keys, nested 25 deep (the arguments may nest 32), differing only at the last leaf.
 */
function slowItems(count: number): JsonValue[] {
  const per = Math.floor(ARGS_BYTES / count) - 8;
  return Array.from({ length: count }, (_, i) => {
    let leaf: JsonObject = {};
    for (let j = 0, size = 2 + 25 * 6; size + 12 < per; j++, size += String(j).length + 6) leaf[`k${j}`] = 0;
    leaf['z'] = i;
    for (let d = 0; d < 25; d++) leaf = { a: leaf };
    return leaf;
  });
}

describe('quadratic validation keywords', () => {
  describe('uniqueItems on items deep equality must compare pairwise', () => {
    // Every spelling under which ajv compares every pair of items (its O(n²) path).
    const UNBOUNDED: readonly (readonly [string, JsonSchema])[] = [
      ['untyped items', { type: 'array', uniqueItems: true }],
      ['untyped with a large maxItems', { type: 'array', uniqueItems: true, maxItems: 100_000 }],
      ['one over the bound', { type: 'array', uniqueItems: true, maxItems: MAX_DEEP_UNIQUE_ITEMS + 1 }],
      ['a maxItems that is not a number', { type: 'array', uniqueItems: true, maxItems: '5' }],
      ['object items', { type: 'array', uniqueItems: true, items: { type: 'object' } }],
      ['array items', { type: 'array', uniqueItems: true, items: { type: 'array' } }],
      ['a union with object', { type: 'array', uniqueItems: true, items: { type: ['string', 'object'] } }],
      ['items without type', { type: 'array', uniqueItems: true, items: { enum: [1, 2] } }],
      ['items true', { type: 'array', uniqueItems: true, items: true }],
      ['anyOf of scalars (not one type)', { type: 'array', uniqueItems: true, items: { anyOf: [{ type: 'string' }, { type: 'number' }] } }],
      ['tuple items (draft-07)', { type: 'array', uniqueItems: true, items: [{ type: 'string' }, { type: 'string' }] }],
      ['no type at all', { uniqueItems: true }],
      ['deep inside anyOf and $defs', { $defs: { list: { type: 'array', uniqueItems: true } }, anyOf: [{ $ref: '#/$defs/list' }] }],
      ['under items and properties', { type: 'object', properties: { a: { type: 'array', items: { type: 'array', uniqueItems: true } } } }],
      ['in a not / if / then', { not: { if: { type: 'array' }, then: { uniqueItems: true } } }],
    ];

    it.each(UNBOUNDED)('refuses %s at compile time, naming the keyword', (_, schema) => {
      const attempt = () => compileSchema(schema);
      expect(attempt).toThrow(SchemaCostRefused);
      expect(attempt).toThrow(/^uniqueItems at '#[^']*' compares every pair of items: it needs items of one scalar type .* or maxItems of at most 50$/);
    });

    it('names where the keyword is, in the 2020-12 dialect too', () => {
      expect(() =>
        compileSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { 'we/ird\n': { type: 'array', prefixItems: [{ type: 'string' }], uniqueItems: true } } }),
      ).toThrow("uniqueItems at '#/properties/we~1ird?'");
    });

    it('accepts what ajv checks in one pass, and bounded arrays, and names that only look like the keyword', () => {
      const accepted: JsonSchema[] = [
        { type: 'array', uniqueItems: true, items: { type: 'string' } },
        { type: 'array', uniqueItems: true, items: { type: ['integer', 'null'] } },
        { type: 'array', uniqueItems: true, items: { type: 'boolean' } },
        { type: 'array', uniqueItems: true, maxItems: MAX_DEEP_UNIQUE_ITEMS },
        { type: 'array', uniqueItems: true, maxItems: 3, items: { type: 'object' } },
        { type: 'array', uniqueItems: false },
        { type: 'object', properties: { uniqueItems: true, maxItems: { type: 'number' } } },
        { type: 'object', properties: { tags: { enum: [{ uniqueItems: true }] } } },
      ];
      for (const schema of accepted) {
        expect(typeof compileSchema(schema)).toBe('function');
      }
    });

    it('checks a 64 KiB argument of scalar items in one pass', () => {
      const validate = compileSchema({ type: 'object', properties: { u: { type: 'array', uniqueItems: true, items: { type: 'integer' } } } });
      const items = filling((i) => i);
      expect(items.length).toBeGreaterThan(9_000);
      const { value, ms } = timed(() => validate({ u: items }));
      expect(value).toBe(true);
      expect(ms).toBeLessThan(50);
      expect(validate({ u: [...items, 0] })).toBe(false);
    });

    it(`checks the slowest ${MAX_DEEP_UNIQUE_ITEMS} items that fit in one argument within 50 ms`, () => {
      const validate = compileSchema({ type: 'object', properties: { u: { type: 'array', uniqueItems: true, maxItems: MAX_DEEP_UNIQUE_ITEMS } } });
      const items = slowItems(MAX_DEEP_UNIQUE_ITEMS);
      expect(JSON.stringify({ u: items }).length).toBeGreaterThan(60_000);
      validate({ u: slowItems(5) }); // the first call of a compiled function pays its JIT warm-up
      const { value, ms } = timed(() => validate({ u: items }));
      expect(value).toBe(true);
      expect(ms).toBeLessThan(50);
      // Still a uniqueness check: a duplicate (equal up to key order) is found.
      const twin = JSON.parse(JSON.stringify(items[7])) as JsonValue;
      expect(validate({ u: [...items.slice(0, MAX_DEEP_UNIQUE_ITEMS - 1), twin] })).toBe(false);
      expect(validate.errors?.[0]).toMatchObject({ keyword: 'uniqueItems' });
      expect(validate({ u: [{ a: 1, b: 2 }, { b: 2, a: 1 }] })).toBe(false);
    });
  });

  describe('enum on many values', () => {
    // As many entries as fit in a 64 KiB MCP schema: ajv's own keyword compared each value with every one.
    const ENTRIES = Array.from({ length: 10_000 }, (_, i) => i);
    const OBJECT_ENTRIES = Array.from({ length: 5_000 }, (_, i) => ({ a: i }));

    it.each([
      ['numbers, a 64 KiB array of misses', { type: 'array', items: { enum: ENTRIES } }, filling(() => -1)],
      ['numbers, a 64 KiB array of hits', { type: 'array', items: { enum: ENTRIES } }, filling((i) => i % 10_000)],
      ['objects, a 64 KiB array of scalars', { type: 'array', items: { enum: OBJECT_ENTRIES } }, filling(() => 0)],
      ['objects, a 64 KiB array of near misses', { type: 'array', items: { enum: OBJECT_ENTRIES } }, filling(() => ({ a: -1 }))],
      ['objects, a 64 KiB array of hits', { type: 'array', items: { enum: OBJECT_ENTRIES } }, filling((i) => ({ a: i % 5_000 }))],
      ['strings on object values', { type: 'object', additionalProperties: { enum: ENTRIES.map(String) } }, filling((i) => i % 10_000)],
    ] as const)('checks %s within 50 ms', (name, schema, items) => {
      const validate = compileSchema({ type: 'object', properties: { v: schema as JsonValue } });
      const v = name.startsWith('strings') ? Object.fromEntries((items as JsonValue[]).map((x, i) => [`k${i}`, String(x)])) : items;
      validate({ v: Array.isArray(v) ? v.slice(0, 3) : {} });
      const { value, ms } = timed(() => validate({ v: v as JsonValue }));
      expect(value).toBe(name.includes('hits') || name.startsWith('strings'));
      expect(ms).toBeLessThan(50);
    });

    it('keeps the meaning of enum: JSON deep equality, exact types, order of arrays but not of keys', () => {
      const validate = compileSchema({ enum: [1, 'two', null, false, { a: [1, { b: 2 }], c: 'x' }, [1, 2], 0] });
      for (const yes of [1, 1.0, 'two', null, false, { c: 'x', a: [1, { b: 2 }] }, [1, 2], -0, 0]) expect(validate(yes as JsonValue)).toBe(true);
      for (const no of ['1', 2, 'Two', true, 0.5, {}, { a: [1, { b: 2 }] }, { a: [{ b: 2 }, 1], c: 'x' }, [2, 1], [1, 2, 3], [[1, 2]], '', 'null']) {
        expect(validate(no as JsonValue)).toBe(false);
        expect(validate.errors).toEqual([expect.objectContaining({ keyword: 'enum', instancePath: '', params: { allowedValues: [1, 'two', null, false, { a: [1, { b: 2 }], c: 'x' }, [1, 2], 0] } })]);
      }
      const deep = compileSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { p: { type: 'array', items: { enum: ['a', 'b'] } } } });
      expect(deep({ p: ['a', 'b', 'a'] })).toBe(true);
      expect(deep({ p: ['a', 'c', { a: 1 }] })).toBe(false);
      expect(deep.errors?.map((e) => [e.keyword, e.instancePath])).toEqual([
        ['enum', '/p/1'],
        ['enum', '/p/2'],
      ]);
      expect(() => compileSchema({ enum: [] })).toThrow(/enum/);
      expect(() => compileSchema({ enum: 'a' })).toThrow(/enum/);
    });
  });
});

/** `n` property names: `n0`, `n1`, … */
const names = (n: number, prefix = 'n'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** `levels` definitions, each applying the previous one twice through `keyword` (2^levels leaves). */
function doubling(levels: number, keyword: 'allOf' | 'anyOf' | 'oneOf', defs: '$defs' | 'definitions' = 'definitions'): JsonSchema {
  const table: JsonObject = { d0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) table[`d${i}`] = { [keyword]: [{ $ref: `#/${defs}/d${i - 1}` }, { $ref: `#/${defs}/d${i - 1}` }] };
  return { type: 'object', [defs]: table, properties: { x: { $ref: `#/${defs}/d${levels}` } } };
}

/** The same doubling through the properties of nested objects (each level an object of two). */
function doublingProperties(levels: number): JsonSchema {
  const table: JsonObject = { d0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) table[`d${i}`] = { type: 'object', properties: { a: { $ref: `#/definitions/d${i - 1}` }, b: { $ref: `#/definitions/d${i - 1}` } } };
  return { type: 'object', definitions: table, properties: { x: { $ref: `#/definitions/d${levels}` } } };
}

describe('exponential and error-flooding schemas', () => {
  const required = (n: number): JsonObject => ({ type: 'object', required: names(n) });
  // Every spelling: doubling through each applicator and through properties, long required lists
  // under each keyword that applies them to many values, an in-place loop, and huge branch lists.
  const REFUSED: readonly (readonly [string, JsonSchema, RegExp])[] = [
    ['allOf of two refs, 22 levels (issue 9)', doubling(22, 'allOf'), /the schema's \$ref expansion/],
    ['anyOf of two refs, 22 levels', doubling(22, 'anyOf'), /the schema's \$ref expansion/],
    ['oneOf of two refs, 22 levels', doubling(22, 'oneOf'), /the schema's \$ref expansion/],
    ['allOf in $defs, 2020-12', { ...doubling(22, 'allOf', '$defs'), $schema: 'https://json-schema.org/draft/2020-12/schema' }, /the schema's \$ref expansion/],
    ['allOf of two refs, 14 levels (over the bound on one value)', doubling(14, 'allOf'), /applies up to [\d,]+ checks to one value/],
    ['if/then/else of one ref each', (() => {
      const table: JsonObject = { d0: { type: 'string' } };
      for (let i = 1; i <= 14; i++) table[`d${i}`] = { if: { $ref: `#/definitions/d${i - 1}` }, then: { $ref: `#/definitions/d${i - 1}` }, else: { $ref: `#/definitions/d${i - 1}` } };
      return { type: 'object', definitions: table, properties: { x: { $ref: '#/definitions/d14' } } };
    })(), /the schema's \$ref expansion/],
    ['refs through nested properties, 24 levels', doublingProperties(24), /the schema's \$ref expansion/],
    ['$dynamicRef to a doubling anchor', (() => {
      const table: JsonObject = { d0: { type: 'string' } };
      for (let i = 1; i <= 22; i++) table[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
      table['top'] = { $dynamicAnchor: 'top', $ref: '#/$defs/d22' };
      return { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', $defs: table, properties: { x: { $dynamicRef: '#top' } } };
    })(), /the schema's \$ref expansion/],
    ['5,000 required names under items (issue 9)', { type: 'object', properties: { v: { type: 'array', items: required(5_000) } } }, /costs up to [\d,]+ checks per validation/],
    ['5,000 required names under additionalProperties', { type: 'object', additionalProperties: required(5_000) }, /costs up to [\d,]+ checks per validation/],
    ['5,000 required names under patternProperties', { type: 'object', patternProperties: { '^k': required(5_000) } }, /costs up to [\d,]+ checks per validation/],
    ['5,000 required names under contains', { type: 'object', properties: { v: { type: 'array', contains: required(5_000) } } }, /costs up to [\d,]+ checks per validation/],
    ['5,000 required names behind a ref under items', { type: 'object', definitions: { r: required(5_000) }, properties: { v: { type: 'array', items: { $ref: '#/definitions/r' } } } }, /costs up to/],
    ['a dependentRequired flood under items', { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { v: { type: 'array', items: { type: 'object', dependentRequired: { a: names(5_000) } } } } }, /costs up to/],
    ['an allOf that refers to itself', { type: 'object', allOf: [{ $ref: '#' }] }, /refers back to itself without descending into the arguments/],
    ['two definitions that refer to each other in place', { type: 'object', definitions: { a: { anyOf: [{ $ref: '#/definitions/b' }] }, b: { not: { $ref: '#/definitions/a' } } }, properties: { x: { $ref: '#/definitions/a' } } }, /refers back to itself/],
    ['an anyOf of 2,000 branches (issue 9)', { type: 'object', properties: { x: { anyOf: names(2_000).map((n) => ({ const: n })) } } }, /anyOf has 2000 branches; at most 500/],
    ['a oneOf of 3,000 branches', { type: 'object', properties: { x: { oneOf: names(3_000).map((n) => ({ const: n })) } } }, /oneOf has 3000 branches/],
    ['an allOf of 501 branches', { type: 'object', allOf: names(MAX_SCHEMA_BRANCHES + 1).map(() => ({})) }, /allOf has 501 branches/],
  ];

  it.each(REFUSED)('refuses %s at compile time, naming the reason', (_, schema, reason) => {
    const attempt = () => compileSchema(schema);
    const { ms } = timeOnThread(() => {
      expect(attempt).toThrow(SchemaCostRefused);
      expect(attempt).toThrow(reason);
    });
    // The costing follows refs with memoisation: refusing is quick however large the expansion.
    expect(ms).toBeLessThan(500);
  });

  // Accepted shapes close to a bound, each with the slowest 64 KiB argument built for it.
  const empties = (): JsonValue[] => filling(() => ({}));
  const ints = (): JsonValue[] => filling(() => 1);
  const ACCEPTED: readonly (readonly [string, JsonSchema, () => JsonValue, boolean])[] = [
    ['allOf doubling, 11 levels, valid', doubling(11, 'allOf'), () => ({ x: '' }), true],
    ['allOf doubling, 11 levels, invalid', doubling(11, 'allOf'), () => ({ x: 1 }), false],
    ['anyOf doubling, 9 levels, every branch failing', doubling(9, 'anyOf'), () => ({ x: 1 }), false],
    ['oneOf doubling, 9 levels, every branch failing', doubling(9, 'oneOf'), () => ({ x: 1 }), false],
    ['70 required names under items, 21,000 empty items', { type: 'object', properties: { v: { type: 'array', items: required(70) } } }, () => ({ v: empties() }), false],
    ['70 required names under items, items that have them', { type: 'object', properties: { v: { type: 'array', items: required(70) } } }, () => ({ v: filling(() => Object.fromEntries(names(70).map((n) => [n, 0]))) }), true],
    ['3 required names under additionalProperties, 5,000 empty values', { type: 'object', additionalProperties: required(3) }, () => Object.fromEntries(filling(() => ({}), 5_000).map((v, i) => [`k${i}`, v])), false],
    ['oneOf of 5 failing branches and one passing, on every item', { type: 'object', properties: { v: { type: 'array', items: { oneOf: [...names(5).map(() => ({ type: 'string' })), {}] } } } }, () => ({ v: ints() }), true],
    [
      'items that match the second of two object variants',
      { type: 'object', properties: { v: { type: 'array', items: { oneOf: ['p', 'q'].map((n) => ({ type: 'object', properties: Object.fromEntries(names(10, n).map((m) => [m, { type: 'string' }])), required: [`${n}0`] })) } } } },
      () => ({ v: filling(() => ({ q0: '' })) }),
      true,
    ],
    [
      'a recursive tree, 31 levels deep and wide',
      { type: 'object', $defs: { n: { type: 'object', properties: { name: { type: 'string', minLength: 1 }, kids: { type: 'array', items: { $ref: '#/$defs/n' } } }, required: ['name'] } }, properties: { root: { $ref: '#/$defs/n' } } },
      () => {
        let node: JsonObject = { name: 'z', kids: filling(() => ({ name: 'a' }), 2_000) };
        for (let d = 0; d < 14; d++) node = { name: 'x', kids: [node] };
        return { root: node };
      },
      true,
    ],
  ];

  it.each(ACCEPTED)('accepts %s and validates it within 50 ms', (_, schema, data, valid) => {
    expect(expandedChecks(schema)).toBeLessThanOrEqual(MAX_SCHEMA_CHECKS);
    const validate = compileSchema(schema);
    const args = data();
    expect(JSON.stringify(args).length).toBeLessThanOrEqual(64 * 1024);
    const { value, ms } = timed(() => validate(args));
    expect(value).toBe(valid);
    expect(ms).toBeLessThan(50);
    if (!valid) expect(validate.errors?.length).toBeGreaterThan(0);
    if (!valid) expect(validate.errors!.length).toBeLessThanOrEqual(MAX_SCHEMA_ERRORS);
  });

  it('costs a doubling chain at 2ⁿ without expanding it, so the bound is where the issue measured', () => {
    const one = expandedChecks(doubling(10, 'allOf'));
    expect(expandedChecks(doubling(11, 'allOf'))).toBeGreaterThan(1.9 * one);
    expect(() => compileSchema(doubling(11, 'allOf'))).not.toThrow();
    expect(MAX_CHECKS_ON_ONE_VALUE).toBeLessThan(2 ** 22);
  });

  it('reports the first problem of a flooding argument, and every problem of a small one', () => {
    const validate = compileSchema({ type: 'object', properties: { v: { type: 'array', items: required(3) } } });
    const flood = { v: filling(() => ({})) };
    expect(flood.v.length).toBeGreaterThan(20_000);
    const { value, ms } = timed(() => validate(flood));
    expect(value).toBe(false);
    expect(ms).toBeLessThan(50);
    expect(validate.errors).toHaveLength(1);
    expect(describeProblems(validate.errors)).toEqual(["missing required argument 'n0' in 'v/0'"]);
    expect(validate({ v: [{ n0: 1 }, {}] })).toBe(false);
    expect(describeProblems(validate.errors)).toEqual([
      "missing required argument 'n1' in 'v/0'",
      "missing required argument 'n2' in 'v/0'",
      "missing required argument 'n0' in 'v/1'",
      "missing required argument 'n1' in 'v/1'",
      "missing required argument 'n2' in 'v/1'",
    ]);
  });

  it('turns a validator that runs out of stack into a failed validation naming why, never a throw', () => {
    const validate = compileSchema({ type: 'object', $defs: { l: { type: 'array', items: { $ref: '#/$defs/l' } } }, properties: { l: { $ref: '#/$defs/l' } } });
    let deep: JsonValue = [];
    for (let d = 0; d < 100_000; d++) deep = [deep];
    expect(validate({ l: deep })).toBe(false);
    expect(describeProblems(validate.errors)).toEqual(["'arguments' could not be checked against the tool's schema (its validator ran out of stack); the call is refused"]);
    expect(validate({ l: [[]] })).toBe(true);
  });
});
