import { DEFAULT_LIMITS } from './gateway-deps.js';

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
  const stack: unknown[] = [value];
  const depths: number[] = [0];
  let values = 1;
  // A lower bound of the serialized size: every string's characters and quotes, one character per
  // number, the literals, brackets, colons and commas.
  let bytes = 0;
  while (stack.length > 0) {
    const item = stack.pop();
    const depth = depths.pop()!;
    switch (typeof item) {
      case 'string':
        bytes += item.length + 2;
        break;
      case 'number':
        if (requireJson && !Number.isFinite(item)) return { kind: 'not-json', found: String(item) };
        bytes += 1;
        break;
      case 'boolean':
        bytes += item ? 4 : 5;
        break;
      case 'object': {
        if (item === null) {
          bytes += 4;
          break;
        }
        if (depth >= maxDepth) return { kind: 'depth', limit: maxDepth };
        if (Array.isArray(item)) {
          values += item.length;
          if (values > maxValues) return { kind: 'values', limit: maxValues };
          bytes += item.length + 1;
          for (let i = 0; i < item.length; i++) {
            stack.push(item[i]);
            depths.push(depth + 1);
          }
          break;
        }
        if (requireJson && !isPlainObject(item)) return { kind: 'not-json', found: 'an object that is not plain JSON' };
        const keys = Object.keys(item);
        values += keys.length;
        if (values > maxValues) return { kind: 'values', limit: maxValues };
        bytes += keys.length + 1;
        for (const key of keys) {
          bytes += key.length + 3;
          stack.push((item as Record<string, unknown>)[key]);
          depths.push(depth + 1);
        }
        break;
      }
      default:
        if (requireJson) return { kind: 'not-json', found: typeof item };
    }
    if (bytes > maxBytes) return { kind: 'bytes', limit: maxBytes };
  }
  return undefined;
}

/**
 * Whether `value` nests at most `limit` objects or arrays deep. Iterative on purpose: a
 * recursive walk (zod, `JSON.stringify`, canonical JSON, redaction) is exactly what hostile
 * nesting attacks, so this runs before any of them and stops at the first level too deep.
 */
export function nestedWithin(value: unknown, limit: number): boolean {
  return jsonBoundsProblem(value, { maxDepth: limit }) === undefined;
}
