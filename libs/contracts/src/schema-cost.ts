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
 * array to `MAX_DEEP_UNIQUE_ITEMS`; and (`refuseExpensiveExpansion`) when the worst validation
 * would take more than `MAX_SCHEMA_CHECKS` checks. Walks with its own stack, so a deeply nested
 * (hostile) schema cannot overflow the call stack here.
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
  refuseExpensiveExpansion(schema);
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

/**
 * Most schema checks one validation may take in the worst case (`expandedChecks`), for arguments
 * of at most `MAX_COSTED_VALUES` values nested at most `MAX_COSTED_DEPTH` deep. A check is one
 * keyword (one name of a `required` list, one entry of `properties`) applied to one value; on the
 * shared test box the slowest accepted shapes measured at this bound validate in well under 50 ms.
 */
export const MAX_SCHEMA_CHECKS = 2_500_000;
/**
 * Most checks the refs and applicators of a schema may apply to one value (`allOf`, `anyOf`,
 * `oneOf`, `not`, `if`/`then`/`else`, refs, expanded). Failing branches' errors are kept until the
 * value is decided, so a deep expansion is costlier per check than the same checks spread over
 * many values: a doubling `anyOf` chain took about 45 ms at 786,000 checks on one value.
 */
export const MAX_CHECKS_ON_ONE_VALUE = 20_000;
/** Most branches of one `anyOf`, `oneOf` or `allOf`: ajv's compiler ran out of stack at 3,000, its validator at 2,000. */
export const MAX_SCHEMA_BRANCHES = 500;
/**
 * What one failing `anyOf`/`oneOf` branch (or `not`, `if`) costs beyond its checks, in checks: it
 * builds an error object, measured at about ten times a check.
 */
export const BRANCH_ERROR_CHECKS = 10;
/** Values the costing assumes arguments may hold: what 64 KiB of JSON can (the gateway's cap). */
export const MAX_COSTED_VALUES = 32_768;
/** Nesting the costing assumes arguments may reach (the gateway's depth cap, outermost = 1). */
export const MAX_COSTED_DEPTH = 32;

// Subschemas applied to the value their parent checks (in place): their costs add up there.
const IN_PLACE_LISTS: readonly string[] = ['allOf', 'anyOf', 'oneOf'];
const IN_PLACE_ONE: readonly string[] = ['not', 'if', 'then', 'else'];
// Subschemas applied to each item of an array, or to each property (or property name) of an object.
const ITEM_ONE: readonly string[] = ['items', 'additionalItems', 'contains', 'unevaluatedItems'];
const KEY_ONE: readonly string[] = ['additionalProperties', 'unevaluatedProperties', 'propertyNames'];
const REF_KEYWORDS: readonly string[] = ['$ref', '$dynamicRef', '$recursiveRef'];

// Keywords that check nothing (annotations, identifiers, containers of definitions).
const ANNOTATIONS: ReadonlySet<string> = new Set([
  'title', 'description', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly',
  '$schema', '$id', '$anchor', '$dynamicAnchor', '$defs', 'definitions', 'contentMediaType', 'contentEncoding',
]);

type Costs = Map<number, { outermost?: number | 'busy'; nested?: number }>;

/**
 * The most checks validating one value against `schema` can take, following every `$ref`,
 * `$dynamicRef` and `$recursiveRef` (with memoisation, so a chain of definitions that each use
 * the previous one twice costs 2ⁿ without being expanded 2ⁿ times): the checks on the outermost
 * value, plus `maxValues` times the most checks any one nested value can receive. Subschemas
 * applied in place (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, refs,
 * `dependentSchemas`) add up on that value; those applied to items and properties move one level
 * down into the data, which is at most `maxDepth` deep, so a recursive ref costs what the data can
 * nest. An over-approximation: every branch is taken, every property present, every pattern hit.
 * Throws `SchemaCostRefused` for a ref that refers back to itself without descending into the
 * data (it would never end), or that points at nothing this costing can find.
 */
