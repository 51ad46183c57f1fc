// Keywords whose validation cost grows faster than the data it checks, bounded for every schema
// compiler in Toolgate (the gateway's validators and the MCP client's): schemas come from MCP
// servers, arguments from agents, and validation runs on the one event loop. Pure code, so
// contracts still imports nothing; each compiler brings ajv itself.

/**
 * Most items a `uniqueItems` array may hold when its items are not all of a scalar type. ajv then
 * compares every pair by deep equality (n²/2 comparisons); at 50 items the worst 64 KiB argument
 * measured on the shared test box (items that are wide objects nested 30 deep) took about 20 ms,
 * at 100 about 47 ms and at 200 about 80 ms.
 */
export const MAX_DEEP_UNIQUE_ITEMS = 50;

/** Why a schema was refused for what its validation would cost. The message names the keyword. */
export class SchemaCostRefused extends Error {
  override readonly name = 'SchemaCostRefused';
}

const SCALAR_TYPES: ReadonlySet<unknown> = new Set(['string', 'number', 'integer', 'boolean', 'null']);

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether ajv checks uniqueness in one pass: `items` is one schema whose `type` names only
 * scalar types (ajv's own test, `canOptimize` in its uniqueItems keyword).
 */
function scalarItems(node: Readonly<Record<string, unknown>>): boolean {
  const items = node['items'];
  if (!isObject(items)) return false;
  const types = Array.isArray(items['type']) ? items['type'] : [items['type']];
  return types.length > 0 && types.every((t) => SCALAR_TYPES.has(t));
}

// Keywords whose values are data, not schemas: nothing inside them is a keyword.
const DATA_KEYWORDS: ReadonlySet<string> = new Set(['enum', 'const', 'default', 'examples', 'required', 'type', 'dependentRequired']);
// Keywords whose values map names to schemas: a name there (`"uniqueItems": true` as a property
// named uniqueItems) is not a keyword.
const SCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

/**
 * Throws `SchemaCostRefused` when validating against `schema` could take time quadratic in the
 * data: `uniqueItems: true` on items that are not all scalar-typed, unless `maxItems` bounds the
 * array to `MAX_DEEP_UNIQUE_ITEMS`. Walks with its own stack, so a deeply nested (hostile) schema
 * cannot overflow the call stack here.
 */
export function refuseQuadraticKeywords(schema: unknown): void {
  const stack: { node: unknown; path: string }[] = [{ node: schema, path: '#' }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (Array.isArray(node)) {
      node.forEach((item, i) => stack.push({ node: item, path: `${path}/${i}` }));
      continue;
    }
    if (!isObject(node)) continue;
    if (node['uniqueItems'] === true && !scalarItems(node)) {
      const max = node['maxItems'];
      if (typeof max !== 'number' || max > MAX_DEEP_UNIQUE_ITEMS) {
        throw new SchemaCostRefused(
          `uniqueItems at ${pathText(path)} compares every pair of items: it needs items of one scalar type ('string', 'number', 'integer', 'boolean' or 'null') or maxItems of at most ${MAX_DEEP_UNIQUE_ITEMS}`,
        );
      }
    }
    for (const [key, child] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      if (SCHEMA_MAPS.has(key) && isObject(child)) {
        for (const [name, sub] of Object.entries(child)) stack.push({ node: sub, path: `${path}/${key}/${escape(name)}` });
      } else {
        stack.push({ node: child, path: `${path}/${escape(key)}` });
      }
    }
  }
}

function escape(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A JSON pointer fit for a message: short, no control characters. */
function pathText(path: string): string {
  // eslint-disable-next-line no-control-regex -- a schema's names may carry control characters; the message must not
  const flat = path.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
  return `'${flat.length > 120 ? `${flat.slice(0, 119)}…` : flat}'`;
}

/** The key two JSON values share exactly when they are deep-equal; undefined for what no entry can equal. */
function canonical(value: unknown, depthLeft: number): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      // -0 and 0 are equal under `===`, as ajv's deep equality has it.
      return Number.isFinite(value) ? String(value === 0 ? 0 : value) : undefined;
    case 'boolean':
      return String(value);
    case 'object':
      break;
    default:
      return undefined;
  }
  // Deeper than every entry: equal to none of them, and not worth walking.
  if (depthLeft <= 0) return undefined;
  const parts: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      const part = canonical(item, depthLeft - 1);
      if (part === undefined) return undefined;
      parts.push(part);
    }
    return `[${parts.join(',')}]`;
  }
  for (const key of Object.keys(value as object).sort()) {
    const part = canonical((value as Record<string, unknown>)[key], depthLeft - 1);
    if (part === undefined) return undefined;
    parts.push(`${JSON.stringify(key)}:${part}`);
  }
  return `{${parts.join(',')}}`;
}

function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.value === null || typeof item.value !== 'object') continue;
    deepest = Math.max(deepest, item.depth + 1);
    for (const child of Object.values(item.value as object)) stack.push({ value: child, depth: item.depth + 1 });
  }
  return deepest;
}

/**
 * The test of an `enum` keyword: looks a value up in a set of canonical keys, one pass over the
 * value, instead of comparing it with every entry in turn. ajv's own keyword costs (entries ×
 * values) per call: a 10,000-entry enum (what fits in a 64 KiB schema) on the items of a 64 KiB
 * array held the loop for about 2 s. Same meaning: JSON deep equality (key order aside, `1` and
 * `1.0`, `0` and `-0` equal; types never coerced). Throws for an empty list, as ajv does.
 */
export function enumMatcher(entries: readonly unknown[]): (data: unknown) => boolean {
  if (!Array.isArray(entries) || entries.length === 0) throw new Error('enum must have non-empty array');
  const depth = Math.max(...entries.map(depthOf));
  const keys = new Set(entries.map((entry) => canonical(entry, depth)));
  keys.delete(undefined);
  // With scalar entries only, an object or array is equal to none: no key to build.
  return (data) => (depth === 0 && typeof data === 'object' && data !== null ? false : keys.has(canonical(data, depth)));
}
