import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { JsonObject, JsonValue, Permission, ToolContext, ToolDefinition, ToolManifest } from '@toolgate/contracts';
import { DiscoveryBudget, countSchema, type DiscoveryBounds } from './discovery-budget.js';
import type { McpServerConfig } from './mcp-servers-config.js';
import {
  MCP_CALL_RESULT_SCHEMA,
  MCP_TOOL_LIMITS,
  SchemaRejected,
  closeInputSchema,
  registryName,
  sanitiseDescription,
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
  readonly log: (message: string) => void;
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
 * Every tool the server lists, page by page, at most {@link MAX_TOOLS} over at most
 * {@link MAX_LIST_PAGES} pages (the rest is logged and ignored). A server without the tools
 * capability offers none.
 */
export async function listAllTools(client: Client, server: DiscoveredServer): Promise<ListedTool[]> {
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
    const overBudget = budget.charge(countOf(tool.inputSchema));
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
      description: describeTool(tool, server.name),
      provenance: `mcp:${server.name}`,
      risk: server.config.risk ?? 'high',
      permissions: server.config.permissions ?? defaultPermissions(server.name),
      input,
      output: MCP_CALL_RESULT_SCHEMA,
      tier: server.config.tier,
      timeoutMs: server.timeoutMs,
    };
    const definition: ToolDefinition = { manifest, handler: { invoke: (args, ctx) => server.invoke(name, args, ctx) } };
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
  readonly description?: string | undefined;
  readonly inputSchema: unknown;
}

/** Yields to the event loop: I/O and timers queued meanwhile run before the next tool is compiled. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** What a schema would cost (bytes as JSON, patterns, properties); a schema that is not plain JSON costs nothing, since `closeInputSchema` refuses it. */
function countOf(schema: unknown): ReturnType<typeof countSchema> {
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch {
    text = undefined;
  }
  if (typeof text !== 'string') return { bytes: 0, patterns: 0, properties: 0 };
  const bytes = Buffer.byteLength(text, 'utf8');
  // Over the per-tool size it is refused by `closeInputSchema` before anything is compiled; not charged.
  if (bytes > MCP_TOOL_LIMITS.schemaBytes) return { bytes: 0, patterns: 0, properties: 0 };
  return countSchema(schema, bytes);
}

function defaultPermissions(server: string): readonly Permission[] {
  return [{ type: 'exec', scope: `mcp:${server}` }];
}

/** The server's reported version if it is a plain version string, else `0.0.0`. */
function pinVersion(reported: unknown): string {
  return typeof reported === 'string' && /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/.test(reported) ? reported : '0.0.0';
}

function describeTool(tool: ListedTool, server: string): string {
  const text = sanitiseDescription(typeof tool.description === 'string' ? tool.description : '', MCP_TOOL_LIMITS.descriptionChars);
  return text || `Tool '${tool.name}' of MCP server '${server}'.`;
}

function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}