export function expandedChecks(schema: unknown, maxValues = MAX_COSTED_VALUES, maxDepth = MAX_COSTED_DEPTH): number {
  const { outermost, nested } = schemaCost(schema, maxDepth);
  return outermost + (maxValues - 1) * nested;
}

/** What `expandedChecks` adds up, apart: checks on the outermost value, and the most on any one nested value. */
export interface SchemaCost {
  readonly outermost: number;
  readonly nested: number;
}

/** The two parts of `expandedChecks` (see there), for data nested at most `maxDepth` deep. */
export function schemaCost(schema: unknown, maxDepth = MAX_COSTED_DEPTH): SchemaCost {
  const anchors = anchorsOf(schema);
  const hasIds = anchors.has(ID_MARK);
  const memo = new Map<object, Costs>();
  const costsAt = (node: object, depth: number): { outermost?: number | 'busy'; nested?: number } => {
    let byDepth = memo.get(node);
    if (!byDepth) memo.set(node, (byDepth = new Map()));
    let costs = byDepth.get(depth);
    if (!costs) byDepth.set(depth, (costs = {}));
    return costs;
  };
  const refTargets = (node: Readonly<Record<string, unknown>>): unknown[] => {
    const targets: unknown[] = [];
    for (const keyword of REF_KEYWORDS) {
      const ref = node[keyword];
      if (typeof ref !== 'string') continue;
      const found = resolveRef(schema, anchors, ref, keyword === '$dynamicRef');
      // Without an `$id` in the schema, a ref that is not to '#…' names nothing ajv can find in
      // it (the compilers load nothing remote): its compile refuses it with ajv's own message.
      if (found.length === 0 && hasIds) {
        throw new SchemaCostRefused(`the schema's ${keyword} '${short(ref)}' cannot be followed to cost it: with $id in the schema, only '#', '#/…' pointers and '#name' anchors are allowed`);
      }
      targets.push(...found);
    }
    return targets;
  };
  const inPlace = (node: Readonly<Record<string, unknown>>): unknown[] => {
    const subs: unknown[] = refTargets(node);
    for (const keyword of IN_PLACE_LISTS) {
      const list = node[keyword];
      if (!Array.isArray(list)) continue;
      // ajv's generated code nests one block per branch: thousands overflow its compiler or its stack.
      if (list.length > MAX_SCHEMA_BRANCHES) throw new SchemaCostRefused(`${keyword} has ${list.length} branches; at most ${MAX_SCHEMA_BRANCHES} are allowed (use enum for a list of values)`);
      subs.push(...(list as unknown[]));
    }
    for (const keyword of IN_PLACE_ONE) if (keyword in node) subs.push(node[keyword]);
    for (const keyword of ['dependentSchemas', 'dependencies']) {
      const map = node[keyword];
      if (isObject(map)) for (const sub of Object.values(map)) if (!Array.isArray(sub)) subs.push(sub);
    }
    return subs;
  };
  // Checks on the value itself: one per keyword, one per listed name.
  const local = (node: Readonly<Record<string, unknown>>): number => {
    let checks = Math.max(1, Object.keys(node).filter((keyword) => !ANNOTATIONS.has(keyword)).length);
    // A branch that fails builds an error object even when validation stops at the first error.
    for (const keyword of ['anyOf', 'oneOf']) if (Array.isArray(node[keyword])) checks += BRANCH_ERROR_CHECKS * (node[keyword] as unknown[]).length;
    for (const keyword of ['not', 'if']) if (keyword in node) checks += BRANCH_ERROR_CHECKS;
    for (const keyword of ['required', 'prefixItems', 'items']) if (Array.isArray(node[keyword])) checks += (node[keyword] as unknown[]).length;
    for (const keyword of ['properties', 'patternProperties']) if (isObject(node[keyword])) checks += Object.keys(node[keyword] as object).length;
    for (const keyword of ['dependentRequired', 'dependencies']) {
      const map = node[keyword];
      if (isObject(map)) for (const list of Object.values(map)) checks += Array.isArray(list) ? list.length + 1 : 1;
    }
    return checks;
  };
  // Subschemas applied to the children of the checked value, by who they apply to.
  const children = (node: Readonly<Record<string, unknown>>): { named: unknown[]; anyKey: unknown[]; item: unknown[] } => {
    const item: unknown[] = [];
    for (const keyword of ITEM_ONE) if (keyword in node && !Array.isArray(node[keyword])) item.push(node[keyword]);
    for (const keyword of ['items', 'prefixItems']) if (Array.isArray(node[keyword])) item.push(...(node[keyword] as unknown[]));
    const anyKey: unknown[] = [];
    for (const keyword of KEY_ONE) if (keyword in node) anyKey.push(node[keyword]);
    if (isObject(node['patternProperties'])) anyKey.push(...Object.values(node['patternProperties']));
    const named = isObject(node['properties']) ? Object.values(node['properties']) : [];
    return { named, anyKey, item };
  };
  let cyclic: Set<unknown>;
  try {
    cyclic = cyclicNodes(schema, (node) => {
      const { named, anyKey, item } = children(node);
      return [...inPlace(node), ...named, ...anyKey, ...item];
    });
  } catch (error) {
    if (error instanceof RangeError) throw new SchemaCostRefused("the schema's $ref expansion is too deep to cost");
    throw error;
  }
  // The cost of validating a value v against a node is at most `outermost + nested × (values in v − 1)`.
  // `outermost`: the node's own checks and those applied in place, plus, once, those of each named
  // property (one value per object), unless that property's schema recurs (then it is charged per
  // value, in `nested`: a recursive schema with two named recursive properties would double per
  // level otherwise). `nested`: the most checks any one value below can cost beyond that.
  // Checks applied in place to one value: errors built there are kept until the value is decided.
  const sameValue = new Map<object, number | 'busy'>();
  const onOneValue = (node: unknown): number => {
    if (!isObject(node)) return 1;
    const known = sameValue.get(node);
    if (known === 'busy') throw new SchemaCostRefused("the schema's $ref expansion refers back to itself without descending into the arguments: validation would never end");
    if (known !== undefined) return known;
    sameValue.set(node, 'busy');
    let total = local(node);
    for (const sub of inPlace(node)) total += onOneValue(sub);
    if (total > MAX_CHECKS_ON_ONE_VALUE) {
      throw new SchemaCostRefused(
        `the schema's $ref expansion applies up to ${formatChecks(total)} checks to one value (through allOf/anyOf/oneOf/not/if and refs); at most ${formatChecks(MAX_CHECKS_ON_ONE_VALUE)} are allowed`,
      );
    }
    sameValue.set(node, total);
    return total;
  };
  const outermost = (node: unknown, depth: number): number => {
    if (!isObject(node)) return 1;
    onOneValue(node);
    const costs = costsAt(node, depth);
    if (costs.outermost === 'busy') throw new SchemaCostRefused("the schema's $ref expansion refers back to itself without descending into the arguments: validation would never end");
    if (costs.outermost !== undefined) return costs.outermost;
    costs.outermost = 'busy';
    let total = local(node);
    for (const sub of inPlace(node)) total += outermost(sub, depth);
    if (depth > 0) for (const sub of children(node).named) if (!cyclic.has(sub)) total += outermost(sub, depth - 1);
    costs.outermost = total;
    return total;
  };
  const perValue = (node: unknown, depth: number): number => Math.max(outermost(node, depth), nested(node, depth));
  const nested = (node: unknown, depth: number): number => {
    if (!isObject(node) || depth <= 0) return 0;
    const costs = costsAt(node, depth);
    if (costs.nested !== undefined) return costs.nested;
    outermost(node, depth); // refuses an in-place cycle before it is walked here
    const { named, anyKey, item } = children(node);
    let items = 0;
    for (const sub of item) items += perValue(sub, depth - 1);
    let keys = 0;
    for (const sub of anyKey) keys += perValue(sub, depth - 1);
    let property = 0;
    for (const sub of named) property = Math.max(property, cyclic.has(sub) ? perValue(sub, depth - 1) : nested(sub, depth - 1));
    let total = Math.max(items, property + keys);
    for (const sub of inPlace(node)) total += nested(sub, depth);
    costs.nested = total;
    return total;
  };
  try {
    return { outermost: outermost(schema, maxDepth - 1), nested: nested(schema, maxDepth - 1) };
  } catch (error) {
    // A ref chain too long for the stack is refused, not crashed on.
    if (error instanceof RangeError) throw new SchemaCostRefused("the schema's $ref expansion is too deep to cost");
    throw error;
  }
}

