import type { JsonObject, JsonSchema, JsonValue, Repair, ToolManifest } from '@toolgate/contracts';
import { setOwn } from './own-property.js';

/** A number the repair would have moved to a bound, left as it was because clamping is off. */
export interface WithheldClamp {
  /** JSON pointer of the argument, e.g. `/count`. */
  readonly path: string;
  readonly bound: 'minimum' | 'maximum';
  readonly limit: number;
}

/** How far the repair may go. */
export interface RepairOptions {
  /**
   * Whether a number beyond `minimum`/`maximum` is moved to the bound (ADR 0063: not for
   * high-risk tools unless their manifest opts in). When false such a number is left as it is
   * and reported in `withheld`, so validation refuses it.
   */
  readonly clamp?: boolean;
}

/**
 * Whether the repair may clamp this tool's arguments (ADR 0063): a clamp changes what the call
 * does, so `high` and `critical` tools are clamped only when their manifest opts in with
 * `repair: { clamp: true }`; low- and medium-risk tools unless it says `clamp: false`. Anything
 * but the literal `true` leaves a high-risk tool unclamped.
 */
export function clampsArguments(manifest: Pick<ToolManifest, 'risk' | 'repair'>): boolean {
  const policy: unknown = manifest.repair;
  // Only the manifest's own setting counts: not one inherited from a prototype, nor a non-object.
  const asked = typeof policy === 'object' && policy !== null && Object.hasOwn(policy, 'clamp') ? (policy as { clamp?: unknown }).clamp : undefined;
  return manifest.risk === 'high' || manifest.risk === 'critical' ? asked === true : asked !== false;
}

/**
 * Repairs arguments that failed validation, only in the ways the schema itself spells out:
 *
 * - rename: exactly one required argument is missing and exactly one argument the (closed)
 *   schema does not name is present → the stray one is taken to be the missing one;
 * - coerce, where the schema names a single reading of the value: a scalar where an array is
 *   expected → a one-element array; a decimal string where a number or integer is expected →
 *   that number, only if the number holds it exactly (see {@link exactNumber}: otherwise the
 *   string is left as it is and its path reported in `inexact`, so validation refuses it); a
 *   number where a string is expected → its decimal text; "true"/"false" where a boolean is
 *   expected → the boolean;
 * - clamp (unless `options.clamp` is false): a number below `minimum` or above `maximum` → the
 *   bound. Strings over `maxLength` and arrays over `maxItems` are never cut: cutting changes
 *   what the value says, not only how much of it.
 *
 * Values that already have an acceptable type are never touched, and schemas that leave the
 * reading open (`anyOf`, `oneOf`, `allOf`, `not`, `if`, `$ref`) are not repaired inside. The
 * input is not modified; repair details never contain argument values (they go to the audit).
 */
export function repairInput(
  schema: JsonSchema,
  args: JsonObject,
  options: RepairOptions = {},
): { args: JsonObject; repairs: Repair[]; withheld: WithheldClamp[]; inexact: string[] } {
  const repairs: Repair[] = [];
  const withheld: WithheldClamp[] = [];
  const inexact: string[] = [];
  const renamed = renameOne(schema, args, repairs);
  const repaired = repairValue(schema, renamed, '', { repairs, withheld, inexact, clamp: options.clamp !== false }) as JsonObject;
  return { args: repaired, repairs, withheld, inexact };
}

