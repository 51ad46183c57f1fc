import {
  LONG_LIVED_TIERS,
  PERMISSION_TYPES,
  RISK_LEVELS,
  type LongLivedTier,
  type Permission,
  type PermissionType,
  type RiskLevel,
} from '@toolgate/contracts';

/**
 * The sandbox tiers an MCP server may run at: the tiers that can host a long-lived process
 * (`hostsLongLived` in the contracts' tier traits), today `bwrap` (tier 2, bubblewrap) and
 * `unisolated` (tier 1: a host process as the server's user, named so nobody picks it by accident).
 */
export type McpServerTier = LongLivedTier;
/** {@link McpServerTier} as a list, sorted by name so messages read the same whatever the tier order. */
export const MCP_SERVER_TIERS: readonly McpServerTier[] = Object.freeze([...LONG_LIVED_TIERS].sort());

/** Tier names that were renamed; the old spelling is refused with what it is now called and why. */
const RENAMED_TIERS: Readonly<Record<string, string>> = {
  subprocess: 'tier "subprocess" was renamed "unisolated": it runs the server as a host process that can read and signal whatever Toolgate\'s user can; use "bwrap" to sandbox it, or write "unisolated" to accept that',
};

/** One MCP server of `TOOLGATE_MCP_SERVERS_FILE`, validated. */
export interface McpServerConfig {
  /**
   * `^[a-z][a-z0-9_-]{0,31}$`, without two of `_`/`-` in a row or one at the end; the tools are
   * registered as `<name>__<tool>` (`-` becomes `_`), so the first `__` always ends the server name.
   */
  readonly name: string;
  /** Executable, looked up on the sandbox's PATH. */
  readonly command: string;
  readonly args: readonly string[];
  /** The only variables the server gets besides the tier's minimal PATH/HOME/LANG. May hold secrets. */
  readonly env: Readonly<Record<string, string>>;
  readonly tier: McpServerTier;
  /** Risk of every tool of the server; absent means `high` (unverified code). */
  readonly risk?: RiskLevel;
  /** Deadline of one call; absent means 30 s. */
  readonly timeoutMs?: number;
  /** Permissions every tool of the server needs; absent means `exec` on `mcp:<name>`. */
  readonly permissions?: readonly Permission[];
}

/** The whole of `TOOLGATE_MCP_SERVERS_FILE`. */
export interface McpServersConfig {
  readonly servers: readonly McpServerConfig[];
}

/** The file is not a valid MCP servers file. The message names the fault, never an env value. */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
}

/** Bounds that keep a hostile or mistaken file from costing more than it is worth. */
export const MCP_CONFIG_LIMITS = {
  fileBytes: 1024 * 1024,
  servers: 64,
  args: 256,
  argChars: 8192,
  envVars: 256,
  envValueChars: 32 * 1024,
  permissions: 32,
  scopeChars: 256,
  commandChars: 4096,
  minTimeoutMs: 100,
  maxTimeoutMs: 10 * 60_000,
} as const;

export const MCP_SERVER_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const SERVER_KEYS = ['name', 'command', 'args', 'env', 'tier', 'risk', 'timeoutMs', 'permissions'] as const;

/**
 * Parses and strictly validates the text of `TOOLGATE_MCP_SERVERS_FILE`:
 * `{"servers":[{"name":"files","command":"node","args":["server.js"],"env":{…},"tier":"bwrap"}]}`.
 * Throws `McpConfigError` naming the first fault and the server (index and name). Values that may
 * be secret (env values, args, the command) are never repeated in a message.
 */
export function parseMcpServersFile(text: string): McpServersConfig {
  if (typeof text !== 'string') throw new McpConfigError('MCP servers file: expected the file text as a string');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MCP_CONFIG_LIMITS.fileBytes) {
    throw new McpConfigError(`MCP servers file is ${bytes} bytes; the limit is ${MCP_CONFIG_LIMITS.fileBytes}`);
  }
  const root = parseJson(text);
  if (!isPlainObject(root)) throw new McpConfigError('MCP servers file: the top level must be an object {"servers": [...]}');
  rejectUnknownKeys(root, ['servers'], 'MCP servers file: top level');
  const servers = root['servers'];
  if (!Array.isArray(servers)) throw new McpConfigError('MCP servers file: "servers" must be an array');
  if (servers.length > MCP_CONFIG_LIMITS.servers) {
    throw new McpConfigError(`MCP servers file: ${servers.length} servers; the limit is ${MCP_CONFIG_LIMITS.servers}`);
  }
  const parsed = servers.map((raw, index) => parseServer(raw, index));
  // Tool names use `_` where a server name has `-`, so `a-b` and `a_b` would register the same tools.
  const seen = new Map<string, number>();
  parsed.forEach((server, index) => {
    const key = server.name.replace(/-/g, '_');
    const first = seen.get(key);
    if (first !== undefined) {
      const same = parsed[first]?.name === server.name;
      throw new McpConfigError(
        `MCP servers file: servers[${index}] ("${server.name}"): ` +
          (same
            ? `duplicate name; servers[${first}] already uses it`
            : `name clashes with servers[${first}] ("${parsed[first]?.name}"): both register tools as "${key}__…"`),
      );
    }
    seen.set(key, index);
  });
  return { servers: parsed };
}

