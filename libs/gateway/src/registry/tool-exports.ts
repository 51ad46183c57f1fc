import { createHash } from 'node:crypto';
import type { JsonObject, JsonSchema, JsonValue, Permission, ToolManifest } from '@toolgate/contracts';

/**
 * The shapes `tools.list` can answer in (ADR 0053): `toolgate` is the manifests themselves; the
 * others are tool definitions ready to paste into an LLM request.
 */
export const TOOL_EXPORT_FORMATS = ['toolgate', 'openai', 'anthropic', 'mcp'] as const;
export type ToolExportFormat = (typeof TOOL_EXPORT_FORMATS)[number];
/** The formats whose names follow a vendor's rule (every format but the manifests). */
export type VendorFormat = Exclude<ToolExportFormat, 'toolgate'>;

/**
 * Each vendor's rule for a tool's name (sources in ADR 0053). Anthropic's is taken at 64, the
 * narrower of the two lengths its documentation and its API have stated, so a name valid here is
 * valid under either.
 */
export const TOOL_NAME_RULES: Readonly<Record<VendorFormat, RegExp>> = {
  openai: /^[a-zA-Z0-9_-]{1,64}$/,
  anthropic: /^[a-zA-Z0-9_-]{1,64}$/,
  mcp: /^[A-Za-z0-9_.-]{1,128}$/,
};

/** Hex digits of the real name's SHA-256 at the end of an alias. */
export const ALIAS_HASH_CHARS = 12;
/** An alias fits the strictest rule above, so one alias serves every format. */
export const ALIAS_MAX_LENGTH = 64;
/** What every alias looks like: a name the API's callers may send (lowercase snake_case) ending in its hash. */
export const ALIAS_SHAPE = new RegExp(`^[a-z][a-z0-9_]{0,${ALIAS_MAX_LENGTH - ALIAS_HASH_CHARS - 2}}_[0-9a-f]{${ALIAS_HASH_CHARS}}$`);

// Aliases by real name. Names come from the registry (a bounded catalog), but sources come and go,
// so the memo is dropped whole when it grows past any plausible catalog.
const aliasMemo = new Map<string, string>();
const ALIAS_MEMO_LIMIT = 10_000;

/**
 * The alias of a tool whose real name breaks a vendor's rule: its name sanitised to lowercase
 * snake_case (a leading `t_` when it does not start with a letter), cut so the whole fits 64
 * characters, then `_` and the first 12 hex digits of the SHA-256 of the real name. Deterministic
 * (the same name always gets the same alias, whatever else is registered), and two names that
 * sanitise alike still differ in their hash.
 */
export function aliasOf(name: string): string {
  const known = aliasMemo.get(name);
  if (known !== undefined) return known;
  const hash = createHash('sha256').update(name, 'utf8').digest('hex').slice(0, ALIAS_HASH_CHARS);
  let prefix = name
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    // A run of replaced characters says nothing; `__` (the server separator) is kept.
    .replace(/_{3,}/g, '__');
  if (!/^[a-z]/.test(prefix)) prefix = `t_${prefix}`;
  prefix = prefix.slice(0, ALIAS_MAX_LENGTH - ALIAS_HASH_CHARS - 1).replace(/_+$/, '');
  const alias = `${prefix}_${hash}`;
  if (aliasMemo.size >= ALIAS_MEMO_LIMIT) aliasMemo.clear();
  aliasMemo.set(name, alias);
  return alias;
}

/** Whether a real name is valid as it is for `format`. */
export function nameFits(name: string, format: VendorFormat): boolean {
  return TOOL_NAME_RULES[format].test(name);
}

const VENDOR_FORMATS = Object.keys(TOOL_NAME_RULES) as VendorFormat[];

/** Whether a name is exported as itself in every vendor format (so it has no alias anywhere). */
function fitsEveryRule(name: string): boolean {
  return VENDOR_FORMATS.every((format) => nameFits(name, format));
}

