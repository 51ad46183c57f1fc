import { _, Ajv, type KeywordDefinition, type ValidateFunction } from 'ajv';
import {
  ecmaToLinearPattern,
  enumMatcher,
  flattenText,
  hasUnshowable,
  PatternRefused,
  refuseQuadraticKeywords,
  SchemaCostRefused,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
} from '@toolgate/contracts';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { RE2JS } from 're2js';

/** Bounds on what a server may declare about one tool. */
export const MCP_TOOL_LIMITS = {
  /** Characters of the sanitised tool part of `<server>__<tool>`. */
  toolNameChars: 64,
  descriptionChars: 1000,
  schemaBytes: 64 * 1024,
  schemaDepth: 32,
  /** Characters of an `isError` text passed on as a ToolError message. */
  errorChars: 1000,
  /** Content items passed on from one result. */
  contentItems: 100,
} as const;

/**
 * Maps an MCP tool name (letters, digits, `_ - . /`, any case) to the `[a-z0-9_]` part of a
 * registry name: camelCase becomes snake_case, anything else becomes `_`. Returns undefined when
 * nothing usable is left or the result is longer than the limit.
 */
export function sanitiseToolName(name: string): string | undefined {
  const snake = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_');
  if (!/[a-z0-9]/.test(snake) || snake.length > MCP_TOOL_LIMITS.toolNameChars) return undefined;
  return snake;
}

/** The registry name of a server's tool: `<server>__<tool>`, with the server's `-` as `_`. */
export function registryName(server: string, sanitisedTool: string): string {
  return `${server.replace(/-/g, '_')}__${sanitisedTool}`;
}

/** Why a server's input schema was not accepted. */
export class SchemaRejected extends Error {
  override readonly name = 'SchemaRejected';
}

/**
 * Every schema pattern this adapter compiles runs on a linear-time engine, read as the gateway
 * reads it (`ecmaToLinearPattern`): a server's pattern with a backtracking blow-up must not stall
 * the event loop, and one the engine cannot run (a backreference, a lookaround) is refused here,
 * where the refusal is logged, rather than only by the gateway's registry.
 */
function linearRegExp(pattern: string): { test(text: string): boolean; toString(): string } {
  let engine: RE2JS;
  try {
    engine = RE2JS.compile(ecmaToLinearPattern(pattern));
  } catch (error) {
    const why = error instanceof PatternRefused ? error.message : 'the pattern cannot be compiled by the linear-time engine';
    throw new PatternRefused(`pattern '${sanitiseMessage(pattern, 80)}': ${why}`);
  }
  return { test: (text) => engine.test(text), toString: () => `/${pattern}/u` };
}
linearRegExp.code = 'linearRegExp';

// A compiler used only to prove a schema compiles; the gateway compiles its own copy to validate.
// Formats are the gateway's business, so they are neither checked nor warned about here.
const probe = new Ajv({ strict: false, validateSchema: true, validateFormats: false, logger: false, code: { regExp: linearRegExp } });

/**
 * `enum` by lookup (`enumMatcher`) rather than ajv's entry-by-entry comparison, as in the
 * gateway's compiler; `errors: false` so failures are pushed, not concatenated, under `allErrors`.
 */
function withHashedEnum(ajv: Ajv): Ajv {
  const hashed: KeywordDefinition = {
    keyword: 'enum',
    schemaType: 'array',
    errors: false,
    compile: (entries: readonly unknown[]) => enumMatcher(entries),
    error: { message: 'must be equal to one of the allowed values', params: ({ schemaCode }) => _`{allowedValues: ${schemaCode}}` },
  };
  ajv.removeKeyword('enum');
  ajv.addKeyword(hashed);
  return ajv;
}

/**
 * What the MCP SDK's client checks a tool's `structuredContent` against the server's own
 * `outputSchema` with. The SDK's default validator runs schema patterns as native RegExps on the
 * event loop, so a server could pair a backtracking pattern with an output that triggers it and
 * stall the gateway on every call. Here patterns run on the linear-time engine, and a schema that
 * does not compile (or uses a pattern the engine cannot run) gives a validator that refuses every
 * output with the reason: that tool's calls fail clearly, the server's other tools keep working.
 * Formats are not checked, as for input schemas.
 */
