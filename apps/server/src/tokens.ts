import type { Server } from 'node:http';
import type { AppRouter, HealthReport } from '@toolgate/api';
import type { McpServerConfig, McpSource } from '@toolgate/adapter-mcp-client';
import type { SqliteStores } from '@toolgate/adapter-store-sqlite';
import {
  token,
  type ApprovalStore,
  type BudgetStore,
  type ExecutorTier,
  type SettingsStore,
  type Token,
  type ToolExecutor,
  type ToolPinStore,
} from '@toolgate/contracts';
import type { Gateway, ToolRegistry } from '@toolgate/gateway';
import type { ServerConfig } from './config.js';
import type { HostGuard } from './http/host-guard.js';
import type { Log } from './logger.js';

/**
 * Tokens of things only the composition root knows about (the ports' tokens live in contracts).
 * A token two binding modules share lives here, so no module imports another.
 */
export const ConfigToken: Token<ServerConfig> = token('ServerConfig');
export const LogToken: Token<Log> = token('Log');

/** Approvals, budgets, settings and tool pins, opened together on one backend and closed together. */
export interface StateStores {
  readonly approvals: ApprovalStore;
  readonly budgets: BudgetStore;
  readonly settings: SettingsStore;
  /** Tool definitions pinned against change; global, not per tenant (ADR 0061). */
  readonly pins: ToolPinStore;
  /** The SQLite connection when state is in SQLite, for adapters that add tables to it (the message bus). */
  readonly sqlite?: SqliteStores['db'];
  close(): Promise<void>;
}
export const StateStoresToken: Token<StateStores> = token('StateStores');

/** True when no principals file is configured and the dev principal `demo` is in use. */
export const DemoPrincipalToken: Token<boolean> = token('DemoPrincipal');
/** Re-reads the principals file now (SIGHUP); resolves whether a new file serves. Never rejects. */
export const PrincipalsReloadToken: Token<(trigger: string) => Promise<boolean>> = token('PrincipalsReload');

/** The MCP servers the operator's servers file names (none without `TOOLGATE_MCP_SERVERS_FILE`). */
export const McpServersToken: Token<readonly McpServerConfig[]> = token('McpServers');

/** The executors this server runs, and why a process tier that was asked for cannot run here. */
export interface ProcessTiers {
  readonly executors: readonly ToolExecutor[];
  readonly unusable: ReadonlyMap<ExecutorTier, string>;
}
export const ProcessTiersToken: Token<ProcessTiers> = token('ProcessTiers');

/** The executor `bash` and `git` run at, or undefined when they are not offered (the default tier cannot run here). */
export const ShellExecutorToken: Token<ToolExecutor | undefined> = token('ShellExecutor');

/** The MCP servers that started (stdio) or are reached (remote), each a tool source. */
export const McpSourcesToken: Token<readonly McpSource[]> = token('McpSources');

export const ToolRegistryToken: Token<ToolRegistry> = token('ToolRegistry');
export const GatewayToken: Token<Gateway> = token('Gateway');
export const HealthToken: Token<() => HealthReport> = token('Health');
export const AppRouterToken: Token<AppRouter> = token('AppRouter');
export const HostGuardToken: Token<HostGuard> = token('HostGuard');
/** The HTTP server, not yet listening; the `listen` start step binds it. */
export const HttpServerToken: Token<Server> = token('HttpServer');