function parseServer(raw: unknown, index: number): McpServerConfig {
  let where = `MCP servers file: servers[${index}]`;
  if (!isPlainObject(raw)) throw new McpConfigError(`${where}: must be an object`);
  const name = raw['name'];
  if (typeof name !== 'string') throw new McpConfigError(`${where}: "name" is required and must be a string`);
  if (!MCP_SERVER_NAME_PATTERN.test(name)) {
    throw new McpConfigError(
      `${where}: name ${quoteShort(name)} must match ${MCP_SERVER_NAME_PATTERN.source} (lowercase, starts with a letter, at most 32 characters)`,
    );
  }
  where = `${where} ("${name}")`;
  // `__` separates server and tool in `<server>__<tool>`: a server "gh__x" (or "gh-_x", "gh_")
  // could otherwise register the very names a server "gh" offers.
  if (/[-_]{2}|[-_]$/.test(name)) {
    throw new McpConfigError(
      `${where}: name must not hold two of '_' or '-' in a row or end with one: "__" separates the server from its tool names, so such a server could take another server's tool names`,
    );
  }
  rejectUnknownKeys(raw, SERVER_KEYS, where);

  const command = raw['command'];
  if (typeof command !== 'string') throw new McpConfigError(`${where}: "command" is required and must be a string`);
  if (command.trim() === '' || command.length > MCP_CONFIG_LIMITS.commandChars || command.includes('\0')) {
    throw new McpConfigError(
      `${where}: "command" must be a non-empty string of at most ${MCP_CONFIG_LIMITS.commandChars} characters without NUL`,
    );
  }

  const args = raw['args'] ?? [];
  if (!Array.isArray(args)) throw new McpConfigError(`${where}: "args" must be an array of strings`);
  if (args.length > MCP_CONFIG_LIMITS.args) {
    throw new McpConfigError(`${where}: "args" has ${args.length} items; the limit is ${MCP_CONFIG_LIMITS.args}`);
  }
  args.forEach((arg, i) => {
    if (typeof arg !== 'string') throw new McpConfigError(`${where}: args[${i}] must be a string, not ${typeName(arg)}`);
    if (arg.length > MCP_CONFIG_LIMITS.argChars || arg.includes('\0')) {
      throw new McpConfigError(`${where}: args[${i}] must be at most ${MCP_CONFIG_LIMITS.argChars} characters without NUL`);
    }
  });

  const env = parseEnv(raw['env'], where);

  const tier = raw['tier'];
  if (tier === undefined) {
    throw new McpConfigError(`${where}: "tier" is required: one of ${MCP_SERVER_TIERS.map((t) => `"${t}"`).join(', ')}`);
  }
  if (typeof tier === 'string' && Object.hasOwn(RENAMED_TIERS, tier)) throw new McpConfigError(`${where}: ${RENAMED_TIERS[tier]}`);
  if (typeof tier !== 'string' || !(MCP_SERVER_TIERS as readonly string[]).includes(tier)) {
    throw new McpConfigError(
      `${where}: tier ${quoteShort(tier)} is not one of ${MCP_SERVER_TIERS.map((t) => `"${t}"`).join(', ')}`,
    );
  }

  const risk = raw['risk'];
  if (risk !== undefined && (typeof risk !== 'string' || !(RISK_LEVELS as readonly string[]).includes(risk))) {
    throw new McpConfigError(`${where}: risk ${quoteShort(risk)} is not one of ${RISK_LEVELS.map((r) => `"${r}"`).join(', ')}`);
  }

  const timeoutMs = raw['timeoutMs'];
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' ||
      !Number.isInteger(timeoutMs) ||
      timeoutMs < MCP_CONFIG_LIMITS.minTimeoutMs ||
      timeoutMs > MCP_CONFIG_LIMITS.maxTimeoutMs)
  ) {
    throw new McpConfigError(
      `${where}: "timeoutMs" must be an integer from ${MCP_CONFIG_LIMITS.minTimeoutMs} to ${MCP_CONFIG_LIMITS.maxTimeoutMs}`,
    );
  }

  const permissions = raw['permissions'] === undefined ? undefined : parsePermissions(raw['permissions'], where);

  return {
    name,
    command,
    args: [...(args as string[])],
    env,
    tier: tier as McpServerTier,
    ...(risk === undefined ? {} : { risk: risk as RiskLevel }),
    ...(timeoutMs === undefined ? {} : { timeoutMs: timeoutMs as number }),
    ...(permissions === undefined ? {} : { permissions }),
  };
}

