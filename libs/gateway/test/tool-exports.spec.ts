import type { JsonObject, JsonSchema } from '@toolgate/contracts';
import { openObjects } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { describe, expect, it } from 'vitest';
import {
  ALIAS_MAX_LENGTH,
  ALIAS_SHAPE,
  aliasOf,
  aliasPlan,
  closedSchema,
  exportName,
  exportTools,
  resolveAlias,
  TOOL_NAME_RULES,
  toMcpTool,
  type VendorFormat,
} from '../src/registry/tool-exports.js';
import { compileSchema } from '../src/schema/schema-compiler.js';
import { manifestOf } from './manifests.js';

const VENDORS: readonly VendorFormat[] = ['openai', 'anthropic', 'mcp'];
// The vendors' rules as their documentation states them (ADR 0053), written out here rather than
// read from the module, so a loosened rule in the module fails these tests.
const VENDOR_RULES: Record<VendorFormat, RegExp> = {
  openai: /^[a-zA-Z0-9_-]{1,64}$/,
  anthropic: /^[a-zA-Z0-9_-]{1,64}$/,
  mcp: /^[A-Za-z0-9_.-]{1,128}$/,
};
/** What the API accepts as a tool name in `tools.invoke` (libs/api schemas): an alias must be sendable. */
const CALLABLE = /^[a-z][a-z0-9_]{0,127}$/;

const calculator = manifestOf({
  name: 'calculator',
  description: 'Evaluates an arithmetic expression.',
  input: { type: 'object', properties: { expression: { type: 'string', maxLength: 1000 } }, required: ['expression'], additionalProperties: false },
  output: { type: 'object', properties: { result: { type: 'number' } }, required: ['result'] },
});
const nobody = () => false;

describe('the golden definition of one first-party tool, per vendor', () => {
  it('openai: a Chat Completions function tool', () => {
    expect(exportTools([calculator], 'openai', nobody)).toEqual({
      format: 'openai',
      tools: [
        {
          type: 'function',
          function: {
            name: 'calculator',
            description: 'Evaluates an arithmetic expression.',
            parameters: { type: 'object', properties: { expression: { type: 'string', maxLength: 1000 } }, required: ['expression'], additionalProperties: false },
          },
        },
      ],
      aliases: [],
      withheld: [],
    });
  });

  it('anthropic: a Messages API custom tool', () => {
    expect(exportTools([calculator], 'anthropic', nobody)).toEqual({
      format: 'anthropic',
      tools: [
        {
          name: 'calculator',
          description: 'Evaluates an arithmetic expression.',
          input_schema: { type: 'object', properties: { expression: { type: 'string', maxLength: 1000 } }, required: ['expression'], additionalProperties: false },
        },
      ],
      aliases: [],
      withheld: [],
    });
  });

  it('mcp: the tools/list entry /mcp serves, with title, output schema and hints', () => {
    expect(exportTools([calculator], 'mcp', nobody)).toEqual({
      format: 'mcp',
      tools: [
        {
          name: 'calculator',
          title: 'Calculator',
          description: 'Evaluates an arithmetic expression.',
          inputSchema: { type: 'object', properties: { expression: { type: 'string', maxLength: 1000 } }, required: ['expression'], additionalProperties: false },
          outputSchema: { type: 'object', properties: { result: { type: 'number' } }, required: ['result'] },
          annotations: { title: 'Calculator', readOnlyHint: true, destructiveHint: false, openWorldHint: false },
        },
      ],
      aliases: [],
      withheld: [],
    });
    expect(exportTools([calculator], 'mcp', nobody).tools[0]).toBe(toMcpTool(calculator));
  });

  it('toolgate: the manifests themselves, unchanged', () => {
    expect(exportTools([calculator], 'toolgate', nobody)).toEqual({ format: 'toolgate', tools: [calculator], aliases: [], withheld: [] });
  });

  it('keeps the order tools.list shows and every visible tool, none more', () => {
    const tools = [manifestOf({ name: 'b_tool' }), manifestOf({ name: 'a_tool' }), manifestOf({ name: 'c_tool' })];
    expect(exportTools(tools, 'openai', nobody).tools.map((t) => t.function.name)).toEqual(['b_tool', 'a_tool', 'c_tool']);
    expect(exportTools(tools, 'anthropic', nobody).tools.map((t) => t.name)).toEqual(['b_tool', 'a_tool', 'c_tool']);
    expect(exportTools([], 'mcp', nobody).tools).toEqual([]);
  });
});

