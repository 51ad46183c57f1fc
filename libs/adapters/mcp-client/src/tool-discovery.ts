import type { JsonObject, JsonValue, Permission, ToolContext, ToolDefinition, ToolManifest } from '@toolgate/contracts';
import { DiscoveryBudget, countSchema, type DiscoveryBounds } from './discovery-budget.js';
import type { McpServerConfig } from './mcp-servers-config.js';
import type { OperatorLogLevel } from './server-log.js';
import { pinVersion } from './pin-version.js';
import {
  MCP_CALL_RESULT_SCHEMA,
  MCP_TOOL_LIMITS,
  SchemaRejected,
  boundDescription,
  closeInputSchema,
  registryName,
  sanitiseMessage,
  sanitiseToolName,
} from './mcp-tool-schema.js';

// How one MCP server's tool list becomes tool definitions: read page by page, each tool named,
// charged to the discovery budget, its schema closed and checked, one tool per turn.

/** Most tools read from one server. */
const MAX_TOOLS = 256;
/** Most pages of `tools/list` read from one server. */
const MAX_LIST_PAGES = 20;

/** The server whose tools are discovered, as discovery needs to know it. */
export interface DiscoveredServer {
  /** The server's configured name, the prefix of its tools' names and their `mcp:<name>` provenance. */
  readonly name: string;
  /** The operator's configuration (risk, permissions, tier), trusted. */
  readonly config: McpServerConfig;
  /** The deadline each tool's manifest carries. */
  readonly timeoutMs: number;
  /** Bound of each `tools/list` request. */
  readonly startTimeoutMs: number;
  /** What discovery may cost; `MCP_DISCOVERY_BUDGET` unless given. */
  readonly discoveryBudget?: DiscoveryBounds | undefined;
  /** The registry's own check of a definition, run here (see `McpToolSourceOptions.check`). */
  readonly check?: ((definition: ToolDefinition) => void) | undefined;
  /** The operator log. */
  readonly log: (message: string, level?: OperatorLogLevel) => void;
  /** Calls the tool `name` through the connection live at call time. */
  readonly invoke: (name: string, args: JsonObject, ctx: ToolContext) => Promise<JsonValue>;
}

/** The definitions to register and, for each, the server's own tool name. */
export interface DiscoveredTools {
  readonly definitions: ToolDefinition[];
  /** Registry name → the server's own tool name. */
  readonly names: Map<string, string>;
}

/**
 * What listing needs of an MCP client, structurally: the 1.32 stdio `Client` and the 2.4 client a
 * remote source uses both fit, so discovery does not depend on one SDK generation.
 */
export interface ToolListingClient {
  /** The capabilities the server declared in its handshake (only `tools` is read). */
  getServerCapabilities(): { readonly tools?: unknown } | undefined;
  /** One `tools/list` page. */
  listTools(
    params: { cursor: string } | undefined,
    options: { timeout: number },
  ): Promise<{ readonly tools: readonly ListedTool[]; readonly nextCursor?: string | undefined }>;
}

/**
 * Every tool the server lists, page by page, at most {@link MAX_TOOLS} over at most
 * {@link MAX_LIST_PAGES} pages (the rest is logged and ignored). A server without the tools
 * capability offers none.
 */
export async function listAllTools(client: ToolListingClient, server: DiscoveredServer): Promise<ListedTool[]> {
  if (!client.getServerCapabilities()?.tools) {
    server.log(`MCP server '${server.name}' does not offer tools`);
    return [];
  }
  const listed: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: server.startTimeoutMs });
    listed.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined || listed.length >= MAX_TOOLS) break;
  }
  if (listed.length > MAX_TOOLS || cursor !== undefined) {
    server.log(`MCP server '${server.name}' lists more than ${Math.min(listed.length, MAX_TOOLS)} tools; the rest are ignored`);
  }
  return listed.slice(0, MAX_TOOLS);
}

