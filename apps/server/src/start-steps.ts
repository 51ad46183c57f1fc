import { chmod, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import {
  AuditSinkToken,
  HttpClientToken,
  KnowledgeGraphToken,
  MessageBusToken,
  PrincipalDirectoryToken,
  SearchProviderToken,
  SettingsStoreToken,
  TenantWorkspacesToken,
  ToolExecutorsToken,
  type Token,
} from '@toolgate/contracts';
import { seedTeamRoster } from '@toolgate/tool-memory';
import type { Binder } from './bindings/binder.js';
import { approvalPageBase } from './http/approval-page.js';
import { canonicalConfiguredHost, isWildcardAddress } from './http/host-names.js';
import { isLoopbackHost, type ServerConfig } from './config.js';
import type { Log } from './logger.js';
import { StartupError } from './startup-error.js';
import { asStartupError, checkFileOutsideWorkspace, checkWorkspaceApart, ensureWritableDirectory, pathSetting, type PathSetting } from './startup-paths.js';
import {
  DemoPrincipalToken,
  GatewayToken,
  HostGuardToken,
  HttpServerToken,
  McpServersToken,
  McpSourcesToken,
  ShellExecutorToken,
  ToolRegistryToken,
} from './tokens.js';

/** What the start steps share: the configuration, the log, the container, and what `listen` found. */
export interface StartContext {
  readonly config: ServerConfig;
  readonly log: Log;
  readonly root: Binder;
  /** Set by the `listen` step. */
  listening?: { readonly url: string; readonly port: number };
}

/** One named task of the start, run in list order; a failure stops the start and closes what was opened. */
export interface StartStep {
  readonly name: string;
  run(context: StartContext): Promise<void>;
}

/**
 * The ports opened at start, in this order, so a fault is reported before anything later opens
 * (and the messages of startup-faults.e2e.spec.ts stay what they are). The state opens with the
 * settings store; the executors after the MCP servers file, whose tiers they check.
 */
export const OPENING_ORDER: readonly Token<unknown>[] = [
  PrincipalDirectoryToken,
  SettingsStoreToken,
  MessageBusToken,
  KnowledgeGraphToken,
  AuditSinkToken,
  HttpClientToken,
  SearchProviderToken,
  McpServersToken,
  ToolExecutorsToken,
  McpSourcesToken,
  TenantWorkspacesToken,
];

/** The dev principal is for loopback only: refused before anything is created or opened. */
async function refuseDemoOffLoopback({ config }: StartContext): Promise<void> {
  if (!config.principalsFile && !isLoopbackHost(config.host)) {
    throw new StartupError(`refusing to listen on ${config.host} without TOOLGATE_PRINCIPALS_FILE: the dev principal 'demo' is for loopback only`);
  }
}

/**
 * The data dir holds every secret the server keeps (state, audit, keys); nobody but its user
 * needs to list it, so an existing one that is group- or world-accessible is tightened.
 */
async function prepareDataDir({ config, log }: StartContext): Promise<void> {
  await asStartupError(ensureWritableDirectory(pathSetting(config, 'dataDir'), config.dataDir));
  const mode = (await stat(config.dataDir)).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    await chmod(config.dataDir, 0o700);
    log('info', `data dir ${config.dataDir} was mode ${mode.toString(8)}; set to 700`);
  }
}

/** The workspace root, a writable directory apart from the data dir (sandboxed tools see it). */
async function prepareWorkspaceRoot({ config }: StartContext): Promise<void> {
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

/** Opens every adapter the configuration selects, one port after another (see {@link OPENING_ORDER}). */
async function openAdapters({ root }: StartContext): Promise<void> {
  for (const port of OPENING_ORDER) await root.get(port);
}

/** Registers the tools (logging any the registry refuses) and builds the gateway over them. */
async function composeGateway({ root }: StartContext): Promise<void> {
  await root.get(GatewayToken);
}

/** Seeds each tenant's team roster into the graph, so agents can discover who can do what. */
async function seedRoster({ root, log }: StartContext): Promise<void> {
  const registry = await root.get(ToolRegistryToken);
  const summary = await seedTeamRoster(
    await root.get(KnowledgeGraphToken),
    await root.get(PrincipalDirectoryToken),
    registry.list().map((t) => t.manifest.name),
  );
  log('info', `team roster seeded: ${summary.map((s) => `${s.tenant} (${s.members})`).join(', ') || 'no tenants'}`);
}

/** The configured host as the socket API takes it: an IPv6 address without its URL brackets. */
export function bindAddress(host: string): string {
  return /^\[[^\]]*\]$/.test(host) ? host.slice(1, -1) : host;
}