describe('golden: the first-party calculator as each vendor takes it', () => {
  const description =
    'Evaluates an arithmetic expression exactly as written: numbers, + - * / % ** (power, right-associative; -2**2 = -4), unary signs and parentheses.';
  const schema = {
    type: 'object',
    properties: { expression: { type: 'string', minLength: 1, maxLength: 1000, description: "An arithmetic expression such as '2 + 3 * 4' or '(1.5e3 - 20) % 7'." } },
    required: ['expression'],
    additionalProperties: false,
  };
  const registered = (n: string) => n === 'calculator';

  it('openai', () => {
    expect(exportTools([calculatorTool.manifest], 'openai', registered).tools).toEqual([{ type: 'function', function: { name: 'calculator', description, parameters: schema } }]);
  });

  it('anthropic', () => {
    expect(exportTools([calculatorTool.manifest], 'anthropic', registered).tools).toEqual([{ name: 'calculator', description, input_schema: schema }]);
  });

  it('mcp', () => {
    expect(exportTools([calculatorTool.manifest], 'mcp', registered).tools).toEqual([
      {
        name: 'calculator',
        title: 'Calculator',
        description,
        inputSchema: schema,
        outputSchema: calculatorTool.manifest.output,
        annotations: { title: 'Calculator', readOnlyHint: true, destructiveHint: false, openWorldHint: false },
      },
    ]);
  });
});

