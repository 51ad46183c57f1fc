import type { JsonObject, JsonSchema, JsonValue, Repair } from '@toolgate/contracts';
import { setOwn } from './own-property.js';

/**
 * Repairs arguments that failed validation, only in the ways the schema itself spells out:
 *
 * - rename: exactly one required argument is missing and exactly one argument the (closed)
 *   schema does not name is present → the stray one is taken to be the missing one;
 * - coerce, where the schema names a single reading of the value: a scalar where an array is
 *   expected → a one-element array; a numeric string (the whole string, finite) where a number
 *   or integer is expected → that number; a number where a string is expected → its decimal
 *   text; "true"/"false" where a boolean is expected → the boolean;
 * - clamp: a number below `minimum` or above `maximum` → the bound.
 *
 * Values that already have an acceptable type are never touched, and schemas that leave the
 * reading open (`anyOf`, `oneOf`, `allOf`, `not`, `if`, `$ref`) are not repaired inside. The
 * input is not modified; repair details never contain argument values (they go to the audit).
 */
export function repairInput(schema: JsonSchema, args: JsonObject): { args: JsonObject; repairs: Repair[] } {
  const repairs: Repair[] = [];
  const renamed = renameOne(schema, args, repairs);
  const repaired = repairValue(schema, renamed, '', repairs) as JsonObject;
  return { args: repaired, repairs };
}

function renameOne(schema: JsonSchema, args: JsonObject, repairs: Repair[]): JsonObject {
  const properties = schemaObject(schema['properties']);
  const closed = schema['additionalProperties'] === false || schema['unevaluatedProperties'] === false;
  if (!properties || !closed || !Array.isArray(schema['required'])) return args;
  const missing = schema['required'].filter((name): name is string => typeof name === 'string' && !Object.hasOwn(args, name));
  const extra = Object.keys(args).filter((name) => !Object.hasOwn(properties, name));
  if (missing.length !== 1 || extra.length !== 1) return args;
  const [to, from] = [missing[0] as string, extra[0] as string];
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(args)) {
    setOwn(out, key === from ? to : key, value);
  }
  repairs.push({ kind: 'rename', path: pointer('', to), detail: `renamed '${from}' to '${to}'` });
  return out;
}

const OPEN_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'not', 'if', '$ref'];
const NUMERIC = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

function repairValue(schema: unknown, value: JsonValue, path: string, repairs: Repair[]): JsonValue {
  const s = schemaObject(schema);
  if (!s || OPEN_KEYWORDS.some((k) => k in s)) return value;
  let out = coerce(typesOf(s), value, path, repairs);
  if (typeof out === 'number') out = clamp(s, out, path, repairs);
  if (isObject(out)) {
    const properties = schemaObject(s['properties']);
    if (properties) {
      const copy: JsonObject = {};
      for (const [key, item] of Object.entries(out)) {
        setOwn(copy, key, Object.hasOwn(properties, key) ? repairValue(properties[key], item, pointer(path, key), repairs) : item);
      }
      out = copy;
    }
  } else if (Array.isArray(out) && schemaObject(s['items'])) {
    out = out.map((item, i) => repairValue(s['items'], item, pointer(path, String(i)), repairs));
  }
  return out;
}

function coerce(types: readonly string[] | undefined, value: JsonValue, path: string, repairs: Repair[]): JsonValue {
  if (!types || types.some((t) => hasType(t, value))) return value;
  const where = `'${displayPath(path)}'`;
  if (types.includes('array') && value !== null && typeof value !== 'object') {
    repairs.push({ kind: 'coerce', path, detail: `wrapped ${where} in an array` });
    return [value];
  }
  if (typeof value === 'string') {
    if ((types.includes('number') || types.includes('integer')) && NUMERIC.test(value)) {
      const number = Number(value);
      if (Number.isFinite(number) && (types.includes('number') || Number.isInteger(number))) {
        repairs.push({ kind: 'coerce', path, detail: `converted ${where} from a numeric string to a number` });
        return number;
      }
    }
    if (types.includes('boolean') && (value === 'true' || value === 'false')) {
      repairs.push({ kind: 'coerce', path, detail: `converted ${where} from "${value}" to a boolean` });
      return value === 'true';
    }
  }
  if (typeof value === 'number' && types.includes('string')) {
    repairs.push({ kind: 'coerce', path, detail: `converted ${where} from a number to a string` });
    return String(value);
  }
  return value;
}

function clamp(schema: JsonSchema, value: number, path: string, repairs: Repair[]): number {
  const { minimum, maximum } = schema;
  if (typeof minimum === 'number' && value < minimum) {
    repairs.push({ kind: 'clamp', path, detail: `raised '${displayPath(path)}' to the minimum ${minimum}` });
    return minimum;
  }
  if (typeof maximum === 'number' && value > maximum) {
    repairs.push({ kind: 'clamp', path, detail: `lowered '${displayPath(path)}' to the maximum ${maximum}` });
    return maximum;
  }
  return value;
}

function hasType(type: string, value: JsonValue): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return false;
  }
}

function typesOf(schema: JsonSchema): readonly string[] | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return undefined;
}

function schemaObject(value: unknown): JsonSchema | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonSchema) : undefined;
}

function isObject(value: JsonValue): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON pointer (RFC 6901) of a child. */
function pointer(parent: string, key: string): string {
  return `${parent}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/** `/filter/limit` → `filter/limit`: how arguments are named in messages. */
export function displayPath(path: string): string {
  return path === '' ? 'arguments' : path.slice(1).replace(/~1/g, '/').replace(/~0/g, '~');
}
