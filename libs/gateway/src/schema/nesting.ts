import { DEFAULT_LIMITS } from '../limits.js';

/** Deepest nesting accepted in tool arguments (API and gateway alike); deeper input could exhaust recursive validators. */
export const MAX_ARGS_DEPTH = 32;

/**
 * Most values (objects, arrays and scalars, the outermost one included) that `bytes` bytes of
 * JSON can hold. Each value takes at least one character of its own (a container two) and all but
 * the first also a comma, or share their container's brackets, so `v` values need `2v - 1` bytes.
 */
export function maxValuesWithin(bytes: number): number {
  return Math.floor((bytes + 1) / 2);
}

/** Most values the size gate could ever accept in arguments of the default 64 KiB: 32,768. */
export const MAX_ARGS_VALUES = maxValuesWithin(DEFAULT_LIMITS.maxArgsBytes);

/** Bounds for {@link jsonBoundsProblem}; a missing one is not checked. */
export interface JsonBounds {
  /** Deepest nesting of objects and arrays (the outermost counts as level 1). */
  readonly maxDepth: number;
  /** Most values in all, the outermost one included. */
  readonly maxValues?: number;
  /** Largest serialized size; the walk compares a lower bound of it (UTF-16 units, no escapes). */
  readonly maxBytes?: number;
  /** Refuse what is not JSON: `undefined`, functions, non-finite numbers, class instances. */
  readonly requireJson?: boolean;
}

/** Why a value is outside its {@link JsonBounds}: the first bound it was seen to break. */
export type JsonBoundsProblem =
  | { readonly kind: 'depth'; readonly limit: number }
  | { readonly kind: 'values'; readonly limit: number }
  | { readonly kind: 'bytes'; readonly limit: number }
  | { readonly kind: 'not-json'; readonly found: string };

/** A plain object as `JSON.parse` makes it (or one without a prototype), not a Date, Map or class instance. */
function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The first bound `value` breaks, or undefined. One iterative pass, linear in what it visits and
 * stopping at the first broken bound: a container's children are counted before any is visited,
 * so 340,000 empty arrays are refused after one addition, not after a walk over all of them.
 * It runs before anything that recurses or does work per value (zod, `JSON.stringify`, canonical
 * JSON, redaction), which hostile nesting or sheer count would otherwise stall or overflow.
 */
export function jsonBoundsProblem(value: unknown, bounds: JsonBounds): JsonBoundsProblem | undefined {
  const { maxDepth, maxValues = Infinity, maxBytes = Infinity, requireJson = false } = bounds;
  // Only containers go on the stack; scalars are measured where they are met, which keeps a
  // walk over 32,768 numbers well under a millisecond.
  const stack: object[] = [];
  const depths: number[] = [];
  let values = 1;
  // A lower bound of the serialized size: every string's characters and quotes, one character per
  // number, the literals, brackets, colons and commas.
  let bytes = 0;
  let problem: JsonBoundsProblem | undefined;
  const meet = (item: unknown, depth: number): void => {
    switch (typeof item) {
      case 'string':
        bytes += item.length + 2;
        return;
      case 'number':
        if (requireJson && !Number.isFinite(item)) problem = { kind: 'not-json', found: String(item) };
        bytes += 1;
        return;
      case 'boolean':
        bytes += item ? 4 : 5;
        return;
      case 'object':
        if (item === null) bytes += 4;
        else if (depth >= maxDepth) problem = { kind: 'depth', limit: maxDepth };
        else if (requireJson && !Array.isArray(item) && !isPlainObject(item)) problem = { kind: 'not-json', found: 'an object that is not plain JSON' };
        else {
          stack.push(item);
          depths.push(depth);
        }
        return;
      default:
        if (requireJson) problem = { kind: 'not-json', found: typeof item };
    }
  };
  meet(value, 0);
  while (problem === undefined && stack.length > 0) {
    const item = stack.pop()!;
    const depth = depths.pop()! + 1;
    if (Array.isArray(item)) {
      // Counted before any child is visited: 340,000 empty arrays are refused after one addition.
      values += item.length;
      if (values > maxValues) return { kind: 'values', limit: maxValues };
      bytes += item.length + 1;
      for (let i = 0; i < item.length && problem === undefined; i++) meet(item[i], depth);
    } else {
      const keys = Object.keys(item);
      values += keys.length;
      if (values > maxValues) return { kind: 'values', limit: maxValues };
      bytes += keys.length + 1;
      for (let i = 0; i < keys.length && problem === undefined; i++) {
        const key = keys[i]!;
        bytes += key.length + 3;
        meet((item as Record<string, unknown>)[key], depth);
      }
    }
    if (bytes > maxBytes) return { kind: 'bytes', limit: maxBytes };
  }
  if (problem === undefined && bytes > maxBytes) return { kind: 'bytes', limit: maxBytes };
  return problem;
}

/**
 * Whether `value` nests at most `limit` objects or arrays deep. Iterative on purpose: a
 * recursive walk (zod, `JSON.stringify`, canonical JSON, redaction) is exactly what hostile
 * nesting attacks, so this runs before any of them and stops at the first level too deep.
 */
export function nestedWithin(value: unknown, limit: number): boolean {
  return jsonBoundsProblem(value, { maxDepth: limit }) === undefined;
}