/** The name a tool is exported under in `format`: its own when the vendor's rule allows it, else its alias. */
export function exportName(name: string, format: VendorFormat): string {
  return nameFits(name, format) ? name : aliasOf(name);
}

/** An exported name that is not the tool's own, and the tool it stands for. */
export interface ToolAlias {
  readonly alias: string;
  readonly tool: string;
}

/** A visible tool an export leaves out, and why (the caller's own tool: naming it leaks nothing). */
export interface WithheldTool {
  readonly tool: string;
  readonly reason: string;
}

/**
 * Which of `names` (the tools a caller sees) need an alias in `format`, and which aliases are
 * usable. An alias that is also a registered tool's real name is not (the real name wins on
 * lookup), nor is one two visible tools share (neither may take it): those tools are withheld
 * rather than exported under a name that would call something else. `alias` is `aliasOf`; a test
 * passes a weaker one to reach the shared-alias case, which SHA-256 makes impractical to meet.
 */
export function aliasPlan(
  names: readonly string[],
  format: VendorFormat,
  isRegistered: (name: string) => boolean,
  alias: (name: string) => string = aliasOf,
): { readonly aliases: ReadonlyMap<string, string>; readonly withheld: readonly WithheldTool[] } {
  const byAlias = new Map<string, string[]>();
  for (const name of names) {
    if (nameFits(name, format)) continue;
    const aliased = alias(name);
    byAlias.set(aliased, [...(byAlias.get(aliased) ?? []), name]);
  }
  const aliases = new Map<string, string>();
  const withheld: WithheldTool[] = [];
  for (const [aliased, tools] of byAlias) {
    if (tools.length > 1) {
      for (const tool of tools) withheld.push({ tool, reason: `its alias '${aliased}' is shared by ${tools.length} tools, so none of them is exported` });
    } else if (isRegistered(aliased)) {
      withheld.push({ tool: tools[0]!, reason: `its alias '${aliased}' is the name of another tool` });
    } else aliases.set(tools[0]!, aliased);
  }
  return { aliases, withheld };
}

/**
 * The tool an alias stands for among `names` (the tools the caller may use), by the same plan the
 * exports follow in every vendor format: undefined for a name that is no usable alias there.
 * A real name is not looked up here; the registry's own lookup comes first and always wins.
 */
export function resolveAlias(
  names: readonly string[],
  sent: string,
  isRegistered: (name: string) => boolean,
  alias: (name: string) => string = aliasOf,
): string | undefined {
  if (!ALIAS_SHAPE.test(sent) || isRegistered(sent)) return undefined;
  let found: string | undefined;
  for (const name of names) {
    // An alias is the same in every format: a name that fits MCP's rule but not OpenAI's has one too.
    if (fitsEveryRule(name) || alias(name) !== sent) continue;
    // Two visible tools sharing the alias: neither is exported under it, so neither is called by it.
    if (found !== undefined) return undefined;
    found = name;
  }
  return found;
}

/** The visible manifest a face was asked for by `sent`: its real name, else its alias. */
export function findVisibleTool(manifests: readonly ToolManifest[], sent: string): ToolManifest | undefined {
  const real = manifests.find((m) => m.name === sent);
  if (real || !ALIAS_SHAPE.test(sent)) return real;
  const named = new Set(manifests.map((m) => m.name));
  const name = resolveAlias([...named], sent, (n) => named.has(n));
  return name === undefined ? undefined : manifests.find((m) => m.name === name);
}

// ---- schemas ---------------------------------------------------------------------------------

/** Keywords whose value is a map of subschemas, each describing a value of its own. */
const VALUE_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);
/** Keywords whose value is one subschema describing other values (items, extra properties). */
const VALUE_ONE = new Set(['additionalProperties', 'items', 'additionalItems', 'contains', 'unevaluatedItems']);
/** Keywords whose value is a list of subschemas, each describing a value of its own. */
const VALUE_LIST = new Set(['prefixItems', 'items']);
/** Alternatives: each branch may define the object's whole shape (a nullable object, a union of shapes). */
const ALTERNATIVES = new Set(['anyOf', 'oneOf']);
/** Keywords applying another schema to the same value: closing one would refuse what its siblings allow. */
const SAME_VALUE = new Set(['allOf', 'not', 'if', 'then', 'else']);
/** Steps of nesting (a keyword and its map entry are two) far beyond any schema the registry accepts; deeper is refused, not walked. */
const MAX_SCHEMA_DEPTH = 256;

