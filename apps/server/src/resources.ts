import { chmod, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FileAuditSink, UnavailableAuditSink } from '@toolgate/adapter-audit-file';
import { PgAuditSink } from '@toolgate/adapter-audit-postgres';
import { BwrapExecutor } from '@toolgate/adapter-executor-bwrap';
import { ContainerExecutor } from '@toolgate/adapter-executor-container';
import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { SubprocessExecutor } from '@toolgate/adapter-executor-subprocess';
import { McpToolSource, parseMcpServersFile, type McpServerConfig } from '@toolgate/adapter-mcp-client';
import { GuardedHttpClient } from '@toolgate/adapter-net-guard';
import { createDuckDuckGoProvider } from '@toolgate/adapter-search-duckduckgo';
import { createSearxngProvider } from '@toolgate/adapter-search-searxng';
import { createTavilyProvider } from '@toolgate/adapter-search-tavily';
import { PgStores } from '@toolgate/adapter-store-postgres';
import { openSqliteDatabase, openSqliteStores, SqliteMessageBus } from '@toolgate/adapter-store-sqlite';
import { OxigraphKnowledgeGraph } from '@toolgate/adapter-graph-oxigraph';
import { checkToolDefinition } from '@toolgate/gateway';
import {
  AuditCorruptError,
  AuditUnavailableError,
  SearchConfigError,
  type ApprovalStore,
  type AuditSink,
  type BudgetStore,
  type HttpClient,
  type KnowledgeGraph,
  type MessageBus,
  type PrincipalDirectory,
  type SearchProvider,
  type ExecutorTier,
  type SettingsStore,
  type ToolDefinition,
  type ToolExecutor,
} from '@toolgate/contracts';
import type { ServerConfig, ShellTier } from './config.js';
import type { Log } from './logger.js';
import { demoDirectoryData, parsePrincipalsFile } from './principals/principals-file.js';
import { StaticPrincipalDirectory } from './principals/static-principal-directory.js';
import { checkFileOutsideWorkspace, checkWorkspaceApart, describeSetting, ensureWritableDirectory, PathSettingError, readOperatorFile, type PathSetting } from './startup-paths.js';

/** A startup fault the operator must fix; the message says what and where. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Every adapter the configuration selected, opened and ready to bind. */
export interface Resources {
  readonly directory: PrincipalDirectory;
  /** True when no principals file is configured and the dev principal `demo` is in use. */
  readonly demo: boolean;
  readonly approvals: ApprovalStore;
  readonly budgets: BudgetStore;
  readonly settings: SettingsStore;
  readonly audit: AuditSink;
  readonly http: HttpClient;
  readonly searchProvider: SearchProvider;
  readonly executors: readonly ToolExecutor[];
  /** The tier `bash` and `git` run at, or undefined when they are not offered (the default tier cannot run here). */
  readonly shellTier: ShellTier | undefined;
  readonly mcpSources: readonly McpToolSource[];
  readonly bus: MessageBus;
  readonly graph: KnowledgeGraph;
  /** Closes everything opened, in reverse order. */
  close(): Promise<void>;
}

/** Undo list: whatever was opened is closed again, also when a later step fails. */
class Closers {
  readonly #closers: (() => Promise<void>)[] = [];
  add(close: () => Promise<void>): void {
    this.#closers.push(close);
  }
  async closeAll(log: Log): Promise<void> {
    for (const close of this.#closers.splice(0).reverse()) {
      await close().catch((error: unknown) => log('warn', `closing failed: ${(error as Error).message}`));
    }
  }
}

async function loadDirectory(config: ServerConfig, log: Log): Promise<{ directory: PrincipalDirectory; demo: boolean }> {
  if (!config.principalsFile) {
    return { directory: new StaticPrincipalDirectory(demoDirectoryData()), demo: true };
  }
  const text = await asStartupError(readOperatorFile(pathSetting(config, 'principalsFile'), config.principalsFile));
  try {
    const { data, warnings } = parsePrincipalsFile(text);
    for (const warning of warnings) log('warn', `principals file: ${warning}`);
    return { directory: new StaticPrincipalDirectory(data), demo: false };
  } catch (error) {
    throw new StartupError(`${describeSetting(pathSetting(config, 'principalsFile'))}: ${(error as Error).message}`);
  }
}

