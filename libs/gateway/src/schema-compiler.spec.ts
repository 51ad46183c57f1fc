import { MAX_DEEP_UNIQUE_ITEMS, SchemaCostRefused, type JsonObject, type JsonSchema, type JsonValue } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { denialOf, harness, testTool } from '../test/harness.js';
import { compileSchema } from './schema-compiler.js';
import { ToolRegistry } from './tool-registry.js';

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

/** The longest argument the API accepts, less room for the envelope. */
const ARGS_BYTES = 64 * 1024 - 64;

/** As many values from `make` as fit in one argument array of at most ARGS_BYTES. */
function filling(make: (i: number) => JsonValue, limit = Number.POSITIVE_INFINITY): JsonValue[] {
  const out: JsonValue[] = [];
  let bytes = 2;
  for (let i = 0; i < limit; i++) {
    const value = make(i);
    const size = JSON.stringify(value).length + 1;
    if (bytes + size > ARGS_BYTES) break;
    bytes += size;
    out.push(value);
  }
  return out;
}

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

/** A tool of an MCP source (so the registry leaves a refused one out instead of throwing). */
function mcpSource(input: JsonSchema): { tool: ReturnType<typeof testTool>; source: { name: string; tools: () => ReturnType<typeof testTool>[] } } {
  const tool = testTool({ name: 'srv__take', provenance: 'mcp:srv', risk: 'high', input: { type: 'object', properties: { u: input as JsonValue }, additionalProperties: false } });
  return { tool, source: { name: 'srv', tools: () => [tool] } };
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

    it('leaves the repro tool of issue 9 out of the registry, so invoke and explain find no tool', async () => {
      const { tool, source } = mcpSource({ type: 'array', uniqueItems: true, maxItems: 100_000 });
      const h = harness();
      const registry = h.registry;
      registry.addSource(source);
      expect(registry.list().map((t) => t.manifest.name)).not.toContain('srv__take');
      const args = { u: Array.from({ length: 9_000 }, (_, i) => [i]) } as JsonObject;
      const started = performance.now();
      expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'srv__take', args }))).toMatchObject({ gate: 'lookup', code: 'TOOL_NOT_FOUND' });
      expect(await h.gateway.explain(h.who('worker-1'), { tool: 'srv__take', args })).toMatchObject({ wouldRun: false, denial: { code: 'TOOL_NOT_FOUND' } });
      expect(performance.now() - started).toBeLessThan(100);
      expect(registry.rejected()).toEqual([
        { source: 'srv', tool: 'srv__take', reason: expect.stringMatching(/^tool 'srv__take': the input schema does not compile: uniqueItems at '#\/properties\/u' compares every pair/) },
      ]);
      expect(tool.calls).toHaveLength(0);
    });

    it('refuses a first-party tool whose schema would compare pairwise, at registration', () => {
      const tool = testTool({ name: 'take', input: { type: 'object', properties: { u: { type: 'array', uniqueItems: true } }, additionalProperties: false } });
      expect(() => new ToolRegistry([tool])).toThrow(/tool 'take': the input schema does not compile: uniqueItems at '#\/properties\/u'/);
      const output = testTool({ name: 'give', output: { type: 'object', properties: { u: { type: 'array', uniqueItems: true, items: { type: 'array' } } } } });
      expect(() => new ToolRegistry([output])).toThrow(/tool 'give': the output schema does not compile: uniqueItems/);
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

    it('answers invoke and explain with the usual enum problem, quickly, through the gateway', async () => {
      const tool = testTool({
        name: 'pick',
        input: { type: 'object', properties: { v: { type: 'array', items: { enum: ENTRIES } }, w: { enum: ['x', 'y'] } }, additionalProperties: false },
      });
      const h = harness({ tools: [tool] });
      const args = { v: filling(() => -1) } as JsonObject;
      // Validation is well under 50 ms (above); the rest of each call is the pipeline's.
      await h.gateway.explain(h.who('worker-1'), { tool: 'pick', args: { v: [-1] } });
      let started = performance.now();
      const invoked = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'pick', args }));
      expect(performance.now() - started).toBeLessThan(500);
      started = performance.now();
      const explained = await h.gateway.explain(h.who('worker-1'), { tool: 'pick', args });
      expect(performance.now() - started).toBeLessThan(500);
      expect(invoked).toMatchObject({ gate: 'input', code: 'INVALID_INPUT' });
      expect(explained).toMatchObject({ wouldRun: false, denial: { gate: 'input', code: 'INVALID_INPUT' } });
      const small = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'pick', args: { w: 'z' } }));
      expect(small.message).toBe(`Invalid arguments for 'pick': 'w' must be one of: "x", "y".`);
      expect(await h.gateway.invoke(h.who('worker-1'), { tool: 'pick', args: { v: [1, 2], w: 'y' } })).toMatchObject({ ok: true });
      expect(tool.calls).toHaveLength(1);
    });
  });
});
