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
  /**
   * Host paths the server may read, mounted read-only at the same place at tier `bwrap` (at
   * `unisolated` it sees the host anyway). Checked here for form only; what they may name is
   * checked when the server starts, against Toolgate's own files, after resolving symlinks.
   */
  readonly readOnlyPaths?: readonly string[];
}

/**
 * Where one header of a remote server comes from: a file the operator keeps (a secret such as a
 * bearer token), read at every connect so a rotated file takes effect on the next connection.
 * The file's content is never part of the config text, a log line, an error or the audit.
 */
export interface McpHeaderSource {
  /** Absolute path of the file; its content, without one trailing newline, is the value. */
  readonly file: string;
  /** Put before the file's content, e.g. `Bearer `; not secret, shown in messages. */
  readonly prefix?: string;
}

/**
 * One remote MCP server of `TOOLGATE_MCP_SERVERS_FILE`, reached over Streamable HTTP (an entry
 * with `url` instead of `command`). It runs on its own host, so it has no command, env or tier.
 */
export interface McpRemoteServerConfig {
  /** As {@link McpServerConfig.name}; shares the namespace with the stdio servers. */
  readonly name: string;
  /** The server's MCP endpoint: `http:`/`https:`, no userinfo, no fragment. */
  readonly url: string;
  /** Header name (lower-case) → where its value comes from. */
  readonly headers: Readonly<Record<string, McpHeaderSource>>;
  /** Risk of every tool of the server; absent means `high` (unverified code). */
  readonly risk?: RiskLevel;
  /** Deadline of one call; absent means 30 s. */
  readonly timeoutMs?: number;
  /** Permissions every tool of the server needs; absent means `network` on the URL's host. */
  readonly permissions?: readonly Permission[];
}

/** The whole of `TOOLGATE_MCP_SERVERS_FILE`: the servers Toolgate starts, and the remote ones it reaches. */
export interface McpServersConfig {
  /** Entries with `command`: started over stdio at their tier. */
  readonly servers: readonly McpServerConfig[];
  /** Entries with `url`: reached over Streamable HTTP. */
  readonly remotes: readonly McpRemoteServerConfig[];
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
  urlChars: 2048,
  headers: 16,
  headerPathChars: 4096,
  headerPrefixChars: 64,
  /** Read-only paths of one server (each one mount) and the length of one (Linux PATH_MAX). */
  readOnlyPaths: 64,
  readOnlyPathChars: 4095,
  /** Largest header file read; a bearer token or API key is far smaller. */
  headerFileBytes: 8 * 1024,
} as const;

export const MCP_SERVER_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const SERVER_KEYS = ['name', 'command', 'args', 'env', 'tier', 'risk', 'timeoutMs', 'permissions', 'readOnlyPaths'] as const;
const REMOTE_KEYS = ['name', 'url', 'headers', 'risk', 'timeoutMs', 'permissions'] as const;
/** Keys of a started server that mean nothing for one on another host; refused with that reason. */
const STDIO_ONLY_KEYS = new Set<string>(['command', 'args', 'env', 'tier', 'readOnlyPaths']);
/** Keys of a remote server that mean nothing for one Toolgate starts. */
const REMOTE_ONLY_KEYS = new Set<string>(['url', 'headers']);
const HEADER_NAME_PATTERN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/;
/**
 * Headers a remote server's entry may not set: framing and routing belong to the connection
 * (`host`, `content-length`, the hop-by-hop ones), and the transport's own (`mcp-*`, `accept`,
 * `content-type`, `last-event-id`) must say what the transport does.
 */
const REFUSED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'accept',
  'accept-encoding',
  'last-event-id',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'cookie',
]);

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
  const parsed = servers.map((raw, index) => parseEntry(raw, index));
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
  return {
    servers: parsed.filter((entry): entry is McpServerConfig => 'command' in entry),
    remotes: parsed.filter((entry): entry is McpRemoteServerConfig => 'url' in entry),
  };
}

/** One entry: a server Toolgate starts (`command`) or a remote one (`url`), never both. */
function parseEntry(raw: unknown, index: number): McpServerConfig | McpRemoteServerConfig {
  if (isPlainObject(raw) && Object.hasOwn(raw, 'url')) {
    if (Object.hasOwn(raw, 'command')) {
      const name = typeof raw['name'] === 'string' && MCP_SERVER_NAME_PATTERN.test(raw['name']) ? ` ("${raw['name']}")` : '';
      throw new McpConfigError(
        `MCP servers file: servers[${index}]${name}: has both "command" and "url": a server is either started by Toolgate ("command") or reached over HTTP ("url")`,
      );
    }
    return parseRemote(raw, index);
  }
  return parseServer(raw, index);
}