/** What one repair pass collects, and whether it may clamp. */
interface Pass {
  readonly repairs: Repair[];
  readonly withheld: WithheldClamp[];
  /** JSON pointers of decimal strings a number cannot hold exactly, left unconverted. */
  readonly inexact: string[];
  readonly clamp: boolean;
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
/**
 * A decimal as an agent may spell it: optional sign, digits with an optional point, optional
 * exponent. No whitespace, hex, `Infinity` or `NaN`; no leading zero before another digit
 * (`"0755"` reads as octal to some callers, so it has no single reading).
 */
const NUMERIC = /^[+-]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
/** Any decimal spelling, including the ones `String(number)` writes (`1e+21`, `-1.5e-7`). */
const DECIMAL = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/;

function repairValue(schema: unknown, value: JsonValue, path: string, pass: Pass): JsonValue {
  const s = schemaObject(schema);
  if (!s || OPEN_KEYWORDS.some((k) => k in s)) return value;
  let out = coerce(typesOf(s), value, path, pass);
  if (typeof out === 'number') out = clamp(s, out, path, pass);
  if (isObject(out)) {
    const properties = schemaObject(s['properties']);
    if (properties) {
      const copy: JsonObject = {};
      for (const [key, item] of Object.entries(out)) {
        setOwn(copy, key, Object.hasOwn(properties, key) ? repairValue(properties[key], item, pointer(path, key), pass) : item);
      }
      out = copy;
    }
  } else if (Array.isArray(out) && schemaObject(s['items'])) {
    out = out.map((item, i) => repairValue(s['items'], item, pointer(path, String(i)), pass));
  }
  return out;
}

function coerce(types: readonly string[] | undefined, value: JsonValue, path: string, pass: Pass): JsonValue {
  const repairs = pass.repairs;
  if (!types || types.some((t) => hasType(t, value))) return value;
  const where = `'${displayPath(path)}'`;
  if (types.includes('array') && value !== null && typeof value !== 'object') {
    repairs.push({ kind: 'coerce', path, detail: `wrapped ${where} in an array` });
    return [value];
  }
  if (typeof value === 'string') {
    if ((types.includes('number') || types.includes('integer')) && NUMERIC.test(value)) {
      const number = exactNumber(value);
      if (number === undefined) pass.inexact.push(path);
      else if (types.includes('number') || Number.isInteger(number)) {
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

/**
 * The number a decimal string names, only if that number is exactly the same decimal value: the
 * string and the number's own shortest decimal (`String(n)`, which reads back as `n`) have the
 * same digits and the same scale once signs, leading and trailing zeros, point and exponent are
 * normalised. So `"10"`, `"10.0"`, `"1e1"` and `"+10"` are 10 and `"0.1"` is 0.1, but
 * `"9007199254740993"` (it would run as …992), `"10.0000000000000001"` (as 10, under a maximum of
 * 10), `"1e400"` (Infinity) and `"1e-400"` (0) have no exact number and give undefined. Zero in
 * any spelling (`"-0"`, `"0.0e5"`) is 0: a decimal zero has no sign.
 */
export function exactNumber(text: string): number | undefined {
  const wanted = normalDecimal(text);
  if (wanted === undefined) return undefined;
  const number = Number(text);
  if (!Number.isFinite(number)) return undefined;
  if (wanted.digits === '') return number === 0 ? 0 : undefined;
  const got = normalDecimal(String(number));
  return got !== undefined && got.negative === wanted.negative && got.digits === wanted.digits && got.exponent === wanted.exponent ? number : undefined;
}

/** A decimal as sign, significant digits (no leading or trailing zeros; '' for zero) and the power of ten of the last digit. */
function normalDecimal(text: string): { negative: boolean; digits: string; exponent: number } | undefined {
  const match = DECIMAL.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exp = '0'] = match;
  if (whole === '' && fraction === '') return undefined;
  // An exponent too long for a safe integer cannot name a finite, exact double anyway.
  const power = Number(exp);
  if (!Number.isSafeInteger(power)) return undefined;
  const all = whole + fraction;
  // Index loops, not /0+$/: that regex retries from every zero of a long run (quadratic).
  let first = 0;
  while (first < all.length && all.charCodeAt(first) === 48) first += 1;
  let end = all.length;
  while (end > first && all.charCodeAt(end - 1) === 48) end -= 1;
  const digits = all.slice(first, end);
  const exponent = power - fraction.length + (all.length - end);
  return { negative: sign === '-' && digits !== '', digits, exponent: digits === '' ? 0 : exponent };
}

function clamp(schema: JsonSchema, value: number, path: string, pass: Pass): number {
  const { minimum, maximum } = schema;
  const bound = typeof minimum === 'number' && value < minimum ? 'minimum' : typeof maximum === 'number' && value > maximum ? 'maximum' : undefined;
  if (bound === undefined) return value;
  const limit = (bound === 'minimum' ? minimum : maximum) as number;
  if (!pass.clamp) {
    pass.withheld.push({ path, bound, limit });
    return value;
  }
  const moved = bound === 'minimum' ? 'raised' : 'lowered';
  pass.repairs.push({ kind: 'clamp', path, detail: `${moved} '${displayPath(path)}' to the ${bound} ${limit}` });
  return limit;
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