/**
 * Throws `SchemaCostRefused` when the worst validation against `schema` (`expandedChecks`) would
 * take more than `MAX_SCHEMA_CHECKS` checks: a schema of a few kilobytes whose refs double at
 * every level, or a long `required` list under `items`, could otherwise hold the event loop for
 * seconds on one call.
 */
export function refuseExpensiveExpansion(schema: unknown): void {
  const checks = expandedChecks(schema);
  if (checks > MAX_SCHEMA_CHECKS) {
    throw new SchemaCostRefused(
      `the schema's $ref expansion (with its applicators, items and required lists) costs up to ${formatChecks(checks)} checks per validation of 64 KiB of arguments; at most ${formatChecks(MAX_SCHEMA_CHECKS)} are allowed`,
    );
  }
}

function formatChecks(checks: number): string {
  return checks >= 1e15 ? 'more than 10^15' : Math.round(checks).toLocaleString('en-US');
}

function short(text: string): string {
  // eslint-disable-next-line no-control-regex -- a schema's ref may carry control characters; the message must not
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}

/**
 * The subschemas that can reach themselves (through refs, applicators or children), by Tarjan's
 * strongly connected components: only these can recur as deep as the data goes.
 */
function cyclicNodes(root: unknown, edges: (node: Readonly<Record<string, unknown>>) => unknown[]): Set<unknown> {
  const index = new Map<unknown, number>();
  const low = new Map<unknown, number>();
  const onStack = new Set<unknown>();
  const stack: unknown[] = [];
  const cyclic = new Set<unknown>();
  const visit = (node: Readonly<Record<string, unknown>>): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    let selfLoop = false;
    for (const next of edges(node)) {
      if (!isObject(next)) continue;
      if (next === node) selfLoop = true;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: unknown[] = [];
    let member: unknown;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || selfLoop) for (const m of component) cyclic.add(m);
  };
  if (isObject(root)) visit(root);
  return cyclic;
}