/** Binds the HTTP server to the configured address. */
async function listen(context: StartContext): Promise<void> {
  const { config, root, log } = context;
  const server = await root.get(HttpServerToken);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // `[::1]` is how a URL writes the address; the socket API takes it bare.
      server.listen(config.port, bindAddress(config.host), () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new StartupError(`port ${config.port} on ${config.host} is already in use (set TOOLGATE_PORT)`);
    }
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  context.listening = { url, port };
  log('info', `listening on ${url} (tRPC ${url}/trpc, REST ${url}/api/v1, health ${url}/healthz)`);
  // An any-address is no one's host: approval links are then built on loopback (approvalPageBase),
  // which an approver on another machine cannot open.
  const bound = canonicalConfiguredHost(config.host);
  if (config.publicUrl === undefined && 'name' in bound && isWildcardAddress(bound.name)) {
    log(
      'warn',
      `listening on the any-address ${config.host} without TOOLGATE_PUBLIC_URL: approval links (the approval page, MCP elicitation URLs) ` +
        `will name ${approvalPageBase({ bindHost: config.host, port })}, which only this host can open; set TOOLGATE_PUBLIC_URL to the URL remote approvers use`,
    );
  }
}

/** Without a principals file, says loudly who the dev principal is and which self-approval policy is in force. */
async function warnAboutDemo({ root, log }: StartContext): Promise<void> {
  if (!(await root.get(DemoPrincipalToken))) return;
  // Read from the directory, not assumed: the line must say which self-approval policy is in force.
  const directory = await root.get(PrincipalDirectoryToken);
  const found = await directory.authenticate('demo');
  const demo = found.outcome === 'principal' ? found.principal : undefined;
  const selfApproval = demo !== undefined && directory.tenant(demo.tenant)?.selfApproval === true;
  log(
    'warn',
    `no TOOLGATE_PRINCIPALS_FILE: dev principal 'demo' (token 'demo', roles ${demo?.roles.join(', ') ?? 'none'}), ` +
      `self-approval ${selfApproval ? 'ON' : 'OFF'} (loopback only, Host and Origin guarded; set TOOLGATE_PRINCIPALS_FILE for real principals)`,
  );
}

/** Which Host names and browser origins the HTTP face answers. */
async function logGuardSummary({ root, log }: StartContext): Promise<void> {
  log('info', (await root.get(HostGuardToken)).summary);
}

/** One line with where the data lives and what runs where. */
async function logSummary({ config, root, log }: StartContext): Promise<void> {
  const shell = await root.get(ShellExecutorToken);
  log('info', `data dir ${config.dataDir}; state ${config.store}; audit ${config.audit}; bash and git ${shell ? `at tier ${shell.tier}` : 'not offered'}`);
}

/** The start, in order. Each step is logged by name before it runs. */
export const START_STEPS: readonly StartStep[] = [
  { name: 'check the listen address', run: refuseDemoOffLoopback },
  { name: 'prepare the data dir', run: prepareDataDir },
  { name: 'prepare the workspace root', run: prepareWorkspaceRoot },
  { name: 'open the adapters', run: openAdapters },
  { name: 'compose the gateway', run: composeGateway },
  { name: 'seed the team roster', run: seedRoster },
  { name: 'listen', run: listen },
  { name: 'announce the dev principal', run: warnAboutDemo },
  { name: 'log the Host and Origin guard', run: logGuardSummary },
  { name: 'log the summary', run: logSummary },
];

/** Runs `steps` in order, logging each by name; the first failure stops the run. */
export async function runStartSteps(context: StartContext, steps: readonly StartStep[] = START_STEPS): Promise<void> {
  for (const [i, step] of steps.entries()) {
    context.log('info', `start ${i + 1}/${steps.length}: ${step.name}`);
    await step.run(context);
  }
}