/** A schema too deep to close. */
export class SchemaNotExportable extends Error {}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describesObject(schema: JsonObject): boolean {
  const type = schema['type'];
  if (type !== undefined) return type === 'object' || (Array.isArray(type) && type.includes('object'));
  return 'properties' in schema || 'patternProperties' in schema;
}

/** Whether the schema itself lists properties, so branches combined with it only refine that shape. */
function ownsShape(schema: JsonObject): boolean {
  return 'properties' in schema || 'patternProperties' in schema;
}

/** Keywords that apply further schemas to the same value, and so may name properties of their own. */
const COMBINERS = ['allOf', 'anyOf', 'oneOf', 'if', 'then', 'else', 'dependentSchemas'] as const;
/** Keywords that only annotate: a `$ref` beside nothing else is the referenced schema alone. */
const ANNOTATIONS = new Set(['title', 'description', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);

function branchesOf(schema: JsonObject, key: (typeof COMBINERS)[number]): JsonValue[] {
  const value = schema[key];
  if (Array.isArray(value)) return value;
  if (key === 'dependentSchemas') return isObject(value) ? Object.values(value) : [];
  return value === undefined ? [] : [value];
}

/**
 * The property names a branch applied to the same value mentions (its `properties` and
 * `required`, and those of its own branches), or undefined when it cannot say (a `$ref`, or
 * `patternProperties`): then the properties it allows are not known here.
 */
function namesIn(branch: JsonValue, depth: number): Set<string> | undefined {
  if (!isObject(branch)) return new Set();
  if (depth > MAX_SCHEMA_DEPTH) throw new SchemaNotExportable('the schema is nested too deeply to export');
  if ('$ref' in branch || '$dynamicRef' in branch || 'patternProperties' in branch) return undefined;
  const names = new Set<string>();
  if (isObject(branch['properties'])) for (const name of Object.keys(branch['properties'])) names.add(name);
  if (Array.isArray(branch['required'])) for (const name of branch['required']) if (typeof name === 'string') names.add(name);
  for (const key of COMBINERS) {
    for (const sub of branchesOf(branch, key)) {
      const inner = namesIn(sub, depth + 1);
      if (inner === undefined) return undefined;
      for (const name of inner) names.add(name);
    }
  }
  return names;
}

/**
 * Whether `additionalProperties: false` may be added at this level without refusing what the
 * schema allows: JSON Schema's `additionalProperties` sees only the properties listed beside it,
 * so a schema whose properties come from a `$ref` or from branches naming others is left as it is.
 */
function closable(schema: JsonObject, depth: number): boolean {
  if (!describesObject(schema) || '$ref' in schema || '$dynamicRef' in schema) return false;
  const own = new Set(isObject(schema['properties']) ? Object.keys(schema['properties']) : []);
  for (const key of COMBINERS) {
    for (const branch of branchesOf(schema, key)) {
      const names = namesIn(branch, depth + 1);
      if (names === undefined || [...names].some((name) => !own.has(name))) return false;
    }
  }
  return true;
}

/**
 * The root `$defs`/`definitions` a `$ref` applies together with other rules (in an `allOf` or
 * `if`/`then`/`else` branch, an `anyOf`/`oneOf` branch refining its parent's properties, or beside
 * other keywords): closing such a definition would refuse the properties the others add.
 */
function sharedDefinitions(schema: JsonValue, alongside: boolean, depth: number, out: Set<string>): Set<string> {
  if (depth > MAX_SCHEMA_DEPTH) throw new SchemaNotExportable('the schema is nested too deeply to export');
  if (Array.isArray(schema)) {
    for (const sub of schema) sharedDefinitions(sub, alongside, depth + 1, out);
    return out;
  }
  if (!isObject(schema)) return out;
  const ref = schema['$ref'];
  if (typeof ref === 'string' && (alongside || Object.keys(schema).some((k) => k !== '$ref' && !ANNOTATIONS.has(k)))) out.add(ref);
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') continue;
    const combined = SAME_VALUE.has(key) || key === 'dependentSchemas' || (ALTERNATIVES.has(key) && ownsShape(schema));
    if (VALUE_MAPS.has(key) || key === 'dependentSchemas') {
      if (isObject(value)) for (const sub of Object.values(value)) sharedDefinitions(sub, combined, depth + 2, out);
    } else sharedDefinitions(value, combined, depth + 1, out);
  }
  return out;
}

