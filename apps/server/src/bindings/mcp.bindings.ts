import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { McpToolSource, parseMcpServersFile, type McpServerConfig } from '@toolgate/adapter-mcp-client';
import type { ToolDefinition } from '@toolgate/contracts';
import { checkToolDefinition } from '@toolgate/gateway';
import type { ServerConfig } from '../config.js';
import type { Log } from '../logger.js';
import { StartupError } from '../startup-error.js';
import { asStartupError, describeSetting, pathSetting, readOperatorFile } from '../startup-paths.js';
import { ConfigToken, LogToken, McpServersToken, McpSourcesToken, ProcessTiersToken, type ProcessTiers } from '../tokens.js';
import type { Binder } from './binder.js';

async function readMcpServers(config: ServerConfig): Promise<readonly McpServerConfig[]> {
  if (!config.mcpServersFile) return [];
  const setting = pathSetting(config, 'mcpServersFile');
  const text = await asStartupError(readOperatorFile(setting, config.mcpServersFile));
  try {
    return parseMcpServersFile(text).servers;
  } catch (error) {
    // The parser's message already says "MCP servers file …"; add only which file.
    throw new StartupError(`${(error as Error).message} (${describeSetting(setting)})`);
  }
}

/** Starts one MCP server at its tier, or returns undefined when that tier cannot run here (logged). */
async function startMcpSource(config: ServerConfig, server: McpServerConfig, tiers: ProcessTiers, log: Log): Promise<McpToolSource | undefined> {
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
  // Each server gets its own directory; '_' cannot start a tenant name, so none collides.
  const workspaceRoot = join(config.workspaceRoot, '_mcp', server.name);
  await mkdir(workspaceRoot, { recursive: true, mode: 0o700 });
  // The registry's own check, run by discovery one tool per turn: the registry then finds every
  // schema compiled (cached by object) instead of compiling the catalogue in one turn.
  const trust = { trustLowRisk: server.risk === 'low' };
  const check = (definition: ToolDefinition) => checkToolDefinition(definition, trust);
  const source = await McpToolSource.start(server, runner, { workspaceRoot, check, log: (m) => log('info', `mcp ${server.name}: ${m}`) }).catch(
    (error: unknown) => {
      throw new StartupError((error as Error).message);
    },
  );
  log('info', `MCP server '${server.name}' started with ${source.tools().length} tool(s)`);
  return source;
}

/**
 * Starts the servers one after another. The sources are one value to the container, so one that
 * fails to start closes those started before it here: the container closes only values it got.
 */
async function startMcpSources(config: ServerConfig, servers: readonly McpServerConfig[], tiers: ProcessTiers, log: Log): Promise<McpToolSource[]> {
  const sources: McpToolSource[] = [];
  try {
    for (const server of servers) {
      const source = await startMcpSource(config, server, tiers, log);
      if (source) sources.push(source);
    }
    return sources;
  } catch (error) {
    await closeSources(sources).catch((closing: unknown) => log('warn', `closing failed: ${(closing as Error).message}`));
    throw error;
  }
}

/** Stops the servers newest first; one that fails to stop does not keep the others running (the first failure is rethrown). */
async function closeSources(sources: readonly McpToolSource[]): Promise<void> {
  const failures: unknown[] = [];
  for (const source of [...sources].reverse()) await source.close().catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}

/**
 * MCP servers as tool sources: the servers file, read at start (its tiers decide which executors
 * open), and each server started at its tier and stopped with the container.
 */
export function bindMcp(binder: Binder): void {
  binder.resolved(McpServersToken, { config: ConfigToken }, ({ config }) => readMcpServers(config));
  binder
    .resolved(McpSourcesToken, { config: ConfigToken, log: LogToken, servers: McpServersToken, tiers: ProcessTiersToken }, ({ config, log, servers, tiers }) =>
      startMcpSources(config, servers, tiers, log),
    )
    .onDeactivation((sources) => closeSources(sources));
}
