import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  McpRemoteToolSource,
  McpToolSource,
  parseMcpServersFile,
  type McpRemoteServerConfig,
  type McpServerConfig,
  type McpServersConfig,
  type McpSource,
} from '@toolgate/adapter-mcp-client';
import { canStream, HttpClientToken, token, type HttpClient, type Token, type ToolDefinition } from '@toolgate/contracts';
import { checkToolDefinition } from '@toolgate/gateway';
import type { ServerConfig } from '../config.js';
import type { Log } from '../logger.js';
import { StartupError } from '../startup-error.js';
import { asStartupError, describeSetting, pathSetting, readOperatorFile } from '../startup-paths.js';
import { ConfigToken, LogToken, McpServersToken, McpSourcesToken, ProcessTiersToken, type ProcessTiers } from '../tokens.js';
import type { Binder } from './binder.js';
import { checkReadOnlyPaths, guardedPaths, guardReadOnlyPaths } from './mcp-read-only-paths.js';

/** The whole servers file, read once: its stdio servers decide the executors, its remote ones are reached over HTTP. */
const McpServersFileToken: Token<McpServersConfig> = token('McpServersFile');

async function readMcpServers(config: ServerConfig): Promise<McpServersConfig> {
  if (!config.mcpServersFile) return { servers: [], remotes: [] };
  const setting = pathSetting(config, 'mcpServersFile');
  const text = await asStartupError(readOperatorFile(setting, config.mcpServersFile));
  try {
    return parseMcpServersFile(text);
  } catch (error) {
    // The parser's message already says "MCP servers file …"; add only which file.
    throw new StartupError(`${(error as Error).message} (${describeSetting(setting)})`);
  }
}

/** Starts one MCP server at its tier, or returns undefined when that tier cannot run here (logged). */
async function startMcpSource(
  config: ServerConfig,
  server: McpServerConfig,
  remotes: readonly McpRemoteServerConfig[],
  tiers: ProcessTiers,
  log: Log,
): Promise<McpToolSource | undefined> {
  const unusable = tiers.unusable.get(server.tier);
  if (unusable !== undefined) {
    // Not started rather than run at another tier: a weaker sandbox is never chosen for it.
    log('error', `MCP server '${server.name}' is not started: its tier '${server.tier}' cannot run here (${unusable}); its tools are not offered`);
    return undefined;
  }
  const runner = tiers.executors.find((e) => e.tier === server.tier)?.processes;
  if (!runner) throw new StartupError(`MCP server '${server.name}' wants tier '${server.tier}', which is not available here`);
  if (server.tier === 'unisolated') {
    log('warn', `MCP server '${server.name}' runs UNISOLATED (tier 'unisolated'): a host process as the server's user that can read its data dir, principals and keys and signal it`);
  }
  // What it may read besides /usr: never Toolgate's own files, checked on the real paths (ADR 0066),
  // and again before each restart's mounts, since the host may have changed since (ADR 0072).
  const guarded = guardedPaths(config, remotes);
  await checkReadOnlyPaths(server, guarded, log);
  const guardedRunner = guardReadOnlyPaths(runner, server.name, guarded);
  // Each server gets its own directory; '_' cannot start a tenant name, so none collides.
  const workspaceRoot = join(config.workspaceRoot, '_mcp', server.name);
  await mkdir(workspaceRoot, { recursive: true, mode: 0o700 });
  // The registry's own check, run by discovery one tool per turn: the registry then finds every
  // schema compiled (cached by object) instead of compiling the catalogue in one turn.
  const trust = { trustLowRisk: server.risk === 'low' };
  const check = (definition: ToolDefinition) => checkToolDefinition(definition, trust);
  // The server log has no debug level: a server's debug messages are logged as info.
  const mcpLog = (m: string, level?: 'debug' | 'info' | 'warn' | 'error') => log(level === 'warn' || level === 'error' ? level : 'info', `mcp ${server.name}: ${m}`);
  const source = await McpToolSource.start(server, guardedRunner, { workspaceRoot, check, log: mcpLog }).catch(
    (error: unknown) => {
      throw new StartupError((error as Error).message);
    },
  );
  // What discovery accepted is what the registry's own check accepted (it ran inside discovery).
  const { accepted, rejected } = source.status();
  log('info', `MCP server '${server.name}' started with ${accepted} tool(s) accepted and ${rejected} rejected${rejected > 0 ? ' (each reason is logged above)' : ''}`);
  return source;
}