function copyData(value: JsonValue, depth: number): JsonValue {
  if (depth > MAX_SCHEMA_DEPTH) throw new SchemaNotExportable('the schema is nested too deeply to export');
  if (Array.isArray(value)) return frozenList(value.map((v) => copyData(v, depth + 1)));
  if (isObject(value)) {
    const out: Record<string, JsonValue> = {};
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: copyData(v, depth + 1), enumerable: true });
    return Object.freeze(out);
  }
  return value;
}

/** A frozen list, typed as the JSON it holds (`Object.freeze` types it readonly). */
function frozenList(values: JsonValue[]): JsonValue {
  return Object.freeze(values) as unknown as JsonValue;
}

/** What closing one schema needs beside the schema: the definitions that must stay open, and whether this is the root. */
interface Closing {
  readonly shared: ReadonlySet<string>;
  readonly root: boolean;
}

function closeAt(schema: JsonValue, closeHere: boolean, depth: number, closing: Closing): JsonValue {
  if (depth > MAX_SCHEMA_DEPTH) throw new SchemaNotExportable('the schema is nested too deeply to export');
  if (!isObject(schema)) return copyData(schema, depth);
  const inner: Closing = { shared: closing.shared, root: false };
  const out: Record<string, JsonValue> = {};
  // Redefinable until frozen below: the closing `additionalProperties` replaces an `additionalProperties: true`.
  const set = (key: string, value: JsonValue) => Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  const mapOf = (value: JsonObject, close: (name: string) => boolean) => {
    const map: Record<string, JsonValue> = {};
    for (const [name, sub] of Object.entries(value)) Object.defineProperty(map, name, { value: closeAt(sub, close(name), depth + 2, inner), enumerable: true });
    return Object.freeze(map);
  };
  for (const [key, value] of Object.entries(schema)) {
    if ((key === '$defs' || key === 'definitions') && isObject(value)) {
      // Only the root's definitions are named by the `$ref`s found (`#/$defs/<name>`); nested ones are closed as values.
      set(key, mapOf(value, (name) => !(closing.root && closing.shared.has(`#/${key}/${name}`))));
    } else if (VALUE_MAPS.has(key) && isObject(value)) {
      set(key, mapOf(value, () => true));
    } else if (VALUE_LIST.has(key) && Array.isArray(value)) {
      set(key, frozenList(value.map((sub) => closeAt(sub, true, depth + 2, inner))));
    } else if (VALUE_ONE.has(key) && isObject(value)) {
      set(key, closeAt(value, true, depth + 1, inner));
    } else if (ALTERNATIVES.has(key) && Array.isArray(value)) {
      const alone = !ownsShape(schema);
      set(key, frozenList(value.map((sub) => closeAt(sub, alone, depth + 2, inner))));
    } else if (SAME_VALUE.has(key)) {
      set(key, Array.isArray(value) ? frozenList(value.map((sub) => closeAt(sub, false, depth + 2, inner))) : closeAt(value, false, depth + 1, inner));
    } else if (key === 'dependentSchemas' && isObject(value)) {
      set(key, mapOf(value, () => false));
    } else set(key, copyData(value, depth + 1));
  }
  // Absent or `true` is an open object; a schema-valued `additionalProperties` is a typed map and stays.
  const extra = schema['additionalProperties'];
  if (closeHere && !isObject(extra) && schema['unevaluatedProperties'] !== false && closable(schema, depth)) set('additionalProperties', false);
  return Object.freeze(out);
}