/**
 * Turns the server's list into definitions, leaving out (and logging) what cannot be registered
 * safely or does not fit the server's discovery budget (`MCP_DISCOVERY_BUDGET`). One tool per
 * turn of the event loop: closing and compiling a schema takes milliseconds, and a whole
 * catalogue in one turn would keep every other caller waiting. Stops early once `gone()`.
 */
export async function discoverTools(
  listed: readonly ListedTool[],
  reportedVersion: unknown,
  server: DiscoveredServer,
  gone: () => boolean,
): Promise<DiscoveredTools> {
  const version = pinVersion(reportedVersion);
  const budget = new DiscoveryBudget(server.discoveryBudget);
  const bySanitised = new Map<string, ListedTool[]>();
  for (const tool of listed) {
    const sanitised = sanitiseToolName(tool.name);
    if (sanitised === undefined) {
      server.log(`MCP server '${server.name}': tool ${quote(tool.name)} has no usable name; it is not registered`);
      continue;
    }
    bySanitised.set(sanitised, [...(bySanitised.get(sanitised) ?? []), tool]);
  }
  const definitions: ToolDefinition[] = [];
  const names = new Map<string, string>();
  for (const [sanitised, tools] of bySanitised) {
    const name = registryName(server.name, sanitised);
    if (tools.length > 1) {
      // Neither wins: registering one would let the server decide which code a name runs.
      server.log(
        `MCP server '${server.name}': tools ${tools.map((t) => quote(t.name)).join(' and ')} all map to '${name}'; none of them is registered`,
      );
      continue;
    }
    const tool = tools[0] as ListedTool;
    await nextTurn();
    if (gone()) break;
    if (taskSupportOf(tool) === 'required') {
      // The client cannot run the tasks API: every call would fail with an error that blames the server.
      server.log(
        `MCP server '${server.name}': tool ${quote(tool.name)} is not registered: it requires task-based execution (execution.taskSupport "required"), which Toolgate's MCP client does not support`,
      );
      continue;
    }
    const declared = declaredOf(tool);
    if (declared === undefined) {
      server.log(`MCP server '${server.name}': tool ${quote(tool.name)} is not registered: its definition nests deeper than ${DECLARED_DEPTH} levels`);
      continue;
    }
    // The whole declared entry is charged, not only its input schema: the gateway pins all of it
    // (output schema, annotations and description included), so one listing's pins are bounded too.
    const declaredBytes = Buffer.byteLength(JSON.stringify(declared), 'utf8');
    if (declaredBytes > DECLARED_BYTES) {
      server.log(`MCP server '${server.name}': tool ${quote(tool.name)} is not registered: its definition is ${declaredBytes} bytes, more than the ${DECLARED_BYTES} a tool pin holds`);
      continue;
    }
    const overBudget = budget.charge(countOf(tool.inputSchema, declaredBytes));
    if (overBudget !== undefined) {
      server.log(`MCP server '${server.name}': tool ${quote(tool.name)} is not registered: ${overBudget}`);
      continue;
    }
    let input;
    try {
      input = closeInputSchema(tool.inputSchema, { probe: server.check === undefined });
    } catch (error) {
      const why = error instanceof SchemaRejected ? error.message : 'the input schema is unusable';
      server.log(`MCP server '${server.name}': tool ${quote(tool.name)} is not registered: ${why}`);
      continue;
    }
    const manifest: ToolManifest = {
      name,
      version,
      description: describeTool(tool, server),
      provenance: `mcp:${server.name}`,
      risk: server.config.risk ?? 'high',
      permissions: server.config.permissions ?? defaultPermissions(server.name),
      input,
      output: MCP_CALL_RESULT_SCHEMA,
      tier: server.config.tier,
      timeoutMs: server.timeoutMs,
    };
    const definition: ToolDefinition = { manifest, handler: { invoke: (args, ctx) => server.invoke(name, args, ctx) }, declared };
    if (server.check) {
      try {
        server.check(definition);
      } catch (error) {
        const why = sanitiseMessage(error instanceof Error ? error.message : 'the definition is invalid', 300);
        server.log(`MCP server '${server.name}': tool ${quote(tool.name)} is not registered: ${why}`);
        continue;
      }
    }
    names.set(name, tool.name);
    definitions.push(definition);
  }
  return { definitions, names };
}