/**
 * Opens the audit sink. A damaged trail does not stop the server: it keeps serving health and
 * says why, while every tool call is refused with AUDIT_UNAVAILABLE (fail closed).
 */
async function openAudit(config: ServerConfig, log: Log, closers: Closers): Promise<AuditSink> {
  const options = config.auditHmacKey ? { hmacKey: config.auditHmacKey } : {};
  try {
    const sink =
      config.audit === 'postgres'
        ? await PgAuditSink.open(config.databaseUrl!, options)
        : await FileAuditSink.open(join(config.dataDir, 'audit'), options);
    closers.add(() => sink.close());
    return sink;
  } catch (error) {
    const known = [AuditCorruptError, AuditUnavailableError];
    if (known.some((kind) => error instanceof kind)) {
      log('error', `audit trail unavailable, every tool call will be refused: ${(error as Error).message}`);
      return new UnavailableAuditSink((error as Error).message);
    }
    throw error;
  }
}

/** The configured search provider; one missing its setting falls back to DuckDuckGo (logged). */
export function selectSearchProvider(config: ServerConfig['webSearch'], log: Log): SearchProvider {
  try {
    if (config.provider === 'searxng') return createSearxngProvider(config.baseUrl ? { baseUrl: config.baseUrl } : {});
    if (config.provider === 'tavily') {
      return createTavilyProvider({ ...(config.apiKey ? { apiKey: config.apiKey } : {}), ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}) });
    }
  } catch (error) {
    // Only a missing setting falls back; a setting that is present but unusable is an error.
    if (!(error instanceof SearchConfigError) || !error.missing) {
      throw new StartupError(`TOOLGATE_WEB_SEARCH_PROVIDER=${config.provider}: ${(error as Error).message}`);
    }
    log('warn', `web_search: ${error.message}; falling back to duckduckgo`);
  }
  // The base URL is DuckDuckGo's only when it was chosen; a fallback must not take another provider's endpoint.
  return createDuckDuckGoProvider(config.provider === 'duckduckgo' && config.baseUrl ? { baseUrl: config.baseUrl } : {});
}

function openHttpClient(config: ServerConfig, closers: Closers): GuardedHttpClient {
  let http: GuardedHttpClient;
  try {
    http = new GuardedHttpClient({ allowedCidrs: config.egress.allowedCidrs });
  } catch (error) {
    throw new StartupError(`TOOLGATE_EGRESS_ALLOWED_CIDRS: ${(error as Error).message}`);
  }
  closers.add(() => http.close());
  return http;
}

async function readMcpServers(config: ServerConfig): Promise<readonly McpServerConfig[]> {
  if (!config.mcpServersFile) return [];
  const text = await asStartupError(readOperatorFile(pathSetting(config, 'mcpServersFile'), config.mcpServersFile));
  try {
    return parseMcpServersFile(text).servers;
  } catch (error) {
    // The parser's message already says "MCP servers file …"; add only which file.
    throw new StartupError(`${(error as Error).message} (${describeSetting(pathSetting(config, 'mcpServersFile'))})`);
  }
}