/**
 * A frozen copy of an input schema with every object closed (`additionalProperties: false`): the
 * top level, and every object a value of it can be (properties, items, definitions, and the
 * branches of an `anyOf`/`oneOf` that alone define an object). Branches of `allOf`, `not` and
 * `if`/`then`/`else` apply to the same value as their parent and are not closed themselves (that
 * would refuse the parent's own properties), though the objects inside them are. Nor is a level
 * whose properties come from elsewhere (a `$ref`, or branches naming properties it does not list),
 * nor a root definition a `$ref` combines with other rules. A typed map (`additionalProperties`
 * holding a schema) stays a map. Throws `SchemaNotExportable` when nested far deeper than any
 * registered schema.
 */
export function closedSchema(schema: JsonSchema): JsonSchema {
  const shared = sharedDefinitions(schema as JsonValue, false, 0, new Set());
  return closeAt(schema as JsonValue, true, 0, { shared, root: true }) as JsonSchema;
}

// ---- the MCP definition (ADR 0049), shared by /mcp and the `mcp` export ----------------------

/** The behaviour hints MCP clients use to warn their users (MCP `ToolAnnotations`). */
export interface ToolHints {
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly openWorldHint: boolean;
}

/** One entry of an MCP `tools/list` result, built from a manifest. */
export interface McpToolDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  readonly annotations: ToolHints & { readonly title: string };
}

/** Permission scopes that only read; any other scope may change something. */
const READ_SCOPES = new Set(['read']);

function onlyReads(permissions: readonly Permission[]): boolean {
  return permissions.every((p) => READ_SCOPES.has(p.scope));
}

/**
 * Maps a manifest's risk and permissions onto MCP's hints (ADR 0049). A hint only ever errs
 * towards a warning: the manifest says what authority a tool needs, not what it does with it, so
 * a tool is called read-only only when its permissions prove it.
 *
 * - `readOnlyHint`: risk `low` and every permission is a `read` scope (or there are none).
 * - `destructiveHint`: not read-only, and risk `high`/`critical` or an `exec` or `filesystem`
 *   permission (a shell, or a write into the workspace, can overwrite or delete).
 * - `openWorldHint`: a `network` permission, an egress spec, or a tool of an upstream MCP server.
 */
export function toolHints(manifest: ToolManifest): ToolHints {
  const readOnly = manifest.risk === 'low' && onlyReads(manifest.permissions);
  const destructive =
    !readOnly &&
    (manifest.risk === 'high' || manifest.risk === 'critical' || manifest.permissions.some((p) => p.type === 'exec' || p.type === 'filesystem'));
  const openWorld =
    manifest.permissions.some((p) => p.type === 'network') || manifest.egress !== undefined || manifest.provenance.startsWith('mcp:');
  return { readOnlyHint: readOnly, destructiveHint: destructive, openWorldHint: openWorld };
}

/**
 * A human-readable title from the snake_case name: `read_file` → `Read file`, and an upstream
 * MCP tool `<server>__<tool>` → `server: Tool`.
 */
export function toolTitle(name: string): string {
  const words = (part: string) => part.replace(/_+/g, ' ').trim();
  const sentence = (part: string) => {
    const text = words(part);
    return text.charAt(0).toUpperCase() + text.slice(1);
  };
  const split = name.indexOf('__');
  if (split > 0) return `${words(name.slice(0, split))}: ${sentence(name.slice(split + 2))}`;
  return sentence(name);
}

// Built once per manifest: closing a schema copies it, and /mcp lists on every request.
const mcpMemo = new WeakMap<ToolManifest, McpToolDefinition>();