/**
 * Reaches one remote server through the guarded client. Unreadable header files fail the start
 * (the operator's configuration); a server that cannot be reached does not: its source starts
 * `restarting`, offers nothing, and keeps trying (ADR 0064).
 */
async function startRemoteSource(server: McpRemoteServerConfig, http: HttpClient, log: Log): Promise<McpRemoteToolSource> {
  if (!canStream(http)) throw new StartupError(`MCP server '${server.name}' is remote, but the HTTP client cannot stream answers`);
  const url = new URL(server.url);
  if (url.protocol === 'http:' && Object.keys(server.headers).length > 0 && !isLoopbackName(url.hostname)) {
    log('warn', `MCP server '${server.name}' sends its headers (${Object.keys(server.headers).join(', ')}) over plain http to ${url.hostname}: anyone on the path can read them; use https`);
  }
  const trust = { trustLowRisk: server.risk === 'low' };
  const check = (definition: ToolDefinition) => checkToolDefinition(definition, trust);
  const mcpLog = (m: string, level?: 'debug' | 'info' | 'warn' | 'error') => log(level === 'warn' || level === 'error' ? level : 'info', `mcp ${server.name}: ${m}`);
  const source = await McpRemoteToolSource.start(server, { http, check, log: mcpLog }).catch((error: unknown) => {
    throw new StartupError(`MCP server '${server.name}' failed to start: ${(error as Error).message}`);
  });
  const { state, accepted, rejected } = source.status();
  if (state === 'up') {
    log('info', `MCP server '${server.name}' (remote, ${source.host}) started with ${accepted} tool(s) accepted and ${rejected} rejected${rejected > 0 ? ' (each reason is logged above)' : ''}`);
  } else {
    log('warn', `MCP server '${server.name}' (remote, ${source.host}) is not reachable yet; its tools are offered once it answers`);
  }
  return source;
}

function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Starts the servers one after another, the stdio ones then the remote ones. The sources are one
 * value to the container, so one that fails to start closes those started before it here: the
 * container closes only values it got.
 */
async function startMcpSources(config: ServerConfig, file: McpServersConfig, http: HttpClient, tiers: ProcessTiers, log: Log): Promise<McpSource[]> {
  const sources: McpSource[] = [];
  try {
    for (const server of file.servers) {
      const source = await startMcpSource(config, server, file.remotes, tiers, log);
      if (source) sources.push(source);
    }
    for (const remote of file.remotes) sources.push(await startRemoteSource(remote, http, log));
    return sources;
  } catch (error) {
    await closeSources(sources).catch((closing: unknown) => log('warn', `closing failed: ${(closing as Error).message}`));
    throw error;
  }
}

/** Stops the servers newest first; one that fails to stop does not keep the others running (the first failure is rethrown). */
async function closeSources(sources: readonly McpSource[]): Promise<void> {
  const failures: unknown[] = [];
  for (const source of [...sources].reverse()) await source.close().catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}

/**
 * MCP servers as tool sources: the servers file, read at start (its stdio servers' tiers decide
 * which executors open), each stdio server started at its tier and each remote one reached
 * through the guarded HTTP client, all stopped with the container.
 */
export function bindMcp(binder: Binder): void {
  binder.resolved(McpServersFileToken, { config: ConfigToken }, ({ config }) => readMcpServers(config));
  binder.resolved(McpServersToken, { file: McpServersFileToken }, ({ file }) => file.servers);
  binder
    .resolved(
      McpSourcesToken,
      { config: ConfigToken, log: LogToken, file: McpServersFileToken, http: HttpClientToken, tiers: ProcessTiersToken },
      ({ config, log, file, http, tiers }) => startMcpSources(config, file, http, tiers, log),
    )
    .onDeactivation((sources) => closeSources(sources));
}