// Recorded among the anchors when some node has an id: no anchor name can contain '#'.
const ID_MARK = '#id';

/** Every `$anchor` and `$dynamicAnchor` of a schema, by name (several nodes may share a dynamic one). */
function anchorsOf(schema: unknown): Map<string, unknown[]> {
  const anchors = new Map<string, unknown[]>();
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (!isObject(node)) continue;
    for (const keyword of ['$anchor', '$dynamicAnchor']) {
      const name = node[keyword];
      if (typeof name === 'string') anchors.set(name, [...(anchors.get(name) ?? []), node]);
    }
    if (typeof node['$id'] === 'string') anchors.set(ID_MARK, []);
    for (const [key, child] of Object.entries(node)) if (!DATA_KEYWORDS.has(key)) stack.push(child);
  }
  return anchors;
}

/** What a ref inside the schema points at: `#`, a `#/…` JSON pointer, or a `#name` anchor; [] if nothing. */
function resolveRef(root: unknown, anchors: Map<string, unknown[]>, ref: string, dynamic: boolean): unknown[] {
  if (ref === '#') return [root];
  if (ref.startsWith('#/')) {
    let node: unknown = root;
    for (const raw of ref.slice(2).split('/')) {
      let part: string;
      try {
        part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        return [];
      }
      if (Array.isArray(node) && /^(0|[1-9][0-9]*)$/.test(part)) node = node[Number(part)];
      else if (isObject(node) && Object.hasOwn(node, part)) node = node[part];
      else return [];
    }
    return node === undefined ? [] : [node];
  }
  if (ref.startsWith('#') && ref.length > 1) {
    // A dynamic ref may land on any node holding that dynamic anchor: all of them are costed.
    const found = anchors.get(ref.slice(1)) ?? [];
    return dynamic ? found : found.slice(0, 1);
  }
  return [];
}
