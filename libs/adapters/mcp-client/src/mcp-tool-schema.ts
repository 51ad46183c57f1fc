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
import { structuralCount } from './json-structure.js';

/** Bounds on what a server may declare about one tool. */
export const MCP_TOOL_LIMITS = {
  /** Characters of the sanitised tool part of `<server>__<tool>`. */
  toolNameChars: 64,
  /**
   * Characters of a tool's description. Real servers write parameter guides into it
   * (sequential-thinking's is 2,781 characters); the bound only keeps one tool from filling an
   * agent's context (ADR 0058). A cut description says so in its text.
   */
  toolDescriptionChars: 10_000,
  /** Characters of each prose keyword inside a schema (`title`, `description`, …) and each `default` string. */
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

  /**
   * Compiles on the first check, not here: the SDK asks for a validator for every tool of every
   * `tools/list` page in one synchronous loop, so compiling here put 256 compiles of a server's
   * choosing in one turn of the event loop at each re-listing (a 100 ms hold for every other caller
   * with 2 KB schemas, seen in the pin-flood test). A tool's schema is compiled when the tool is
   * first called, once.
   */
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let check: JsonSchemaValidator<T> | undefined;
    return (input) => {
      check ??= this.compile<T>(schema);
      return check(input);
    };
  }

  private compile<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
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
 * context and the gateway's size limit would refuse them anyway. A text item that is itself
 * binary (base64, wrapped or not, or a base64 `data:` URL) is summarised the same way.
 * `structuredContent` is kept under the same rule (`withoutBinary`), and a text item that only
 * mirrors it (see `mirrorsOf`) becomes a one-line summary, so the payload reaches the agent (and
 * counts against the output limit) once; but only when the copy passed on holds all the text
 * does (changed at most by binary summaries), so a cut never leaves the agent without data the
 * server sent. Linear in the size of the result, with at most {@link STRUCTURED_NODES} values walked.
 */
export function toToolOutput(result: Readonly<Record<string, unknown>>): JsonObject {
  const items = Array.isArray(result['content']) ? (result['content'] as ContentItem[]) : [];
  const structured = result['structuredContent'];
  const hasStructured = typeof structured === 'object' && structured !== null && !Array.isArray(structured);
  const walk: Walk = { nodes: 0, lossy: false };
  const copy = hasStructured ? (withoutBinary(structured, 0, walk) as JsonObject) : undefined;
  const mirror = hasStructured && copy !== undefined ? mirrorsOf(structured as Readonly<Record<string, unknown>>, copy, walk.lossy) : undefined;
  const content = items.slice(0, MCP_TOOL_LIMITS.contentItems).map((item): JsonObject => {
    if (item.type === 'text' && typeof item.text === 'string') {
      const same = mirror?.(item.text);
      if (same !== undefined) return { type: 'text', summary: `same text as ${same} (${item.text.length} characters)` };
      const binary = binarySummary(item.text.trim());
      return binary === undefined ? { type: 'text', text: item.text } : { type: 'text', summary: `text item holding ${binary.slice(1, -1)}` };
    }
    return { type: String(item.type).slice(0, 40), summary: summarise(item) };
  });
  if (items.length > MCP_TOOL_LIMITS.contentItems) {
    content.push({ type: 'notice', summary: `${items.length - MCP_TOOL_LIMITS.contentItems} more content items were left out` });
  }
  const output: JsonObject = { content };
  if (copy !== undefined) output['structuredContent'] = copy;
  return output;
}

/** Strings at least this long that look like base64 (`isBase64Like`) are summarised wherever they are. */
export const BASE64_SUMMARY_CHARS = 1024;
/** Below this depth, `structuredContent` is summarised rather than walked (it cannot be an agent's reading). */
const STRUCTURED_DEPTH = 64;
/**
 * Values of `structuredContent` walked at most; the rest is summarised. The transport already
 * refuses a message with more structure than this before parsing it (`MAX_MESSAGE_NODES`), so
 * this bounds only a source that does not (and keeps the walk linear whatever it is handed).
 */
