import { ecmaToLinearPattern, enumMatcher, PatternRefused, refuseQuadraticKeywords, schemaCost, type JsonSchema, type JsonValue } from '@toolgate/contracts';
import { _, Ajv, type ErrorObject, type KeywordDefinition, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { RE2JS } from 're2js';

/** A compiled JSON Schema check. `errors` describes the last failure (at most `MAX_SCHEMA_ERRORS`). */
export interface SchemaValidator {
  (data: JsonValue): boolean;
  errors: SchemaError[] | null;
}
export type SchemaError = ErrorObject;

/**
 * Most checks the detailed (every-error) pass may take on a call's own arguments: beyond it a
 * failing call is told its first problem only. Under `allErrors` each failing check builds an
 * error object (a 5,000-name `required` under `items` built 10 million for 2,000 items).
 */
export const MAX_DETAILED_CHECKS = 20_000;
/** Most errors kept from the detailed pass; `describeProblems` shows 20 distinct ones. */
export const MAX_SCHEMA_ERRORS = 100;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

// Strict: a keyword ajv does not know is a manifest bug, not something to ignore silently.
// `strictRequired` stays off because `required` inside `anyOf` branches is legitimate.
// No `coerceTypes`, `useDefaults` or `removeAdditional`: validation must never change the
// arguments; every change is an explicit, reported repair.
// `code.regExp`: every `pattern` and `patternProperties` key runs on a linear-time engine, since
// schemas come from MCP servers and arguments from agents, and a backtracking match on the event
// loop stalls every tenant. `allowMatchingProperties`: otherwise strict mode tests each
// `patternProperties` key against the `properties` names with a native RegExp while compiling.
// Two compilers per dialect: the first pass stops at the first error (`allErrors: false`), so a
// call's cost is the schema's checks, never its errors; the detailed pass (`allErrors`) runs only
// on a failure, and only when bounded (`MAX_DETAILED_CHECKS`).
const OPTIONS = {
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
  allErrors: false,
  allowMatchingProperties: true,
  code: { regExp: linearRegExp },
  // ajv logs the whole generated function when its compile fails (megabytes for a huge `anyOf`);
  // the failure itself is thrown and reported. Warnings still go to the console.
  logger: { log: console.log, warn: console.warn, error: () => undefined },
} as const;
const DETAILED = { ...OPTIONS, allErrors: true } as const;

/** Longest string the `regex` format parses: parsing is linear, but not free on the event loop. */
export const MAX_REGEX_FORMAT_LENGTH = 4096;

/**
 * `enum` by lookup (`enumMatcher`), reporting what ajv's own keyword reports. `errors: false`
 * makes ajv push one error per failing value; a keyword returning its own errors is concatenated
 * onto the list each time, quadratic again under `allErrors`.
 */
const HASHED_ENUM: KeywordDefinition = {
  keyword: 'enum',
  schemaType: 'array',
  errors: false,
  compile: (entries: readonly unknown[]) => enumMatcher(entries),
  error: { message: 'must be equal to one of the allowed values', params: ({ schemaCode }) => _`{allowedValues: ${schemaCode}}` },
};

/** An ajv of Toolgate's dialect: formats, the bounded `regex` format, and `enum` by lookup. */
function withFormats<A extends Ajv | Ajv2020>(ajv: A): A {
  formatsPlugin.default(ajv);
  // ajv's own `enum` compares a value with every entry: (entries × values) per call.
  ajv.removeKeyword('enum');
  ajv.addKeyword(HASHED_ENUM);
  // ajv-formats checks `regex` by parsing with a native RegExp (never matching); bounded here.
  const parses = ajv.formats['regex'] as (text: string) => boolean;
  ajv.addFormat('regex', (text: string) => text.length <= MAX_REGEX_FORMAT_LENGTH && parses(text));
  return ajv;
}

/** What ajv calls for every schema pattern: the pattern on RE2, or a compile error naming why not. */
function linearRegExp(pattern: string): { test(text: string): boolean; toString(): string } {
  // eslint-disable-next-line no-control-regex -- a schema's pattern may carry control characters; the message must not
  const shown = (pattern.length > 80 ? `${pattern.slice(0, 79)}…` : pattern).replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  let engine: RE2JS;
  try {
    engine = RE2JS.compile(ecmaToLinearPattern(pattern));
  } catch (error) {
    const why = error instanceof PatternRefused ? error.message : 'the pattern cannot be compiled by the linear-time engine (a repeat count over 1000, or an unknown Unicode property?)';
    throw new PatternRefused(`pattern '${shown}': ${why}`);
  }
  return { test: (text) => engine.test(text), toString: () => `/${pattern}/u` };
}
linearRegExp.code = 'linearRegExp';

const compilers = new Map<string, Ajv | Ajv2020>();

/** Schemas naming draft 2020-12 get the 2020 dialect; everything else draft-07 (ajv's default). */
function ajvFor(schema: JsonSchema, detailed: boolean): Ajv | Ajv2020 {
  const is2020 = schema['$schema'] === DRAFT_2020 || schema['$schema'] === `${DRAFT_2020}#`;
  const key = `${is2020 ? '2020' : '7'}:${detailed ? 'all' : 'first'}`;
  let ajv = compilers.get(key);
  if (!ajv) {
    const options = detailed ? DETAILED : OPTIONS;
    ajv = withFormats(is2020 ? new Ajv2020(options) : new Ajv(options));
    compilers.set(key, ajv);
  }
  return ajv;
}

/** The error reported when ajv itself throws while validating (its generated code recursing past the stack). */
function unvalidatable(error: unknown): SchemaError {
  const why = error instanceof RangeError ? 'its validator ran out of stack' : 'its validator failed';
  return { keyword: 'schemaCost', instancePath: '', schemaPath: '#', params: {}, message: `could not be checked against the tool's schema (${why}); the call is refused` };
}

/** How many values `data` holds, counting no further than `limit`. */
function valuesWithin(data: JsonValue, limit: number): number {
  let count = 0;
  const stack: JsonValue[] = [data];
  while (stack.length > 0 && count <= limit) {
    const value = stack.pop()!;
    count++;
    if (value !== null && typeof value === 'object') for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push(child);
  }
  return count;
}

/**
 * The validator of a compiled schema: the first-error pass, then, on failure and when
 * `outermost + values × nested` checks stay within `MAX_DETAILED_CHECKS`, the every-error pass
 * for the problem list. A throw from inside ajv (a stack overflow on a huge `anyOf`) is a failed
 * validation with an error saying so, never an exception: the gates fail closed on it.
 */
function twoPass(first: ValidateFunction<JsonValue>, detailed: ValidateFunction<JsonValue>, cost: { outermost: number; nested: number }): SchemaValidator {
  const validate = ((data: JsonValue): boolean => {
    try {
      if (first(data)) {
        validate.errors = null;
        return true;
      }
      validate.errors = first.errors ?? [unvalidatable(undefined)];
    } catch (error) {
      validate.errors = [unvalidatable(error)];
      return false;
    }
    // The checks the detailed pass may take on this call: `outermost + nested × (values − 1)`.
    const spare = MAX_DETAILED_CHECKS - cost.outermost;
    const values = cost.nested > 0 ? Math.floor(spare / cost.nested) + 1 : Infinity;
    if (spare >= 0 && (values === Infinity || valuesWithin(data, values) <= values)) {
      try {
        if (!detailed(data)) validate.errors = (detailed.errors ?? validate.errors).slice(0, MAX_SCHEMA_ERRORS);
      } catch {
        // The first pass already decided (invalid) and named a problem; the detail is a courtesy.
      }
    }
    return false;
  }) as SchemaValidator;
  validate.errors = null;
  return validate;
}

// Compiling is expensive (it generates code); validating is cheap. Schemas are cached by object
// identity (the common case: a manifest registered once) and, for sources that rebuild their
// definitions, by their text in a bounded map.
const byObject = new WeakMap<JsonSchema, SchemaValidator>();
type Entry = { readonly validator: SchemaValidator; readonly compiled: JsonSchema; readonly detailedCopy: JsonSchema };
const byText = new Map<string, Entry>();
const MAX_TEXT_ENTRIES = 1000;

/**
 * The compiled validator of a schema, compiled once and cached. Throws the compiler's error
 * (with ajv's own explanation) for a schema that is not valid or not strict, and
 * `SchemaCostRefused` for one whose validation could take time quadratic in the arguments, or
 * more checks than `MAX_SCHEMA_CHECKS` (`refuseQuadraticKeywords`), and a `RangeError`-free
 * compile error for one too large for ajv's compiler to recurse through.
 */
export function compileSchema(schema: JsonSchema): SchemaValidator {
  const cached = byObject.get(schema);
  if (cached) return cached;
  const text = JSON.stringify(schema);
  let entry = byText.get(text);
  if (!entry) {
    // A copy, so later mutation of the manifest object cannot desynchronise the compiled code.
    const compiled = JSON.parse(text) as JsonSchema;
    refuseQuadraticKeywords(compiled);
    const cost = schemaCost(compiled);
    // Both passes compile now, at registration: compiling a large schema takes long enough that it
    // must not happen inside a call. The detailed pass has its own copy: one ajv instance cannot
    // hold the same schema object twice.
    const first = compileBounded(compiled, false);
    const detailedCopy = JSON.parse(text) as JsonSchema;
    let detailed: ValidateFunction<JsonValue>;
    try {
      detailed = compileBounded(detailedCopy, true);
    } catch (error) {
      ajvFor(compiled, false).removeSchema(compiled);
      throw error;
    }
    // V8 compiles a generated function on its first call: for a schema of hundreds of branches
    // that took about 100 ms, so it is paid here rather than by the first caller.
    warm(first);
    warm(detailed);
    entry = { compiled, detailedCopy, validator: twoPass(first, detailed, cost) };
    if (byText.size >= MAX_TEXT_ENTRIES) evictOldest();
    byText.set(text, entry);
  }
  byObject.set(schema, entry.validator);
  return entry.validator;
}

function warm(validate: ValidateFunction<JsonValue>): void {
  try {
    validate(null);
  } catch {
    // A validator that throws is reported by the call that meets it (`twoPass`).
  }
}

/** ajv's compile, with its stack overflow (a schema of thousands of branches) turned into a named refusal. */
function compileBounded(schema: JsonSchema, detailed: boolean): ValidateFunction<JsonValue> {
  try {
    return ajvFor(schema, detailed).compile<JsonValue>(schema);
  } catch (error) {
    if (error instanceof RangeError) throw new Error("the schema is too large for the validator's compiler (it ran out of stack); split its anyOf/oneOf/allOf lists");
    throw error;
  }
}

/** Ajv keeps every compiled schema too; evicting from both keeps a churning source bounded. */
function evictOldest(): void {
  const [text, entry] = byText.entries().next().value as [string, Entry];
  byText.delete(text);
  ajvFor(entry.compiled, false).removeSchema(entry.compiled);
  ajvFor(entry.detailedCopy, true).removeSchema(entry.detailedCopy);
}