/** A tool as `listTools` returns it (only the fields read here). */
export interface ListedTool {
  readonly name: string;
  readonly title?: unknown;
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
  readonly execution?: unknown;
}

/** Yields to the event loop: I/O and timers queued meanwhile run before the next tool is compiled. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * What a tool would cost: `declaredBytes` (its whole declared entry as JSON), and the patterns and
 * properties of its input schema (what is compiled). An input schema that is not plain JSON, or is
 * over the per-tool size, costs nothing, since `closeInputSchema` refuses it before anything is compiled.
 */
function countOf(schema: unknown, declaredBytes: number): ReturnType<typeof countSchema> {
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch {
    text = undefined;
  }
  if (typeof text !== 'string') return { bytes: 0, patterns: 0, properties: 0 };
  if (Buffer.byteLength(text, 'utf8') > MCP_TOOL_LIMITS.schemaBytes) return { bytes: 0, patterns: 0, properties: 0 };
  return countSchema(schema, declaredBytes);
}

function defaultPermissions(server: string): readonly Permission[] {
  return [{ type: 'exec', scope: `mcp:${server}` }];
}

/** The fields of a listed tool that make up its definition as the server declared it. */
const DECLARED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'execution'] as const;

/**
 * Deepest nesting of a declared definition: below the pin store's 128 levels, so every
 * definition registered can be pinned, and shallow enough that copying it cannot exhaust the stack
 * (the input schema is bounded at 32 already; `outputSchema` and `annotations` are not otherwise).
 */
const DECLARED_DEPTH = 100;

/** Largest declared entry, as JSON: what a tool pin holds (256 KiB), so every tool registered can be pinned. */
const DECLARED_BYTES = 256 * 1024;

/**
 * The server's own entry for a tool, as listed: the fields in {@link DECLARED_FIELDS} that are
 * present, as a plain JSON copy (what the gateway pins the tool by; nothing of it is shown), or
 * undefined when it nests deeper than {@link DECLARED_DEPTH}.
 */
function declaredOf(tool: ListedTool): JsonObject | undefined {
  const declared: JsonObject = {};
  for (const field of DECLARED_FIELDS) {
    const value = tool[field];
    if (value === undefined) continue;
    if (nestsDeeperThan(value, DECLARED_DEPTH - 1)) return undefined;
    // The listing was parsed from JSON and its depth is bounded, so the copy cannot fail; it detaches from the SDK's object.
    declared[field] = JSON.parse(JSON.stringify(value)) as JsonValue;
  }
  return declared;
}

/** Whether `value` holds arrays or objects more than `max` levels deep; iterative, so depth cannot exhaust the stack. */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}


/** `execution.taskSupport` as the server declared it, if it is a string. */
function taskSupportOf(tool: ListedTool): string | undefined {
  const execution = tool.execution;
  if (typeof execution !== 'object' || execution === null) return undefined;
  const support = (execution as { readonly taskSupport?: unknown }).taskSupport;
  return typeof support === 'string' ? support : undefined;
}

/**
 * A tool's description as agents read it: flattened to one line and, past
 * `MCP_TOOL_LIMITS.toolDescriptionChars`, cut with a note saying so (the operator log says it too).
 */
function describeTool(tool: ListedTool, server: DiscoveredServer): string {
  const { text, cut } = boundDescription(typeof tool.description === 'string' ? tool.description : '', MCP_TOOL_LIMITS.toolDescriptionChars);
  if (cut !== undefined) {
    server.log(`MCP server '${server.name}': the description of tool ${quote(tool.name)} is cut to ${cut.shown} of ${cut.total} characters`, 'warn');
  }
  return text || `Tool '${tool.name}' of MCP server '${server.name}'.`;
}

function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}