export class LinearOutputValidator implements jsonSchemaValidator {
  // Stops at the first error: one reason is all the SDK reports, and under `allErrors` a server's
  // `required` list under `items` builds an error per name per item of its own output.
  private readonly ajv = withHashedEnum(
    new Ajv({ strict: false, validateSchema: false, validateFormats: false, allErrors: false, logger: false, code: { regExp: linearRegExp } }),
  );

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let validate: ValidateFunction;
    try {
      // The server picks the output too: no keyword may make checking it quadratic.
      refuseQuadraticKeywords(schema);
      validate = this.ajv.compile(schema);
    } catch (error) {
      const why = sanitiseMessage(error instanceof Error ? error.message : 'unknown error', 300);
      return () => ({ valid: false, data: undefined, errorMessage: `the tool's output schema is unusable: ${why}` });
    } finally {
      // The compiled function stays valid; the compiler forgets the schema, so a server that
      // relists its tools (or reuses an $id) neither grows it nor trips over a duplicate.
      this.ajv.removeSchema(schema as object);
    }
    return (input) =>
      validate(input) ? { valid: true, data: input as T, errorMessage: undefined } : { valid: false, data: undefined, errorMessage: this.ajv.errorsText(validate.errors) };
  }
}

/**
 * Turns a server's `inputSchema` into a manifest input schema: a copy made safe to show agents and
 * to compile, `type: "object"`, and closed at the top level (`additionalProperties: false`,
 * whatever the server said: the design admits no open manifest). Nested objects keep the
 * server's own rules. Rejects schemas that are too large or deep, that do not compile, or whose
 * validation could be quadratic (`refuseQuadraticKeywords`). See `copySchema` for what the copy
 * changes. `probe: false` skips the compile, for a caller that compiles the result itself with a
 * stricter compiler (the gateway's): compiling twice costs twice.
 */
export function closeInputSchema(raw: unknown, options: { readonly probe?: boolean } = {}): JsonSchema {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new SchemaRejected('the input schema is not an object');
  let text: string;
  try {
    text = JSON.stringify(raw);
  } catch {
    throw new SchemaRejected('the input schema is not plain JSON');
  }
  if (Buffer.byteLength(text, 'utf8') > MCP_TOOL_LIMITS.schemaBytes) {
    throw new SchemaRejected(`the input schema is larger than ${MCP_TOOL_LIMITS.schemaBytes} bytes`);
  }
  const copy = copySchema(JSON.parse(text) as JsonValue, 0) as JsonObject;
  if (copy['type'] !== undefined && copy['type'] !== 'object') throw new SchemaRejected('the input schema is not of type "object"');
  const closed: JsonSchema = { ...copy, type: 'object', additionalProperties: false };
  if (closed['properties'] === undefined) closed['properties'] = {};
  try {
    refuseQuadraticKeywords(closed);
  } catch (error) {
    if (error instanceof SchemaCostRefused) throw new SchemaRejected(`the input schema is refused: ${error.message}`);
    throw error;
  }
  if (options.probe === false) return closed;
  try {
    probe.compile(closed);
  } catch (error) {
    throw new SchemaRejected(`the input schema does not compile: ${error instanceof Error ? error.message.slice(0, 300) : 'unknown error'}`);
  } finally {
    // Keep the probe from growing with every schema it has seen.
    probe.removeSchema(closed);
  }
  return closed;
}