function parseServer(entry: unknown, index: number): McpServerConfig {
  const { name, where, raw } = parseName(entry, index);
  for (const key of Object.keys(raw)) {
    if (REMOTE_ONLY_KEYS.has(key)) throw new McpConfigError(`${where}: "${key}" is for a remote server (one with "url"), not one started with "command"`);
  }
  rejectUnknownKeys(raw, SERVER_KEYS, where);

  const command = raw['command'];
  if (command === undefined) {
    throw new McpConfigError(`${where}: "command" is required for a server Toolgate starts over stdio; a remote server over Streamable HTTP has "url" instead`);
  }
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

  const { risk, timeoutMs, permissions } = parseTrust(raw, where);
  const readOnlyPaths = raw['readOnlyPaths'] === undefined ? undefined : parseReadOnlyPaths(raw['readOnlyPaths'], where);

  return {
    name,
    command,
    args: [...(args as string[])],
    env,
    tier: tier as McpServerTier,
    ...(risk === undefined ? {} : { risk }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(permissions === undefined ? {} : { permissions }),
    ...(readOnlyPaths === undefined ? {} : { readOnlyPaths }),
  };
}

/** Places no server may be shown, whatever else is checked at start: the kernel's views of the host. */
const KERNEL_TREES = ['/proc', '/sys', '/dev'];

/**
 * `readOnlyPaths`: a list of absolute, normalised host paths (ADR 0066). Only their form is
 * checked here; that each exists and names none of Toolgate's own files is checked at start.
 */
function parseReadOnlyPaths(raw: unknown, where: string): readonly string[] {
  if (!Array.isArray(raw)) throw new McpConfigError(`${where}: "readOnlyPaths" must be an array of absolute paths`);
  if (raw.length > MCP_CONFIG_LIMITS.readOnlyPaths) {
    throw new McpConfigError(`${where}: "readOnlyPaths" has ${raw.length} items; the limit is ${MCP_CONFIG_LIMITS.readOnlyPaths}`);
  }
  const seen = new Set<string>();
  raw.forEach((path, i) => {
    const at = `${where}: readOnlyPaths[${i}]`;
    if (typeof path !== 'string') throw new McpConfigError(`${at} must be a string, not ${typeName(path)}`);
    if (path.length === 0 || path.length > MCP_CONFIG_LIMITS.readOnlyPathChars || [...path].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007f')) {
      throw new McpConfigError(`${at} must be a path of 1 to ${MCP_CONFIG_LIMITS.readOnlyPathChars} characters without control characters`);
    }
    if (!path.startsWith('/')) throw new McpConfigError(`${at} ${quoteShort(path)} must be an absolute path: the sandbox mounts it at the same place`);
    if (path === '/') throw new McpConfigError(`${at} is "/": that would show the server the whole host`);
    const segments = path.slice(1).split('/');
    if (segments.some((s) => s === '.' || s === '..')) {
      throw new McpConfigError(`${at} ${quoteShort(path)} must not hold "." or ".." segments: write the path it means`);
    }
    if (segments.some((s) => s === '')) throw new McpConfigError(`${at} ${quoteShort(path)} must not hold "//" or end with "/"`);
    const kernel = KERNEL_TREES.find((tree) => path === tree || path.startsWith(`${tree}/`));
    if (kernel !== undefined) {
      throw new McpConfigError(`${at} ${quoteShort(path)} is refused: ${kernel} is the kernel's view of the host (processes, devices, their environments); the sandbox has its own`);
    }
    if (seen.has(path)) throw new McpConfigError(`${at} ${quoteShort(path)} is named twice`);
    seen.add(path);
  });
  return Object.freeze([...seen]);
}

/** The entry's name, checked, and the prefix every message about the entry starts with. */
function parseName(raw: unknown, index: number): { name: string; where: string; raw: Record<string, unknown> } {
  const where = `MCP servers file: servers[${index}]`;
  if (!isPlainObject(raw)) throw new McpConfigError(`${where}: must be an object`);
  const name = raw['name'];
  if (typeof name !== 'string') throw new McpConfigError(`${where}: "name" is required and must be a string`);
  if (!MCP_SERVER_NAME_PATTERN.test(name)) {
    throw new McpConfigError(
      `${where}: name ${quoteShort(name)} must match ${MCP_SERVER_NAME_PATTERN.source} (lowercase, starts with a letter, at most 32 characters)`,
    );
  }
  const named = `${where} ("${name}")`;
  // `__` separates server and tool in `<server>__<tool>`: a server "gh__x" (or "gh-_x", "gh_")
  // could otherwise register the very names a server "gh" offers.
  if (/[-_]{2}|[-_]$/.test(name)) {
    throw new McpConfigError(
      `${named}: name must not hold two of '_' or '-' in a row or end with one: "__" separates the server from its tool names, so such a server could take another server's tool names`,
    );
  }
  return { name, where: named, raw };
}

/** The keys both kinds of entry share: what the operator trusts the server's tools with. */
function parseTrust(
  raw: Record<string, unknown>,
  where: string,
): { risk: RiskLevel | undefined; timeoutMs: number | undefined; permissions: readonly Permission[] | undefined } {
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
  return { risk: risk as RiskLevel | undefined, timeoutMs: timeoutMs as number | undefined, permissions };
}

/**
 * A remote server: `{"name":"docs","url":"https://docs.example.com/mcp","headers":{"Authorization":
 * {"file":"/run/secrets/docs-token","prefix":"Bearer "}}}`. Only the file names are in the text;
 * whether the files can be read is checked when the server is first connected.
 */
function parseRemote(raw: Record<string, unknown>, index: number): McpRemoteServerConfig {
  const { name, where } = parseName(raw, index);
  for (const key of Object.keys(raw)) {
    if (STDIO_ONLY_KEYS.has(key)) {
      throw new McpConfigError(
        `${where}: "${key}" is for a server Toolgate starts ("command"); a remote server ("url") runs on its own host, so Toolgate gives it no ${key === 'tier' || key === 'readOnlyPaths' ? 'sandbox' : key}`,
      );
    }
  }
  rejectUnknownKeys(raw, REMOTE_KEYS, where);
  const url = parseRemoteUrl(raw['url'], where);
  const headers = parseHeaders(raw['headers'], where);
  const { risk, timeoutMs, permissions } = parseTrust(raw, where);
  return {
    name,
    url,
    headers,
    ...(risk === undefined ? {} : { risk }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(permissions === undefined ? {} : { permissions }),
  };
}

/** The endpoint URL, normalised by the WHATWG parser (the one the HTTP stack dials with). */
function parseRemoteUrl(raw: unknown, where: string): string {
  if (typeof raw !== 'string' || raw === '') throw new McpConfigError(`${where}: "url" must be a non-empty string`);
  if (raw.length > MCP_CONFIG_LIMITS.urlChars) {
    throw new McpConfigError(`${where}: "url" has ${raw.length} characters; the limit is ${MCP_CONFIG_LIMITS.urlChars}`);
  }
  // Userinfo may be a password: the URL is not repeated in any message below.
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new McpConfigError(`${where}: "url" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new McpConfigError(`${where}: "url" must be http: or https:, not ${quoteShort(url.protocol)}`);
  }
  if (url.username !== '' || url.password !== '' || /^[a-z]+:\/\/[^/?#]*@/i.test(raw)) {
    throw new McpConfigError(`${where}: "url" must not carry credentials (user:password@host); put a credential in a file named in "headers"`);
  }
  if (raw.includes('#')) throw new McpConfigError(`${where}: "url" must not have a fragment (#…): it is never sent to the server`);
  if (url.hostname === '') throw new McpConfigError(`${where}: "url" has no host`);
  return url.href;
}

function parseHeaders(raw: unknown, where: string): Readonly<Record<string, McpHeaderSource>> {
  if (raw === undefined) return Object.freeze({});
  if (!isPlainObject(raw)) throw new McpConfigError(`${where}: "headers" must be an object of {"file": "/path", "prefix"?: "…"}`);
  const entries = Object.entries(raw);
  if (entries.length > MCP_CONFIG_LIMITS.headers) {
    throw new McpConfigError(`${where}: "headers" has ${entries.length} entries; the limit is ${MCP_CONFIG_LIMITS.headers}`);
  }
  const headers: [string, McpHeaderSource][] = [];
  for (const [key, value] of entries) {
    if (!HEADER_NAME_PATTERN.test(key)) throw new McpConfigError(`${where}: header name ${quoteShort(key)} is not a valid HTTP header name`);
    const lower = key.toLowerCase();
    if (REFUSED_HEADERS.has(lower)) throw new McpConfigError(`${where}: header "${key}" is set by the connection itself and cannot be configured`);
    if (lower.startsWith('mcp-')) throw new McpConfigError(`${where}: header "${key}" is an MCP transport header (Mcp-*), set by the transport itself`);
    if (headers.some(([seen]) => seen === lower)) throw new McpConfigError(`${where}: header "${key}" is named twice (header names ignore case)`);
    const at = `${where}: headers.${key}`;
    if (typeof value === 'string') {
      throw new McpConfigError(`${at} must be {"file": "/path"}: header values come from files, so a credential is never written in this file`);
    }
    if (!isPlainObject(value)) throw new McpConfigError(`${at} must be an object {"file": "/path", "prefix"?: "…"}`);
    rejectUnknownKeys(value, ['file', 'prefix'], at);
    const path = value['file'];
    if (typeof path !== 'string' || !path.startsWith('/') || path.length > MCP_CONFIG_LIMITS.headerPathChars || /[\0\r\n]/.test(path)) {
      throw new McpConfigError(`${at}: "file" must be an absolute path of at most ${MCP_CONFIG_LIMITS.headerPathChars} characters`);
    }
    const prefix = value['prefix'];
    if (prefix !== undefined && (typeof prefix !== 'string' || prefix.length > MCP_CONFIG_LIMITS.headerPrefixChars || !/^[\x20-\x7e]*$/.test(prefix))) {
      throw new McpConfigError(`${at}: "prefix" must be printable ASCII of at most ${MCP_CONFIG_LIMITS.headerPrefixChars} characters`);
    }
    headers.push([lower, Object.freeze({ file: path, ...(prefix === undefined || prefix === '' ? {} : { prefix }) })]);
  }
  return Object.freeze(Object.fromEntries(headers));
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