export const STRUCTURED_NODES = 100_000;
/** Shortest chunk of a run of base64 chunks in an array that is summarised as one payload. */
const CHUNK_MIN_CHARS = 16;
/** Shortest line of wrapped base64 (MIME wraps at 76, PEM at 64); shorter equal pieces could be words. */
const WRAP_MIN_CHARS = 40;
/** The key under which an object cut at {@link STRUCTURED_NODES} says so. */
const LEFT_OUT_KEY = '[not passed on by Toolgate]';

/** What one walk of `structuredContent` has seen: values so far, and whether anything but binary was cut. */
interface Walk {
  nodes: number;
  lossy: boolean;
}

/**
 * A copy of (part of) a result's `structuredContent` without binary payloads, each replaced by a
 * one-line summary string:
 * - an object that is a content item with a payload (`type` `image` or `audio` with a string
 *   `data`; `type` `resource` whose `resource` has a string `blob`) becomes the item's summary
 *   item `{ type, summary }`, as in `content`;
 * - the string `blob` of any object (MCP resource contents carry base64 there) becomes
 *   `[binary data not passed on by Toolgate: N bytes]`;
 * - any other string of at least {@link BASE64_SUMMARY_CHARS} characters that looks like base64
 *   (`isBase64Like`, also wrapped at a fixed width with spaces, tabs or line breaks), or a `data:`
 *   URL whose payload is base64 of that length, becomes the same summary (the `data:` one naming
 *   its media type); so does an object key that does, and an array of strings that are one
 *   payload cut into equal chunks;
 * - what nests deeper than 64 levels becomes `[nested deeper than 64 levels: not passed on by Toolgate]`,
 *   and what comes after {@link STRUCTURED_NODES} values a summary saying so (both mark the walk lossy).
 * Everything else is copied as it is.
 */
function withoutBinary(value: unknown, depth: number, walk: Walk): JsonValue {
  walk.nodes += 1;
  if (typeof value === 'string') return binarySummary(value) ?? value;
  if (value === null || typeof value !== 'object') return (value ?? null) as JsonValue;
  if (depth >= STRUCTURED_DEPTH) {
    walk.lossy = true;
    return `[nested deeper than ${STRUCTURED_DEPTH} levels: not passed on by Toolgate]`;
  }
  if (Array.isArray(value)) {
    const chunked = chunkedBinary(value);
    if (chunked !== undefined) return chunked;
    const items: JsonValue[] = [];
    for (const item of value) {
      if (walk.nodes >= STRUCTURED_NODES) {
        // One note for the rest, not one per value: the copy stays bounded as the walk is.
        walk.lossy = true;
        items.push(`[${value.length - items.length} more values: not passed on by Toolgate]`);
        break;
      }
      items.push(withoutBinary(item, depth + 1, walk));
    }
    return items;
  }
  const record = value as Readonly<Record<string, unknown>>;
  if (isPayloadItem(record)) return { type: String(record['type']).slice(0, 40), summary: summarise(record as unknown as ContentItem) };
  const out: JsonObject = {};
  let binaryKeys = 0;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    if (walk.nodes >= STRUCTURED_NODES) {
      walk.lossy = true;
      setOwn(out, LEFT_OUT_KEY, `more than ${STRUCTURED_NODES} values in structuredContent: the rest of this object not passed on by Toolgate`);
      break;
    }
    const child = record[key];
    const copied = key === 'blob' && typeof child === 'string' ? `[binary data not passed on by Toolgate: ${base64Bytes(child)} bytes]` : withoutBinary(child, depth + 1, walk);
    const keySummary = key.length >= BASE64_SUMMARY_CHARS ? binarySummary(key) : undefined;
    // A key is a name too: one that is a payload is summarised, numbered so two stay two.
    const name = keySummary === undefined ? key : `${keySummary.slice(0, -1)} (key ${++binaryKeys})]`;
    // Plain assignment keeps copying linear; defineProperty only where assignment would set the prototype.
    if (name === '__proto__') setOwn(out, name, copied);
    else out[name] = copied;
  }
  return out;
}