async function startMcpSources(
  config: ServerConfig,
  servers: readonly McpServerConfig[],
  tiers: ProcessTiers,
  log: Log,
  closers: Closers,
): Promise<McpToolSource[]> {
  const sources: McpToolSource[] = [];
  for (const server of servers) {
    const unusable = tiers.unusable.get(server.tier);
    if (unusable !== undefined) {
      // Not started rather than run at another tier: a weaker sandbox is never chosen for it.
      log('error', `MCP server '${server.name}' is not started: its tier '${server.tier}' cannot run here (${unusable}); its tools are not offered`);
      continue;
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
    closers.add(() => source.close());
    sources.push(source);
    log('info', `MCP server '${server.name}' started with ${source.tools().length} tool(s)`);
  }
  return sources;
}

/** Approvals, budgets and settings: one SQLite file by default, PostgreSQL to scale out. */
type StateStores = Pick<Resources, 'approvals' | 'budgets' | 'settings'> & {
  /** The SQLite connection when state is in SQLite, for adapters that add tables to it. */
  readonly sqlite?: SqliteDatabase;
  close(): Promise<void>;
};
type SqliteDatabase = ConstructorParameters<typeof SqliteMessageBus>[0];

async function openState(config: ServerConfig, log: Log): Promise<StateStores> {
  if (config.store === 'postgres') {
    try {
      return await PgStores.open(config.databaseUrl!, { onIdleError: (e) => log('warn', `postgres state pool: ${e.message}`) });
    } catch (error) {
      throw new StartupError(`TOOLGATE_STORE=postgres: ${(error as Error).message}`);
    }
  }
  try {
    const stores = openSqliteStores(join(config.dataDir, 'state.db'));
    return { ...stores, sqlite: stores.db };
  } catch (error) {
    throw new StartupError(`state database: ${(error as Error).message}`);
  }
}

/**
 * The message bus lives in the SQLite state file. With PostgreSQL state it still does, so agents
 * of one server process see each other's messages but not across processes (logged).
 */
function openBus(config: ServerConfig, state: StateStores, log: Log, closers: Closers): MessageBus {
  if (state.sqlite) return new SqliteMessageBus(state.sqlite);
  const db = openSqliteDatabase(join(config.dataDir, 'bus.db'));
  closers.add(async () => void db.close());
  log('warn', 'the message bus is kept per server process (bus.db in the data dir); PostgreSQL does not carry it yet');
  return new SqliteMessageBus(db);
}

async function openGraph(config: ServerConfig, log: Log, closers: Closers): Promise<KnowledgeGraph> {
  try {
    const graph = await OxigraphKnowledgeGraph.open({
      path: join(config.dataDir, 'knowledge-graph.nq'),
      onRecovered: ({ path, droppedBytes }) =>
        log('warn', `knowledge graph ${path}: dropped a final line torn by a crash (${droppedBytes} bytes, never acknowledged); everything before it is kept`),
    });
    closers.add(() => graph.close());
    return graph;
  } catch (error) {
    throw new StartupError(`knowledge graph: ${(error as Error).message}`);
  }
}

/** The executors this server runs, and why a process tier that was asked for cannot run here. */
interface ProcessTiers {
  readonly executors: ToolExecutor[];
  readonly unusable: ReadonlyMap<ExecutorTier, string>;
}

/** How each process tier is built; only tiers the shell tools or an MCP server ask for are. */
const PROCESS_TIERS: Readonly<Record<ShellTier, (config: ServerConfig) => ToolExecutor>> = {
  bwrap: (config) =>
    new BwrapExecutor({ bwrapPath: config.bwrapPath, maxProcesses: config.sandboxMaxProcesses, memoryBytes: config.sandboxMemoryMb * 1024 * 1024 }),
  container: (config) => new ContainerExecutor({ image: config.containerImage }),
  unisolated: () => new SubprocessExecutor(),
};

/**
 * Tier 0 always runs; a process tier only when the shell tools or an MCP server ask for it, and
 * only if its `check()` passes. An explicitly chosen shell tier that cannot run stops the server.
 * The default one (`bwrap`) that cannot run leaves bash and git out, said at start; an MCP
 * server whose tier cannot run is not started. Nothing ever falls back to a weaker tier.
 */
async function openExecutors(config: ServerConfig, mcpTiers: readonly ShellTier[], log: Log): Promise<ProcessTiers> {
  const executors: ToolExecutor[] = [new InProcessExecutor()];
  const unusable = new Map<ExecutorTier, string>();
  for (const tier of new Set<ShellTier>([config.shellTier, ...mcpTiers])) {
    const executor = PROCESS_TIERS[tier](config);
    try {
      await executor.check();
      executors.push(executor);
      // A sandbox without kernel caps still runs (hosts without cgroups), but never silently.
      const capWarning = executor instanceof BwrapExecutor ? await executor.resourceCapWarning() : undefined;
      if (capWarning) log('warn', `sandbox tier 'bwrap': ${capWarning}`);
    } catch (error) {
      const reason = (error as Error).message;
      if (tier === config.shellTier && config.shellTierExplicit) {
        throw new StartupError(`sandbox tier '${tier}' (TOOLGATE_SHELL_TIER=${config.shellTier}) cannot run here: ${reason}`);
      }
      unusable.set(tier, reason);
    }
  }
  const shellUnusable = unusable.get(config.shellTier);
  if (shellUnusable !== undefined) {
    log(
      'warn',
      `bash and git are NOT offered: the default sandbox tier 'bwrap' cannot run here (${shellUnusable}). ` +
        'To offer them, install bubblewrap and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces > 0), ' +
        'or set TOOLGATE_SHELL_TIER=unisolated to run them as host processes that can read and signal whatever the server can',
    );
  } else if (config.shellTier === 'unisolated') {
    log(
      'warn',
      "TOOLGATE_SHELL_TIER=unisolated: bash and git run UNISOLATED as host processes with the server's user; they can read its data dir, principals and keys and signal it. Every call still needs an approval",
    );
  }
  return { executors, unusable };
}

/**
 * The data dir holds every secret the server keeps (state, audit, keys); nobody but its user
 * needs to list it, so an existing one that is group- or world-accessible is tightened.
 */
async function prepareDataDir(config: ServerConfig, log: Log): Promise<void> {
  await asStartupError(ensureWritableDirectory(pathSetting(config, 'dataDir'), config.dataDir));
  const mode = (await stat(config.dataDir)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    await chmod(config.dataDir, 0o700);
    log('info', `data dir ${config.dataDir} was mode ${mode.toString(8)}; set to 700`);
  }
}

/** The workspace root, a writable directory apart from the data dir (sandboxed tools see it). */
async function prepareWorkspaceRoot(config: ServerConfig): Promise<void> {
  const workspace = pathSetting(config, 'workspaceRoot');
  await asStartupError(ensureWritableDirectory(workspace, config.workspaceRoot));
  await asStartupError(checkWorkspaceApart(workspace, config.workspaceRoot, pathSetting(config, 'dataDir'), config.dataDir));
  // Tokens and keys must not sit where every sandbox can read them.
  const operatorFiles: [PathSetting, string][] = [
    ...(config.principalsFile ? [[pathSetting(config, 'principalsFile'), config.principalsFile] as [PathSetting, string]] : []),
    ...(config.mcpServersFile ? [[pathSetting(config, 'mcpServersFile'), config.mcpServersFile] as [PathSetting, string]] : []),
    ...config.secretFiles.map((f): [PathSetting, string] => [{ variable: f.variable, asSet: f.asSet, defaultShown: 'none' }, f.path]),
  ];
  for (const [setting, path] of operatorFiles) await asStartupError(checkFileOutsideWorkspace(setting, path, workspace, config.workspaceRoot));
}

const PATH_VARIABLES = {
  dataDir: ['TOOLGATE_DATA_DIR', 'the default ./.toolgate'],
  workspaceRoot: ['TOOLGATE_WORKSPACE_ROOT', 'the default <data dir>/workspaces'],
  principalsFile: ['TOOLGATE_PRINCIPALS_FILE', 'none'],
  mcpServersFile: ['TOOLGATE_MCP_SERVERS_FILE', 'none'],
} as const;

/** A path setting for messages, as the operator wrote it. */
function pathSetting(config: ServerConfig, key: keyof typeof PATH_VARIABLES): PathSetting {
  const [variable, defaultShown] = PATH_VARIABLES[key];
  return { variable, asSet: config.pathsAsSet[key], defaultShown };
}

/** Path faults stop the start like any other: with the message alone, no stack. */
async function asStartupError<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof PathSettingError) throw new StartupError(error.message);
    throw error;
  }
}