function parseEnv(raw: unknown, where: string): Readonly<Record<string, string>> {
  if (raw === undefined) return {};
  if (!isPlainObject(raw)) throw new McpConfigError(`${where}: "env" must be an object of string values`);
  const entries = Object.entries(raw);
  if (entries.length > MCP_CONFIG_LIMITS.envVars) {
    throw new McpConfigError(`${where}: "env" has ${entries.length} variables; the limit is ${MCP_CONFIG_LIMITS.envVars}`);
  }
  for (const [key, value] of entries) {
    // Names are shown (they are not secret); values never are.
    if (!ENV_NAME_PATTERN.test(key) || key === '__proto__') {
      throw new McpConfigError(`${where}: env name ${quoteShort(key)} must match ${ENV_NAME_PATTERN.source}`);
    }
    if (typeof value !== 'string') {
      throw new McpConfigError(`${where}: env.${key} must be a string, not ${typeName(value)}`);
    }
    if (value.length > MCP_CONFIG_LIMITS.envValueChars || value.includes('\0')) {
      throw new McpConfigError(
        `${where}: env.${key} must be at most ${MCP_CONFIG_LIMITS.envValueChars} characters without NUL (value not shown)`,
      );
    }
  }
  // fromEntries defines own data properties, so no key can reach a prototype.
  return Object.freeze(Object.fromEntries(entries as [string, string][]));
}

function parsePermissions(raw: unknown, where: string): readonly Permission[] {
  if (!Array.isArray(raw)) throw new McpConfigError(`${where}: "permissions" must be an array of {"type","scope"}`);
  if (raw.length > MCP_CONFIG_LIMITS.permissions) {
    throw new McpConfigError(`${where}: "permissions" has ${raw.length} items; the limit is ${MCP_CONFIG_LIMITS.permissions}`);
  }
  return raw.map((item, i) => {
    const at = `${where}: permissions[${i}]`;
    if (!isPlainObject(item)) throw new McpConfigError(`${at} must be an object {"type","scope"}`);
    rejectUnknownKeys(item, ['type', 'scope'], at);
    const type = item['type'];
    if (typeof type !== 'string' || !(PERMISSION_TYPES as readonly string[]).includes(type)) {
      throw new McpConfigError(
        `${at}: type ${quoteShort(type)} is not one of ${PERMISSION_TYPES.map((t) => `"${t}"`).join(', ')}`,
      );
    }
    const scope = item['scope'];
    if (typeof scope !== 'string' || scope === '' || scope.length > MCP_CONFIG_LIMITS.scopeChars) {
      throw new McpConfigError(`${at}: "scope" must be a non-empty string of at most ${MCP_CONFIG_LIMITS.scopeChars} characters`);
    }
    return { type: type as PermissionType, scope };
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    // V8 sometimes quotes the text around the fault, which may be an env value: keep only its
    // fixed wording ("Expected ',' or '}' after property value") and the position.
    const match = /^([^"]*) in JSON at position (\d+)/.exec(error instanceof Error ? error.message : '');
    if (!match) throw new McpConfigError('MCP servers file is not valid JSON');
    const position = Number(match[2]);
    const before = text.slice(0, position);
    const line = before.split('\n').length;
    const column = position - before.lastIndexOf('\n');
    throw new McpConfigError(`MCP servers file is not valid JSON: ${match[1]} (line ${line}, column ${column})`);
  }
}

function rejectUnknownKeys(obj: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      throw new McpConfigError(
        `${where}: unknown key ${quoteShort(key)}; allowed keys are ${allowed.map((k) => `"${k}"`).join(', ')}`,
      );
    }
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Quotes a non-secret value for a message, cut short and with control characters escaped. */
function quoteShort(value: unknown): string {
  if (typeof value !== 'string') return typeName(value);
  const cut = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return JSON.stringify(cut);
}
