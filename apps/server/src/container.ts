import { Container } from 'inversify';
import { createAppRouter, type HealthReport } from '@toolgate/api';
import {
  ApprovalStoreToken,
  AuditSinkToken,
  BudgetStoreToken,
  ClockToken,
  HttpClientToken,
  KnowledgeGraphToken,
  MessageBusToken,
  PrincipalDirectoryToken,
  SearchProviderToken,
  SettingsStoreToken,
  ToolExecutorsToken,
  flattenText,
  type ApprovalStore,
  type AuditSink,
  type BudgetStore,
  type Clock,
  type HttpClient,
  type KnowledgeGraph,
  type MessageBus,
  type PrincipalDirectory,
  type SearchProvider,
  type SettingsStore,
  type ToolExecutor,
  type Token,
} from '@toolgate/contracts';
import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import { Gateway, normalizeEgressHost, ToolRegistry } from '@toolgate/gateway';
import { createKnownFailureRecorder, seedTeamRoster } from '@toolgate/tool-memory';
import type { ServerConfig } from './config.js';
import type { Log } from './logger.js';
import type { Resources } from './resources.js';
import { AppRouterToken, ConfigToken, GatewayToken, HealthToken, LogToken, ToolRegistryToken } from './tokens.js';
import { firstPartyTools } from './tools.js';

export const VERSION = '0.1.0';

const systemClock: Clock = { now: () => Date.now() };

/**
 * The composition root: the only place that knows which adapter implements which port. Opened
 * resources are bound as constants; everything composed from them is a resolved value whose
 * dependencies are named by token, so the graph is visible here and nowhere else.
 */
export function buildContainer(config: ServerConfig, log: Log, resources: Resources): Container {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind(ConfigToken).toConstantValue(config);
  container.bind(LogToken).toConstantValue(log);
  container.bind(ClockToken).toConstantValue(systemClock);
  container.bind(PrincipalDirectoryToken).toConstantValue(resources.directory);
  container.bind(ApprovalStoreToken).toConstantValue(resources.approvals);
  container.bind(BudgetStoreToken).toConstantValue(resources.budgets);
  container.bind(SettingsStoreToken).toConstantValue(resources.settings);
  container.bind(AuditSinkToken).toConstantValue(resources.audit);
  container.bind(HttpClientToken).toConstantValue(resources.http);
  container.bind(SearchProviderToken).toConstantValue(resources.searchProvider);
  container.bind(ToolExecutorsToken).toConstantValue(resources.executors);
  container.bind(MessageBusToken).toConstantValue(resources.bus);
  container.bind(KnowledgeGraphToken).toConstantValue(resources.graph);

  container
    .bind(ToolRegistryToken)
    .toResolvedValue(
      (
        cfg: ServerConfig,
        searchProvider: SearchProvider,
        logger: Log,
        bus: MessageBus,
        graph: KnowledgeGraph,
        clock: Clock,
        directory: PrincipalDirectory,
      ) => {
        const registry = new ToolRegistry(firstPartyTools({ config: cfg, searchProvider, bus, graph, clock, directory, shellTier: resources.shellTier }));
        // The servers file is the operator's: a `risk: "low"` there is the explicit trust the registry asks for.
        for (const source of resources.mcpSources) registry.addSource(source, { trustLowRisk: source.config.risk === 'low' });
        // The reason quotes the server's schema (ajv's text too): one line, so it cannot forge log lines.
        for (const rejected of registry.rejected()) logger('warn', flattenText(`tool '${rejected.tool}' of ${rejected.source} rejected: ${rejected.reason}`, 2000));
        return registry;
      },
      [ConfigToken, SearchProviderToken, LogToken, MessageBusToken, KnowledgeGraphToken, ClockToken, PrincipalDirectoryToken],
    );

  container
    .bind(GatewayToken)
    .toResolvedValue(
      (
        cfg: ServerConfig,
        registry: ToolRegistry,
        directory: PrincipalDirectory,
        approvals: ApprovalStore,
        budgets: BudgetStore,
        settings: SettingsStore,
        audit: AuditSink,
        executors: readonly ToolExecutor[],
        clock: Clock,
        http: HttpClient,
        graph: KnowledgeGraph,
      ) =>
        new Gateway({
          registry,
          directory,
          approvals,
          budgets,
          settings,
          audit,
          executors,
          clock,
          http,
          workspaces: new FsTenantWorkspaces(cfg.workspaceRoot),
          bootEgress: { enabled: cfg.egress.enabled, allowAny: cfg.egress.allowAny, hosts: cfg.egress.allowedHosts.map(normalizeEgressHost) },
          // Failures such as "file not found" become known failures in the tenant's graph: of
          // first-party tools only, for principals who may write that memory themselves.
          listeners: [createKnownFailureRecorder({ graph, clock, directory, provenanceOf: (tool) => registry.get(tool)?.manifest.provenance })],
        }),
      [
        ConfigToken,
        ToolRegistryToken,
        PrincipalDirectoryToken,
        ApprovalStoreToken,
        BudgetStoreToken,
        SettingsStoreToken,
        AuditSinkToken,
        ToolExecutorsToken,
        ClockToken,
        HttpClientToken,
        KnowledgeGraphToken,
      ],
    );

  container.bind(HealthToken).toResolvedValue(
    (audit: AuditSink) => (): HealthReport => {
      const reasons: string[] = [];
      const auditHealth = audit.health();
      if (!auditHealth.ok) reasons.push(`audit: ${auditHealth.reason ?? 'unavailable'}`);
      return { ok: reasons.length === 0, version: VERSION, reasons };
    },
    [AuditSinkToken],
  );

  container
    .bind(AppRouterToken)
    .toResolvedValue((gateway: Gateway, health: () => HealthReport) => createAppRouter({ gateway, health }), [GatewayToken, HealthToken]);

  return container;
}

/** Typed lookup: the container's own `get` cannot infer a branded token's type. */
export function resolve<T>(container: Container, key: Token<T>): T {
  return container.get<T>(key);
}

/** Seeds each tenant's team roster into the graph, so agents can discover who can do what. */
export async function seedRoster(container: Container, log: Log): Promise<void> {
  const registry = resolve(container, ToolRegistryToken);
  const summary = await seedTeamRoster(
    resolve(container, KnowledgeGraphToken),
    resolve(container, PrincipalDirectoryToken),
    registry.list().map((t) => t.manifest.name),
  );
  log('info', `team roster seeded: ${summary.map((s) => `${s.tenant} (${s.members})`).join(', ') || 'no tenants'}`);
}