// Keywords whose string value agents read as prose: sanitised like a tool's description. The
// content keywords are annotations too (ajv checks neither), so rewriting them changes nothing.
const PROSE_KEYWORDS: ReadonlySet<string> = new Set(['title', 'description', '$comment', 'contentMediaType', 'contentEncoding']);
// Every keyword the compilers know (JSON Schema draft-07 and 2020-12, and ajv's own). A string
// under any other keyword is an annotation no compiler reads, so it is flattened as prose; a
// string under one of these is checked exactly (a pattern, a $ref, a type), so it is refused
// rather than rewritten when it cannot be shown as one line.
const KNOWN_KEYWORDS: ReadonlySet<string> = new Set([
  ...['$id', '$schema', '$ref', '$defs', 'definitions', '$comment', '$anchor', '$dynamicAnchor', '$dynamicRef', '$recursiveRef', '$recursiveAnchor', '$vocabulary'],
  ...['type', 'const', 'enum', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern'],
  ...['maxItems', 'minItems', 'uniqueItems', 'maxContains', 'minContains', 'maxProperties', 'minProperties', 'required', 'dependentRequired', 'nullable'],
  ...['prefixItems', 'items', 'additionalItems', 'contains', 'dependencies', 'dependentSchemas', 'propertyNames', 'properties', 'patternProperties'],
  ...['additionalProperties', 'not', 'anyOf', 'oneOf', 'allOf', 'if', 'then', 'else', 'unevaluatedProperties', 'unevaluatedItems', 'discriminator'],
  ...['format', 'title', 'description', 'default', 'deprecated', 'readOnly', 'writeOnly', 'examples', 'contentMediaType', 'contentEncoding', 'contentSchema'],
]);
// Keywords whose values map names to schemas: the names are the server's, kept as they are.
const SCHEMA_MAPS: ReadonlySet<string> = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

/**
 * A copy of (part of) a server's schema, at schema position `value`, `depth` levels down:
 * - without `$schema` and `$id` (a foreign meta-schema or a global id shared by two tools would
 *   break the gateway's compiler) and without `examples` (informational only, and prose agents
 *   would read unsanitised);
 * - `title`, `description`, `$comment`, `contentMediaType` and `contentEncoding` at every depth,
 *   the string value of any keyword no compiler knows, and every string and object key inside
 *   `default`, flattened by `sanitiseDescription`: agents read them as instructions. Defaults are
 *   never applied by the gateway (its compiler sets no `useDefaults`) nor checked against the
 *   schema, so rewriting them cannot change what validates; the server still applies its own;
 * - `enum` and `const` exactly as sent: they are what arguments are checked against, so a value
 *   (or object key inside one) holding a line break, control, invisible or filler character
 *   refuses the tool, naming the value's position, rather than being rewritten;
 * - every other string (a `pattern`, a `$ref`, a `format`, a `type`) exact too, and refused on the
 *   same characters: a legitimate pattern writes a line break as the escape `\n`;
 * - property names (and other names in `SCHEMA_MAPS`, and `required`) kept, since arguments must
 *   use them, and refused if they hold a line break, control or invisible character.
 * Recursive with a depth bound, so a hostile nesting is refused before it can exhaust the stack.
 */
function copySchema(value: JsonValue, depth: number, keyword = 'schema'): JsonValue {
  checkDepth(depth);
  if (Array.isArray(value)) return value.map((item) => copySchema(item, depth + 1, keyword));
  if (typeof value === 'string') return checkExact(value, keyword);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    let copied: JsonValue;
    if (key === '$schema' || key === '$id' || key === 'examples') continue;
    // A keyword's own name reaches agents (and compilers' error text) as it is: no real one needs these.
    if (hasUnshowable(key)) {
      throw new SchemaRejected(`the input schema has a keyword '${sanitiseDescription(key, 60)}' with a line break, control or invisible character`);
    }
    if ((PROSE_KEYWORDS.has(key) || !KNOWN_KEYWORDS.has(key)) && typeof child === 'string') {
      copied = sanitiseDescription(child, MCP_TOOL_LIMITS.descriptionChars);
    } else if (key === 'enum' || key === 'const') copied = copyData(child, depth + 1, false, key);
    else if (key === 'default') copied = copyData(child, depth + 1, true, key);
    else if (SCHEMA_MAPS.has(key) && typeof child === 'object' && child !== null && !Array.isArray(child)) {
      checkDepth(depth + 1);
      const map: JsonObject = {};
      for (const [name, schema] of Object.entries(child)) {
        checkName(name);
        setOwn(map, name, copySchema(schema, depth + 2));
      }
      copied = map;
    } else {
      if (key === 'required' && Array.isArray(child)) child.forEach((name) => typeof name === 'string' && checkName(name));
      copied = copySchema(child, depth + 1, key);
    }
    setOwn(out, key, copied);
  }
  return out;
}

/**
 * A copy of data inside a schema (`enum`, `const`, `default`) at `where` (e.g. `enum[2].mode`):
 * its strings and object keys flattened (`sanitise`), or kept exact and refused when they cannot
 * be shown as one line, naming the position and never echoing the value.
 */
function copyData(value: JsonValue, depth: number, sanitise: boolean, where: string): JsonValue {
  checkDepth(depth);
  if (typeof value === 'string') return sanitise ? sanitiseDescription(value, MCP_TOOL_LIMITS.descriptionChars) : checkData(value, where);
  if (Array.isArray(value)) return value.map((item, i) => copyData(item, depth + 1, sanitise, `${where}[${i}]`));
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    const name = sanitise ? sanitiseDescription(key, MCP_TOOL_LIMITS.descriptionChars) : checkData(key, `a key of ${where}`);
    setOwn(out, name, copyData(child, depth + 1, sanitise, `${where}.${sanitiseDescription(key, 40)}`));
  }
  return out;
}

/** An `enum`/`const` string as sent, or a refusal naming where it is (its text is the server's). */
function checkData(text: string, where: string): string {
  if (hasUnshowable(text)) {
    throw new SchemaRejected(`the input schema's ${where} holds a line break, control, invisible or filler character; such a value cannot be shown to agents exactly`);
  }
  return text;
}

/** A string a compiler reads exactly (a pattern, a $ref, a format): kept, or refused, never rewritten. */
function checkExact(text: string, keyword: string): string {
  if (hasUnshowable(text)) {
    throw new SchemaRejected(
      `the input schema's '${sanitiseDescription(keyword, 40)}' holds a raw line break, control, invisible or filler character; write it as an escape (\\n, \\u200b)`,
    );
  }
  return text;
}

/**
 * Names reach agents too, but arguments must use them exactly, so a name that cannot be shown
 * safely is refused rather than rewritten.
 */