describe('closed schemas: every object an agent may send is additionalProperties: false', () => {
  const nested: JsonSchema = {
    type: 'object',
    properties: {
      options: { type: 'object', properties: { encoding: { type: 'string' } } },
      rows: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } },
      pair: { type: 'array', prefixItems: [{ type: 'object', properties: { k: { type: 'string' } } }] },
      maybe: { anyOf: [{ type: 'object', properties: { x: { type: 'number' } } }, { type: 'null' }] },
      loose: { type: 'object', additionalProperties: true, properties: { y: { type: 'string' } } },
      ref: { $ref: '#/$defs/point' },
    },
    $defs: { point: { type: 'object', properties: { lat: { type: 'number' } } } },
  };

  it('closes the top level, nested properties, items, tuple items, a nullable object, an explicitly open object and definitions', () => {
    const closed = closedSchema(nested) as JsonObject;
    expect(openObjects(nested)).toHaveLength(7);
    expect(openObjects(closed)).toEqual([]);
    expect(closed).toMatchObject({
      additionalProperties: false,
      properties: {
        options: { additionalProperties: false },
        rows: { items: { additionalProperties: false } },
        pair: { prefixItems: [{ additionalProperties: false }] },
        maybe: { anyOf: [{ additionalProperties: false }, { type: 'null' }] },
        loose: { additionalProperties: false },
      },
      $defs: { point: { additionalProperties: false } },
    });
  });

  it('does not close the branches of allOf, not or if/then/else (they judge the same value as their parent), only objects inside them', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      allOf: [{ properties: { a: { type: 'integer' } } }, { properties: { b: { type: 'integer' }, c: { type: 'object', properties: {} } } }],
      if: { properties: { a: { const: 1 } } },
      then: { required: ['b'] },
      not: { required: ['z'] },
    };
    const closed = closedSchema(schema) as JsonObject;
    const check = compileSchema(closed);
    expect(check({ a: 1, b: 2 })).toBe(true);
    expect(check({ a: 1, b: 2, z: 3 })).toBe(false);
    expect(((closed['allOf'] as JsonObject[])[0] as JsonObject)['additionalProperties']).toBeUndefined();
    expect(((((closed['allOf'] as JsonObject[])[1] as JsonObject)['properties'] as JsonObject)['c'] as JsonObject)['additionalProperties']).toBe(false);
  });

  it('does not close anyOf branches that refine an object whose properties the parent lists', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: { mode: { type: 'string' }, depth: { type: 'integer' } },
      anyOf: [{ properties: { mode: { const: 'fast' } } }, { properties: { depth: { type: 'integer', minimum: 1 } } }],
      additionalProperties: false,
    };
    const check = compileSchema(closedSchema(schema));
    expect(check({ mode: 'fast', depth: 3 })).toBe(true);
  });

  describe('composition: closing never refuses what the schema allows', () => {
    const accepts = (schema: JsonSchema, value: JsonObject) => compileSchema(closedSchema(schema))(value);

    it('an object whose shape is a union of branches: the branches are closed, not the parent', () => {
      const schema: JsonSchema = {
        type: 'object',
        properties: { pick: { type: 'object', anyOf: [{ properties: { a: { type: 'integer' } }, required: ['a'] }, { properties: { b: { type: 'integer' } }, required: ['b'] }] } },
        additionalProperties: false,
      };
      expect(accepts(schema, { pick: { a: 1 } })).toBe(true);
      expect(accepts(schema, { pick: { b: 1 } })).toBe(true);
      expect(accepts(schema, { pick: { a: 1, c: 1 } })).toBe(false);
      const pick = ((closedSchema(schema) as JsonObject)['properties'] as JsonObject)['pick'] as JsonObject;
      expect(pick['additionalProperties']).toBeUndefined();
    });

    it('an object composed with allOf from a definition and its own branch: neither the definition nor the whole is closed', () => {
      const schema: JsonSchema = {
        type: 'object',
        properties: { item: { type: 'object', allOf: [{ $ref: '#/$defs/base' }, { properties: { extra: { type: 'string' } } }] } },
        $defs: { base: { type: 'object', properties: { name: { type: 'string' } } } },
        additionalProperties: false,
      };
      expect(accepts(schema, { item: { name: 'n', extra: 'e' } })).toBe(true);
    });

    it('a $ref beside properties of its own (2020-12): neither the level nor the definition is closed', () => {
      const schema: JsonSchema = {
        type: 'object',
        properties: { item: { type: 'object', $ref: '#/$defs/base', properties: { x: { type: 'integer' } } } },
        $defs: { base: { type: 'object', properties: { y: { type: 'integer' } } } },
        additionalProperties: false,
      };
      expect(accepts(schema, { item: { x: 1, y: 2 } })).toBe(true);
    });

    it('a definition used alone (a property, a nullable union) is closed', () => {
      const schema: JsonSchema = {
        type: 'object',
        properties: { at: { $ref: '#/$defs/point' }, maybe: { anyOf: [{ $ref: '#/$defs/point' }, { type: 'null' }] } },
        $defs: { point: { type: 'object', properties: { lat: { type: 'number' } } } },
      };
      const closed = closedSchema(schema) as JsonObject;
      expect(((closed['$defs'] as JsonObject)['point'] as JsonObject)['additionalProperties']).toBe(false);
      expect(compileSchema(closed)({ at: { lat: 1 }, maybe: null })).toBe(true);
      expect(compileSchema(closed)({ at: { lat: 1, lon: 2 } })).toBe(false);
    });

    it('an object refined by branches that name only its own properties is closed', () => {
      const schema: JsonSchema = {
        type: 'object',
        properties: { mode: { type: 'string' }, depth: { type: 'integer' } },
        oneOf: [{ required: ['mode'] }, { required: ['depth'] }],
      };
      const closed = closedSchema(schema) as JsonObject;
      expect(closed['additionalProperties']).toBe(false);
      expect(compileSchema(closed)({ mode: 'x' })).toBe(true);
      expect(compileSchema(closed)({ mode: 'x', other: 1 })).toBe(false);
    });

    it('an object whose branches name a property it does not list is left open at that level', () => {
      const schema: JsonSchema = {
        type: 'object',
        properties: { kind: { type: 'string' } },
        if: { properties: { kind: { const: 'file' } } },
        then: { properties: { path: { type: 'string' } }, required: ['path'] },
      };
      expect((closedSchema(schema) as JsonObject)['additionalProperties']).toBeUndefined();
      expect(accepts(schema, { kind: 'file', path: '/a' })).toBe(true);
    });
  });

  it('keeps a typed map a map (its keys are data, and every value is constrained)', () => {
    const schema: JsonSchema = { type: 'object', properties: { env: { type: 'object', additionalProperties: { type: 'string' } } }, additionalProperties: false };
    const closed = closedSchema(schema) as JsonObject;
    expect(((closed['properties'] as JsonObject)['env'] as JsonObject)['additionalProperties']).toEqual({ type: 'string' });
    expect(compileSchema(closed)({ env: { PATH: '/bin' } })).toBe(true);
  });

  it('closes an ignoreUnknownArgs manifest, which drops unknown arguments, in every vendor format', () => {
    const open = manifestOf({ name: 'web_search', ignoreUnknownArgs: true, input: { type: 'object', properties: { query: { type: 'string' } } } });
    const exported = exportTools([open], 'openai', nobody).tools[0]!;
    expect(exported.function.parameters).toEqual({ type: 'object', properties: { query: { type: 'string' } }, additionalProperties: false });
    expect(exportTools([open], 'anthropic', nobody).tools[0]!.input_schema).toEqual(exported.function.parameters);
    expect(exportTools([open], 'mcp', nobody).tools[0]!.inputSchema).toEqual(exported.function.parameters);
    // The manifest itself is not changed: the gateway still drops what the schema does not name.
    expect(open.input).toEqual({ type: 'object', properties: { query: { type: 'string' } } });
  });

  it('copies rather than shares: the export is frozen and the manifest keeps its own objects', () => {
    const m = manifestOf({ name: 'x', input: nested });
    const schema = toMcpTool(m).inputSchema as JsonObject;
    expect(Object.isFrozen(schema)).toBe(true);
    expect(Object.isFrozen(schema['properties'])).toBe(true);
    expect(schema['properties']).not.toBe(nested['properties']);
    expect(Object.isFrozen(nested)).toBe(false);
  });

  it('keeps a property literally named __proto__ as a property, not a prototype', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object","properties":{}}},"additionalProperties":false}') as JsonSchema;
    const closed = closedSchema(schema) as JsonObject;
    expect(Object.keys(closed['properties'] as object)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(closed['properties'])).toBe(Object.prototype);
    expect(((closed['properties'] as Record<string, JsonObject>)['__proto__'] as JsonObject)['additionalProperties']).toBe(false);
  });

  it('withholds a tool whose schema is nested far beyond any the registry admits, naming why, and exports the rest', () => {
    let deep: JsonSchema = { type: 'string' };
    for (let i = 0; i < 200; i++) deep = { type: 'object', properties: { d: deep as JsonObject } };
    const result = exportTools([manifestOf({ name: 'deep', input: deep }), calculator], 'openai', nobody);
    expect(result.tools.map((t) => t.function.name)).toEqual(['calculator']);
    expect(result.withheld).toEqual([{ tool: 'deep', reason: 'the schema is nested too deeply to export' }]);
  });
});

