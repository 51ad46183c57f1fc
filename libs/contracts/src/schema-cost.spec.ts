import { describe, expect, it } from 'vitest';
import {
  expandedChecks,
  MAX_CHECKS_ON_ONE_VALUE,
  MAX_COSTED_VALUES,
  MAX_SCHEMA_CHECKS,
  refuseExpensiveExpansion,
  refuseQuadraticKeywords,
  schemaCost,
  SchemaCostRefused,
} from './schema-cost.js';

/**
 * The CPU time synchronous `work` took (user and system, over this test process's threads), which
 * a loaded box does not stretch as it does the wall clock. contracts' tests import only vitest, so
 * this stands in for `timeOnThread` of @toolgate/testing; it counts at least this thread's time.
 */
function cpuMs(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

/** `levels` definitions, each applying the previous one twice through `keyword`. */
function doubling(levels: number, keyword = 'allOf'): Record<string, unknown> {
  const defs: Record<string, unknown> = { d0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) defs[`d${i}`] = { [keyword]: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
  return { type: 'object', $defs: defs, properties: { x: { $ref: `#/$defs/d${levels}` } } };
}

describe('exponential and error-flooding schemas: the cost model', () => {
  it('costs a doubling chain at 2ⁿ by memoisation, and refuses a long one at once', () => {
    const ten = schemaCost(doubling(10)).outermost;
    expect(schemaCost(doubling(11)).outermost).toBe(2 * ten - 1);
    const ms = cpuMs(() => {
      expect(() => expandedChecks(doubling(60))).toThrow(/applies up to [\d,]+ checks to one value .* at most 20,000/);
      expect(() => expandedChecks(doubling(60, 'oneOf'))).toThrow(SchemaCostRefused);
    });
    expect(ms).toBeLessThan(100);
  });

  it('charges data-applied subschemas per value, named properties once, and annotations not at all', () => {
    expect(schemaCost({ type: 'array', items: { type: 'object', required: ['a', 'b', 'c'] } })).toEqual({ outermost: 2, nested: 5 });
    expect(expandedChecks({ type: 'array', items: { type: 'object', required: ['a', 'b', 'c'] } })).toBe(2 + 5 * (MAX_COSTED_VALUES - 1));
    const plain = schemaCost({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } } });
    expect(plain).toEqual({ outermost: 6, nested: 0 });
    expect(schemaCost({ type: 'object', title: 't', description: 'd', $comment: 'c', examples: [1], properties: { a: { type: 'string', description: 'x' }, b: { type: 'number' } } })).toEqual(plain);
  });

  it('costs recursion by what 32 levels of data hold, also with two recursive properties', () => {
    const tree = { type: 'object', $defs: { n: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/n' } } } } }, properties: { root: { $ref: '#/$defs/n' } } };
    const binary = { type: 'object', $defs: { n: { type: 'object', properties: { l: { $ref: '#/$defs/n' }, r: { $ref: '#/$defs/n' } } } }, properties: { root: { $ref: '#/$defs/n' } } };
    for (const schema of [tree, binary]) expect(expandedChecks(schema)).toBeLessThan(MAX_SCHEMA_CHECKS / 4);
    expect(expandedChecks(binary, MAX_COSTED_VALUES, 8)).toBeLessThanOrEqual(expandedChecks(binary));
  });

  it.each([
    ['allOf of itself', { allOf: [{ $ref: '#' }] }],
    ['anyOf of itself', { anyOf: [{ type: 'string' }, { $ref: '#' }] }],
    ['two definitions in a ring', { $defs: { a: { not: { $ref: '#/$defs/b' } }, b: { if: { $ref: '#/$defs/a' } } }, $ref: '#/$defs/a' }],
    ['an anchor that names its own node', { $defs: { a: { $anchor: 'me', allOf: [{ $ref: '#me' }] } }, $ref: '#/$defs/a' }],
  ])('refuses %s: validation would never end', (_, schema) => {
    expect(() => refuseExpensiveExpansion(schema)).toThrow(/refers back to itself without descending into the arguments/);
  });

  it('follows anchors and dynamic refs, and refuses a ref it cannot follow only where an $id could resolve it', () => {
    const viaAnchor = { type: 'object', $defs: { r: { $anchor: 'rows', type: 'object', required: Array.from({ length: 5_000 }, (_, i) => `n${i}`) } }, properties: { v: { type: 'array', items: { $ref: '#rows' } } } };
    expect(() => refuseQuadraticKeywords(viaAnchor)).toThrow(/costs up to [\d,]+ checks per validation/);
    const dynamic: Record<string, unknown> = { ...doubling(22), properties: { x: { $dynamicRef: '#top' } } };
    (dynamic['$defs'] as Record<string, unknown>)['top'] = { $dynamicAnchor: 'top', $ref: '#/$defs/d22' };
    expect(() => refuseQuadraticKeywords(dynamic)).toThrow(SchemaCostRefused);
    expect(() => refuseQuadraticKeywords({ $id: 'https://example.invalid/a', properties: { x: { $ref: 'b.json' } } })).toThrow(/\$ref 'b.json' cannot be followed to cost it/);
    expect(() => refuseQuadraticKeywords({ properties: { x: { $ref: 'https://example.invalid/b.json' } } })).not.toThrow();
  });

  it('bounds branch lists', () => {
    expect(() => refuseQuadraticKeywords({ anyOf: Array.from({ length: 501 }, () => ({})) })).toThrow(/anyOf has 501 branches; at most 500/);
    expect(() => refuseQuadraticKeywords({ oneOf: Array.from({ length: 500 }, (_, i) => ({ const: i })) })).not.toThrow();
    expect(MAX_CHECKS_ON_ONE_VALUE).toBeLessThan(MAX_SCHEMA_CHECKS);
  });

  // Shapes of the official MCP servers' tools (filesystem, fetch, memory, github, git) and the
  // repo's MCP fixtures' kinds: each costs well under the bound.
  it.each([
    ['filesystem edit_file', { type: 'object', properties: { path: { type: 'string' }, edits: { type: 'array', items: { type: 'object', properties: { oldText: { type: 'string' }, newText: { type: 'string' } }, required: ['oldText', 'newText'], additionalProperties: false } }, dryRun: { type: 'boolean', default: false } }, required: ['path', 'edits'] }],
    ['fetch', { type: 'object', properties: { url: { type: 'string', format: 'uri', minLength: 1 }, max_length: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 1000000, default: 5000 }, start_index: { type: 'integer', minimum: 0 }, raw: { type: 'boolean' } }, required: ['url'] }],
    ['memory create_entities', { type: 'object', properties: { entities: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, entityType: { type: 'string' }, observations: { type: 'array', items: { type: 'string' } } }, required: ['name', 'entityType', 'observations'] } } }, required: ['entities'] }],
    ['github create_issue', { type: 'object', properties: { owner: { type: 'string' }, repo: { type: 'string' }, title: { type: 'string' }, body: { type: 'string' }, assignees: { type: 'array', items: { type: 'string' } }, labels: { type: 'array', items: { type: 'string' } }, milestone: { type: 'number' } }, required: ['owner', 'repo', 'title'], additionalProperties: false, $schema: 'http://json-schema.org/draft-07/schema#' }],
    ['a union of two object variants under items', { type: 'object', properties: { ops: { type: 'array', items: { anyOf: [{ type: 'object', properties: { add: { type: 'string' } }, required: ['add'] }, { type: 'object', properties: { remove: { type: 'string' } }, required: ['remove'] }] } } } }],
    ['a recursive filter of and/or arrays', { type: 'object', $defs: { f: { anyOf: [{ type: 'object', properties: { and: { type: 'array', items: { $ref: '#/$defs/f' } } }, required: ['and'] }, { type: 'object', properties: { field: { type: 'string' }, eq: { type: 'string' } }, required: ['field'] }] } }, properties: { where: { $ref: '#/$defs/f' } } }],
  ])('accepts %s well under the bound', (_, schema) => {
    expect(() => refuseQuadraticKeywords(schema)).not.toThrow();
    expect(expandedChecks(schema)).toBeLessThan(MAX_SCHEMA_CHECKS / 2);
  });
});