function checkName(name: string): void {
  if (hasUnshowable(name)) {
    throw new SchemaRejected(`the input schema names a property '${sanitiseDescription(name, 60)}' with a line break, control or invisible character`);
  }
}

function checkDepth(depth: number): void {
  if (depth > MCP_TOOL_LIMITS.schemaDepth) throw new SchemaRejected(`the input schema nests deeper than ${MCP_TOOL_LIMITS.schemaDepth}`);
}

/** defineProperty, so a `__proto__` property name stays a property name. */
function setOwn(target: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The output schema of every MCP tool: what `toToolOutput` produces from a `CallToolResult`.
 * Text items carry their text; other items only a one-line summary.
 */
export const MCP_CALL_RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    content: {
      type: 'array',
      maxItems: MCP_TOOL_LIMITS.contentItems + 1,
      items: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          text: { type: 'string' },
          summary: { type: 'string' },
        },
        required: ['type'],
        additionalProperties: false,
      },
    },
    structuredContent: { type: 'object' },
  },
  required: ['content'],
  additionalProperties: false,
};

/** One content item of an MCP result, as the SDK hands it over (only the fields read here). */
interface ContentItem {
  readonly type: string;
  readonly text?: unknown;
  readonly mimeType?: unknown;
  readonly data?: unknown;
  readonly uri?: unknown;
  readonly name?: unknown;
  readonly resource?: { readonly uri?: unknown; readonly mimeType?: unknown; readonly text?: unknown; readonly blob?: unknown };
}

/**
 * The tool output of a successful call: text items kept as they are, other items (images, audio,
 * resources, links) summarised in a line, since binary payloads have no place in an agent's
 * context and the gateway's size limit would refuse them anyway. `structuredContent` is kept.
 */
export function toToolOutput(result: Readonly<Record<string, unknown>>): JsonObject {
  const items = Array.isArray(result['content']) ? (result['content'] as ContentItem[]) : [];
  const content = items.slice(0, MCP_TOOL_LIMITS.contentItems).map((item): JsonObject => {
    if (item.type === 'text' && typeof item.text === 'string') return { type: 'text', text: item.text };
    return { type: String(item.type).slice(0, 40), summary: summarise(item) };
  });
  if (items.length > MCP_TOOL_LIMITS.contentItems) {
    content.push({ type: 'notice', summary: `${items.length - MCP_TOOL_LIMITS.contentItems} more content items were left out` });
  }
  const output: JsonObject = { content };
  const structured = result['structuredContent'];
  if (typeof structured === 'object' && structured !== null && !Array.isArray(structured)) {
    output['structuredContent'] = JSON.parse(JSON.stringify(structured)) as JsonObject;
  }
  return output;
}

function summarise(item: ContentItem): string {
  const short = (v: unknown) => (typeof v === 'string' ? v.slice(0, 200) : 'unknown');
  switch (item.type) {
    case 'image':
    case 'audio':
      return `${item.type} (${short(item.mimeType)}, ${base64Bytes(item.data)} bytes) not passed on`;
    case 'resource': {
      const r = item.resource ?? {};
      const size = typeof r.text === 'string' ? `${r.text.length} characters of text` : `${base64Bytes(r.blob)} bytes`;
      return `embedded resource ${short(r.uri)} (${short(r.mimeType)}, ${size}) not passed on`;
    }
    case 'resource_link':
      return `link to resource ${short(item.name)} at ${short(item.uri)}`;
    default:
      return `content of type ${short(item.type)} not passed on`;
  }
}

function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** The text of an `isError` result, fit for a ToolError message: no control characters, cut short. */
export function errorText(result: Readonly<Record<string, unknown>>): string {
  const items = Array.isArray(result['content']) ? (result['content'] as ContentItem[]) : [];
  const text = items
    .filter((item) => item.type === 'text' && typeof item.text === 'string')
    .map((item) => item.text as string)
    .join(' ');
  return sanitiseMessage(text, MCP_TOOL_LIMITS.errorChars) || 'the tool reported an error without text';
}

/**
 * A server's tool description as agents will read it: one line, at most `max` characters, with
 * terminal escapes, controls and invisible format characters removed. Agents read descriptions as
 * instructions, so a description must not be able to start what looks like a new message or a new
 * section (`\n\nSYSTEM: …`), recolour a terminal, or hide text a human reviewer cannot see.
 * The rules are contracts' `flattenText`, shared with the shared memory's known failures; they
 * also remove fillers that render blank (Hangul U+115F, U+1160, U+3164, U+FFA0; braille U+2800).
 */
export function sanitiseDescription(text: string, max: number): string {
  return flattenText(text, max);
}

/** One line of at most `max` characters with control characters replaced by spaces. */
export function sanitiseMessage(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