/**
 * Names an upstream MCP server (or a future registry rule) could produce. The registry admits
 * only `[A-Za-z0-9_-]` up to 128 today; the exports must stay valid whatever reaches them.
 */
const HOSTILE_NAMES: readonly [string, string][] = [
  ['dots', 'files__read.text'],
  ['dotted path', 'admin.tools.list'],
  ['a slash', 'user-profile/update'],
  ['200 characters', `files__${'a'.repeat(193)}`],
  ['129 characters', `files__${'b'.repeat(122)}`],
  ['65 characters (one past 64)', `files__${'c'.repeat(58)}`],
  ['unicode letters', 'files__lire_fichier_été'],
  ['a homoglyph (Cyrillic а)', 'files__re\u0430d'],
  ['an emoji', 'files__party_🎉'],
  ['a right-to-left override', 'files__abc\u202Etxt'],
  ['a zero-width space', 'files__re\u200Bad'],
  ['spaces and quotes', "files__it's a tool"],
  ['a newline', 'files__line\nbreak'],
  ['a leading digit', '9lives__x'],
  ['a leading underscore', '_private'],
  ['only punctuation', '...'],
  ['the empty string', ''],
  ['a NUL byte', 'files__a\u0000b'],
  ['SQL-ish', "files__x'; DROP TABLE tools;--"],
];

describe('hostile upstream names: every exported name is valid for its vendor', () => {
  it.each(HOSTILE_NAMES)('%s', (_label, name) => {
    for (const format of VENDORS) {
      const exported = exportName(name, format);
      expect(exported, `${format}: ${JSON.stringify(name)}`).toMatch(VENDOR_RULES[format]);
      expect(TOOL_NAME_RULES[format].source).toBe(VENDOR_RULES[format].source);
      // A name that already fits is exported as itself; one that does not gets its alias.
      if (VENDOR_RULES[format].test(name)) expect(exported).toBe(name);
      else expect(exported).toBe(aliasOf(name));
    }
    const alias = aliasOf(name);
    expect(alias).toMatch(ALIAS_SHAPE);
    expect(alias).toMatch(CALLABLE);
    expect(alias.length).toBeLessThanOrEqual(ALIAS_MAX_LENGTH);
  });

  it('gives every hostile name its own alias, the same one every time', () => {
    const aliases = HOSTILE_NAMES.map(([, name]) => aliasOf(name));
    expect(new Set(aliases).size).toBe(HOSTILE_NAMES.length);
    expect(HOSTILE_NAMES.map(([, name]) => aliasOf(name))).toEqual(aliases);
  });

  it('gives names that sanitise alike different aliases (the hash is of the real name)', () => {
    const alike = ['files__read.text', 'files__read-text', 'files__read/text', 'files__READ_TEXT', 'files__read text', 'files__read_text\u200B'];
    const long = [`files__${'x'.repeat(80)}_one`, `files__${'x'.repeat(80)}_two`];
    for (const group of [alike, long]) {
      const aliases = group.map(aliasOf);
      expect(new Set(aliases).size).toBe(group.length);
      // Same readable prefix, different hash: the alias still says where the tool comes from.
      expect(new Set(aliases.map((a) => a.slice(0, -13))).size).toBe(1);
    }
    // A decomposed accent sanitises to a different prefix, and still to its own alias.
    expect(aliasOf('files__réad_text'.normalize('NFD'))).not.toBe(aliasOf('files__réad_text'.normalize('NFC')));
  });

  it('keeps the server prefix readable in an alias', () => {
    expect(aliasOf(`github__${'create_pull_request_review_comment_'.repeat(3)}`)).toMatch(/^github__create_pull_request_review_comment_create_p_[0-9a-f]{12}$/);
  });

  it('does not alias a name split by `__` into one another server could claim: the prefix keeps its namespace', () => {
    // `a__b` and `a_b` are different servers' namespaces; their aliases must not meet.
    const one = aliasOf(`a__b${'x'.repeat(70)}`);
    const two = aliasOf(`a_b${'x'.repeat(71)}`);
    expect(one.startsWith('a__b')).toBe(true);
    expect(two.startsWith('a_b')).toBe(true);
    expect(one).not.toBe(two);
  });
});