/**
 * The MCP definition of one tool: the name (its alias if MCP's rule refuses it, which no name the
 * registry admits does), the description, the closed input schema and the output schema.
 */
export function toMcpTool(manifest: ToolManifest): McpToolDefinition {
  const known = mcpMemo.get(manifest);
  if (known) return known;
  const title = toolTitle(manifest.name);
  const definition: McpToolDefinition = Object.freeze({
    name: exportName(manifest.name, 'mcp'),
    title,
    description: manifest.description,
    inputSchema: closedSchema(manifest.input),
    outputSchema: manifest.output,
    annotations: Object.freeze({ title, ...toolHints(manifest) }),
  });
  mcpMemo.set(manifest, definition);
  return definition;
}

// ---- the vendor formats ----------------------------------------------------------------------

/** One entry of OpenAI's Chat Completions `tools` array. */
export interface OpenAiToolDefinition {
  readonly type: 'function';
  readonly function: { readonly name: string; readonly description: string; readonly parameters: JsonSchema };
}

/** One entry of Anthropic's Messages API `tools` array (a custom tool). */
export interface AnthropicToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly input_schema: JsonSchema;
}

/** A definition in each format. */
export interface ToolDefinitionOf {
  readonly toolgate: ToolManifest;
  readonly openai: OpenAiToolDefinition;
  readonly anthropic: AnthropicToolDefinition;
  readonly mcp: McpToolDefinition;
}

/**
 * What `tools.list` answers when asked for a format: `tools` is the array to paste into a request
 * as it is, `aliases` says which exported names stand for which tools (a call may use either),
 * and `withheld` names visible tools left out, with the reason.
 */
export interface ToolExport<F extends ToolExportFormat = ToolExportFormat> {
  readonly format: F;
  readonly tools: readonly ToolDefinitionOf[F][];
  readonly aliases: readonly ToolAlias[];
  readonly withheld: readonly WithheldTool[];
}

function definitionIn<F extends VendorFormat>(format: F, manifest: ToolManifest, name: string): ToolDefinitionOf[F] {
  if (format === 'mcp') return toMcpTool(manifest) as ToolDefinitionOf[F];
  const input = toMcpTool(manifest).inputSchema;
  if (format === 'openai') {
    return { type: 'function', function: { name, description: manifest.description, parameters: input } } as ToolDefinitionOf[F];
  }
  return { name, description: manifest.description, input_schema: input } as ToolDefinitionOf[F];
}

/**
 * Exports the tools a caller sees (`manifests`, as `tools.list` shows them, in that order) in
 * `format`. `isRegistered` says whether a name is any registered tool's, visible or not: an alias
 * equal to one would call that tool, so it is never exported.
 */
export function exportTools<F extends ToolExportFormat>(manifests: readonly ToolManifest[], format: F, isRegistered: (name: string) => boolean): ToolExport<F> {
  if (format === 'toolgate') return { format, tools: manifests as readonly ToolDefinitionOf[F][], aliases: [], withheld: [] };
  const vendor = format as VendorFormat;
  const plan = aliasPlan(
    manifests.map((m) => m.name),
    vendor,
    isRegistered,
  );
  const withheld = [...plan.withheld];
  const left = new Set(withheld.map((w) => w.tool));
  const tools: ToolDefinitionOf[F][] = [];
  const aliases: ToolAlias[] = [];
  for (const manifest of manifests) {
    if (left.has(manifest.name)) continue;
    const alias = plan.aliases.get(manifest.name);
    try {
      tools.push(definitionIn(vendor, manifest, alias ?? manifest.name) as ToolDefinitionOf[F]);
    } catch (error) {
      if (!(error instanceof SchemaNotExportable)) throw error;
      withheld.push({ tool: manifest.name, reason: error.message });
      continue;
    }
    if (alias !== undefined) aliases.push({ alias, tool: manifest.name });
  }
  return { format, tools, aliases, withheld };
}
