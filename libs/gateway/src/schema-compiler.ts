import { ecmaToLinearPattern, enumMatcher, PatternRefused, refuseQuadraticKeywords, type JsonSchema, type JsonValue } from '@toolgate/contracts';
import { _, Ajv, type ErrorObject, type KeywordDefinition, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { RE2JS } from 're2js';

/** A compiled JSON Schema check. `errors` describes the last failure. */
export type SchemaValidator = ValidateFunction<JsonValue>;
export type SchemaError = ErrorObject;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

// Strict: a keyword ajv does not know is a manifest bug, not something to ignore silently.
// `strictRequired` stays off because `required` inside `anyOf` branches is legitimate.
// No `coerceTypes`, `useDefaults` or `removeAdditional`: validation must never change the
// arguments; every change is an explicit, reported repair.
// `code.regExp`: every `pattern` and `patternProperties` key runs on a linear-time engine, since
// schemas come from MCP servers and arguments from agents, and a backtracking match on the event
// loop stalls every tenant. `allowMatchingProperties`: otherwise strict mode tests each
// `patternProperties` key against the `properties` names with a native RegExp while compiling.
const OPTIONS = {
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
  allErrors: true,
  allowMatchingProperties: true,
  code: { regExp: linearRegExp },
} as const;

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

let draft7: Ajv | undefined;
let draft2020: Ajv2020 | undefined;

/** Schemas naming draft 2020-12 get the 2020 dialect; everything else draft-07 (ajv's default). */
function ajvFor(schema: JsonSchema): Ajv | Ajv2020 {
  if (schema['$schema'] === DRAFT_2020 || schema['$schema'] === `${DRAFT_2020}#`) {
    draft2020 ??= withFormats(new Ajv2020(OPTIONS));
    return draft2020;
  }
  draft7 ??= withFormats(new Ajv(OPTIONS));
  return draft7;
}

// Compiling is expensive (it generates code); validating is cheap. Schemas are cached by object
// identity (the common case: a manifest registered once) and, for sources that rebuild their
// definitions, by their text in a bounded map.
const byObject = new WeakMap<JsonSchema, SchemaValidator>();
const byText = new Map<string, { readonly validator: SchemaValidator; readonly compiled: JsonSchema }>();
const MAX_TEXT_ENTRIES = 1000;

/**
 * The compiled validator of a schema, compiled once and cached. Throws the compiler's error
 * (with ajv's own explanation) for a schema that is not valid or not strict, and
 * `SchemaCostRefused` for one whose validation could take time quadratic in the arguments
 * (`refuseQuadraticKeywords`).
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
    entry = { validator: ajvFor(compiled).compile<JsonValue>(compiled), compiled };
    if (byText.size >= MAX_TEXT_ENTRIES) evictOldest();
    byText.set(text, entry);
  }
  byObject.set(schema, entry.validator);
  return entry.validator;
}

/** Ajv keeps every compiled schema too; evicting from both keeps a churning source bounded. */
function evictOldest(): void {
  const [text, entry] = byText.entries().next().value as [string, { compiled: JsonSchema }];
  byText.delete(text);
  ajvFor(entry.compiled).removeSchema(entry.compiled);
}