describe('the alias plan: collision-free or withheld', () => {
  const long = (tail: string) => `files__${'q'.repeat(60)}${tail}`;

  it('exports a long name under its alias in openai and anthropic and under its own name in mcp, saying the mapping', () => {
    const tool = manifestOf({ name: long('a'), provenance: 'mcp:files', risk: 'medium' });
    const openai = exportTools([calculator, tool], 'openai', nobody);
    expect(openai.tools.map((t) => t.function.name)).toEqual(['calculator', aliasOf(tool.name)]);
    expect(openai.aliases).toEqual([{ alias: aliasOf(tool.name), tool: tool.name }]);
    expect(exportTools([tool], 'anthropic', nobody).aliases).toEqual(openai.aliases);
    const mcp = exportTools([tool], 'mcp', nobody);
    expect(mcp.tools[0]!.name).toBe(tool.name);
    expect(mcp.aliases).toEqual([]);
  });

  it('withholds a tool whose alias is a registered tool\'s real name (the real name wins on lookup)', () => {
    const tool = manifestOf({ name: long('b') });
    const squatter = aliasOf(tool.name);
    const result = exportTools([tool, calculator], 'openai', (n) => n === squatter);
    expect(result.tools.map((t) => t.function.name)).toEqual(['calculator']);
    expect(result.withheld).toEqual([{ tool: tool.name, reason: `its alias '${squatter}' is the name of another tool` }]);
    expect(resolveAlias([tool.name], squatter, (n) => n === squatter)).toBeUndefined();
  });

  it('withholds every tool sharing an alias, and none of them resolves by it', () => {
    // A deliberately weak alias function meets the collision SHA-256 makes impractical.
    const weak = () => 'files__shared_000000000000';
    const names = [long('c'), long('d')];
    const plan = aliasPlan(names, 'openai', nobody, weak);
    expect(plan.aliases.size).toBe(0);
    expect(plan.withheld.map((w) => w.tool)).toEqual(names);
    expect(plan.withheld[0]!.reason).toContain('shared by 2 tools');
    expect(resolveAlias(names, 'files__shared_000000000000', nobody, weak)).toBeUndefined();
    expect(resolveAlias([names[0]!], 'files__shared_000000000000', nobody, weak)).toBe(names[0]);
  });

  it('resolves an alias only among the names given (the caller\'s visible tools), and never a name that fits as it is', () => {
    const hidden = long('e');
    expect(resolveAlias([hidden], aliasOf(hidden), nobody)).toBe(hidden);
    expect(resolveAlias([], aliasOf(hidden), nobody)).toBeUndefined();
    expect(resolveAlias(['calculator'], aliasOf('calculator'), nobody)).toBeUndefined();
  });

  it.each([
    ['upper case', (a: string) => a.toUpperCase()],
    ['a trailing space', (a: string) => `${a} `],
    ['a truncated hash', (a: string) => a.slice(0, -1)],
    ['another hash', (a: string) => `${a.slice(0, -12)}000000000000`],
    ['the hash alone', (a: string) => a.slice(-12)],
    ['a homoglyph', (a: string) => a.replace('f', '\u0192')],
  ])('does not resolve a near-alias: %s', (_label, spell) => {
    const name = long('f');
    expect(resolveAlias([name], spell(aliasOf(name)), nobody)).toBeUndefined();
  });
});