/**
 * The summary of an array of strings that are one base64 payload cut into chunks (every chunk
 * but the last of the same length, at least {@link CHUNK_MIN_CHARS}, together at least
 * {@link BASE64_SUMMARY_CHARS} characters that look like base64), or undefined for any other array.
 */
function chunkedBinary(items: readonly unknown[]): string | undefined {
  if (items.length < 2) return undefined;
  const first = items[0];
  if (typeof first !== 'string' || first.length < CHUNK_MIN_CHARS) return undefined;
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== 'string') return undefined;
    if (i < items.length - 1 ? item.length !== first.length : item.length > first.length || item.length === 0) return undefined;
    total += item.length;
  }
  if (total < BASE64_SUMMARY_CHARS) return undefined;
  const joined = (items as string[]).join('');
  if (!isBase64Like(joined)) return undefined;
  return `[binary data in ${items.length} chunks not passed on by Toolgate: ${base64Bytes(joined)} bytes]`;
}

function isPayloadItem(record: Readonly<Record<string, unknown>>): boolean {
  const type = record['type'];
  if ((type === 'image' || type === 'audio') && typeof record['data'] === 'string') return true;
  const resource = record['resource'];
  return type === 'resource' && typeof resource === 'object' && resource !== null && typeof (resource as Record<string, unknown>)['blob'] === 'string';
}

/** The summary that replaces a base64-looking string or a base64 `data:` URL, or undefined for any other string. */
function binarySummary(text: string): string | undefined {
  if (text.length < BASE64_SUMMARY_CHARS) return undefined;
  const dataUrl = /^data:([^,;]{0,100})((?:;[^,;]{0,100}){0,8});base64,/i.exec(text);
  if (dataUrl) {
    const payload = text.slice(dataUrl[0].length);
    if (payload.length < BASE64_SUMMARY_CHARS || !isBase64Like(payload)) return undefined;
    const type = sanitiseMessage(dataUrl[1] || 'no media type', 100);
    return `[data: URL (${type}, ${base64Bytes(unwrapped(payload))} bytes) not passed on by Toolgate]`;
  }
  return isBase64Like(text) ? `[binary data not passed on by Toolgate: ${base64Bytes(unwrapped(text))} bytes]` : undefined;
}

/** `text` without JSON white space (space, tab, CR, LF). */
function unwrapped(text: string): string {
  return text.replace(/[ \t\r\n]+/g, '');
}

/**
 * Whether `text` looks like base64 (standard or URL-safe alphabet, at most two `=` at the end)
 * written for binary data: it holds an upper-case letter, a lower-case letter and a digit, which
 * a kilobyte of encoded bytes does all but surely and hex, a word or a number does not. It may
 * be wrapped: cut into lines (by LF, CRLF or CR alone) or by spaces or tabs, as long as every
 * piece but the last has the same length of at least 40 characters (MIME wraps at 76, PEM at
 * 64), which words of prose never do. Linear in the length of `text`.
 */
export function isBase64Like(text: string): boolean {
  const pieces = text.trim().split(/[ \t\r\n]+/);
  if (pieces.length > 1) {
    const width = (pieces[0] as string).length;
    if (width < WRAP_MIN_CHARS) return false;
    for (let i = 1; i < pieces.length; i++) {
      const length = (pieces[i] as string).length;
      if (i < pieces.length - 1 ? length !== width : length > width) return false;
    }
  }
  const flat = pieces.join('');
  if (!/^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/.test(flat)) return false;
  return /[A-Z]/.test(flat) && /[a-z]/.test(flat) && /[0-9]/.test(flat);
}

