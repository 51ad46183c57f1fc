import {
  ApprovalStoreToken,
  AuditSinkToken,
  BudgetStoreToken,
  ClockToken,
  HttpClientToken,
  KnowledgeGraphToken,
  PrincipalDirectoryToken,
  SettingsStoreToken,
  TenantWorkspacesToken,
  ToolExecutorsToken,
  type Clock,
} from '@toolgate/contracts';
import { Gateway, normalizeEgressHost } from '@toolgate/gateway';
import { createKnownFailureRecorder } from '@toolgate/tool-memory';
import { ConfigToken, GatewayToken, ToolRegistryToken } from '../tokens.js';
import type { Binder } from './binder.js';

const systemClock: Clock = { now: () => Date.now() };

/** The clock and the gateway: every port it enforces its gates with, by name. */
export function bindGateway(binder: Binder): void {
  binder.constant(ClockToken, systemClock);
  binder.resolved(
    GatewayToken,
    {
      config: ConfigToken,
      registry: ToolRegistryToken,
      directory: PrincipalDirectoryToken,
      approvals: ApprovalStoreToken,
      budgets: BudgetStoreToken,
      settings: SettingsStoreToken,
      audit: AuditSinkToken,
      executors: ToolExecutorsToken,
      clock: ClockToken,
      http: HttpClientToken,
      workspaces: TenantWorkspacesToken,
      graph: KnowledgeGraphToken,
    },
    ({ config, graph, registry, ...ports }) =>
      new Gateway({
        ...ports,
        registry,
        bootEgress: { enabled: config.egress.enabled, allowAny: config.egress.allowAny, hosts: config.egress.allowedHosts.map(normalizeEgressHost) },
        // Failures such as "file not found" become known failures in the tenant's graph: of
        // first-party tools only, for principals who may write that memory themselves.
        listeners: [
          createKnownFailureRecorder({ graph, clock: ports.clock, directory: ports.directory, provenanceOf: (tool) => registry.get(tool)?.manifest.provenance }),
        ],
      }),
  );
}