/** Opens every adapter the configuration selects. On any failure, what was opened is closed. */
export async function openResources(config: ServerConfig, log: Log): Promise<Resources> {
  const closers = new Closers();
  try {
    await prepareDataDir(config, log);
    await prepareWorkspaceRoot(config);
    const { directory, demo } = await loadDirectory(config, log);

    const state = await openState(config, log);
    closers.add(() => state.close());

    const bus = openBus(config, state, log, closers);
    const graph = await openGraph(config, log, closers);
    const audit = await openAudit(config, log, closers);
    const http = openHttpClient(config, closers);
    const searchProvider = selectSearchProvider(config.webSearch, log);
    const mcpServers = await readMcpServers(config);
    const tiers = await openExecutors(config, mcpServers.map((m) => m.tier), log);
    const mcpSources = await startMcpSources(config, mcpServers, tiers, log, closers);

    return {
      directory,
      demo,
      approvals: state.approvals,
      budgets: state.budgets,
      settings: state.settings,
      audit,
      http,
      searchProvider,
      executors: tiers.executors,
      shellTier: tiers.unusable.has(config.shellTier) ? undefined : config.shellTier,
      mcpSources,
      bus,
      graph,
      close: () => closers.closeAll(log),
    };
  } catch (error) {
    await closers.closeAll(log);
    throw error;
  }
}