/**
 * What a text item may mirror in `structured`: a function naming the part it equals
 * (`structuredContent` when the text is the same JSON as all of it, whatever its white space;
 * `structuredContent.<key>` when it is a top-level string of it), or undefined when it mirrors
 * nothing. A text is taken for a mirror only where `copy` (what the agent gets) holds all it
 * says: a top-level string kept or summarised as binary, the whole only when the walk cut
 * nothing but binary (`lossy` false). The text's structure is counted before it is parsed, and
 * one with other counts than `structured` has cannot be the same JSON, so a hostile text is
 * never parsed in full.
 */
function mirrorsOf(
  structured: Readonly<Record<string, unknown>>,
  copy: JsonObject,
  lossy: boolean,
): (text: string) => string | undefined {
  let compact: string | undefined;
  let structure: number | undefined;
  const strings = new Map<string, string>();
  for (const key in structured) {
    if (!Object.hasOwn(structured, key)) continue;
    const value = structured[key];
    if (typeof value !== 'string' || value === '' || strings.has(value)) continue;
    const passed = Object.hasOwn(copy, key) ? copy[key] : undefined;
    // Kept as it is, or summarised as binary (which the text must not carry either).
    if (passed === value || (typeof passed === 'string' && binarySummary(value) === passed)) strings.set(value, `structuredContent${pathPart(key)}`);
  }
  return (text) => {
    const key = strings.get(text);
    if (key !== undefined) return key;
    if (lossy) return undefined;
    const trimmed = text.trimStart();
    if (!trimmed.startsWith('{')) return undefined;
    try {
      // Either may be too deep to serialise; then it is not taken for a mirror.
      compact ??= JSON.stringify(structured);
      // White space can only add to the text: anything shorter cannot be the same JSON.
      if (text.length < compact.length) return undefined;
      // The same JSON has the same brackets, commas and colons outside its strings: counting them is
      // a byte scan that stops past the count, where parsing a hostile text in full is not cheap.
      structure ??= structuralCount(Buffer.from(compact, 'utf8'));
      if (structuralCount(Buffer.from(text, 'utf8'), structure) !== structure) return undefined;
      return JSON.stringify(JSON.parse(text)) === compact ? 'structuredContent' : undefined;
    } catch {
      return undefined;
    }
  };
}

/** `.key` for a plain identifier, else `["key"]`, cut and flattened: the key is the server's. */
function pathPart(key: string): string {
  return /^[A-Za-z_$][\w$]{0,60}$/.test(key) ? `.${key}` : `[${sanitiseMessage(JSON.stringify(key), 64)}]`;
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

/**
 * `text` flattened as {@link sanitiseDescription} does, and when longer than `max` characters cut
 * so that, with a note naming how much is shown (`… [cut by Toolgate: N of M characters shown]`),
 * it is `max` characters at most. `cut` says what was cut, for the operator log.
 */
export function boundDescription(text: string, max: number): { text: string; cut?: { shown: number; total: number } } {
  const flat = flattenText(text, Number.MAX_SAFE_INTEGER);
  if (flat.length <= max) return { text: flat };
  // The note's length depends on the count shown, which has no more digits than the total.
  const noteFor = (shown: number) => `… [cut by Toolgate: ${shown} of ${flat.length} characters shown]`;
  let shown = Math.max(0, max - noteFor(flat.length).length);
  // Never split a surrogate pair: half a character would render as a replacement mark.
  if (shown > 0 && /[\uD800-\uDBFF]/.test(flat.charAt(shown - 1))) shown -= 1;
  return { text: `${flat.slice(0, shown)}${noteFor(shown)}`, cut: { shown, total: flat.length } };
}

/**
 * One line of at most `max` characters, for the operator log and error messages: contracts'
 * `flattenText`, so a terminal escape goes whole (no `[31m` left after its ESC), bidi overrides
 * and invisible characters go, and line breaks and other controls become spaces.
 */
export function sanitiseMessage(text: string, max: number): string {
  return flattenText(text, max);
}
