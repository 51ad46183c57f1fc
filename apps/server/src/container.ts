import { Container } from 'inversify';
import { createAppRouter, type HealthReport } from '@toolgate/api';
import {
  ApprovalStoreToken,
  AuditSinkToken,
  BudgetStoreToken,
  ClockToken,
  HttpClientToken,
  PrincipalDirectoryToken,
  SearchProviderToken,
  SettingsStoreToken,
  ToolExecutorsToken,
  type ApprovalStore,
  type AuditSink,
  type BudgetStore,
  type Clock,
  type HttpClient,
  type PrincipalDirectory,
  type SearchProvider,
  type SettingsStore,
  type ToolExecutor,
} from '@toolgate/contracts';
import { Gateway, ToolRegistry } from '@toolgate/gateway';
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

  container
    .bind(ToolRegistryToken)
    .toResolvedValue(
      (cfg: ServerConfig, searchProvider: SearchProvider, logger: Log) => {
        const registry = new ToolRegistry(firstPartyTools({ config: cfg, searchProvider }));
        for (const source of resources.mcpSources) registry.addSource(source);
        for (const rejected of registry.rejected()) logger('warn', `tool '${rejected.tool}' of ${rejected.source} rejected: ${rejected.reason}`);
        return registry;
      },
      [ConfigToken, SearchProviderToken, LogToken],
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
          workspaceRoot: cfg.workspaceRoot,
          bootEgress: { enabled: cfg.egress.enabled, allowAny: cfg.egress.allowAny, hosts: [...cfg.egress.allowedHosts] },
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
