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
  ToolPinStoreToken,
  type Clock,
} from '@toolgate/contracts';
import { Gateway, normalizeEgressHost } from '@toolgate/gateway';
import { createKnownFailureRecorder } from '@toolgate/tool-memory';
import { StartupError } from '../startup-error.js';
import { ConfigToken, GatewayToken, ToolRegistryToken } from '../tokens.js';
import type { Binder } from './binder.js';

const systemClock: Clock = { now: () => Date.now() };

/**
 * Reads the pins before the gateway is handed to anything that serves (ADR 0060): the gateway is
 * composed before the HTTP server is made, so no call is served with the pins unread. A store that
 * cannot be read fails the start; the message is the gateway's, which names no store detail.
 */
async function withPinsLoaded(gateway: Gateway): Promise<Gateway> {
  try {
    await gateway.loadPins();
  } catch (error) {
    throw new StartupError(`tool pins: ${(error as Error).message}`);
  }
  return gateway;
}

/** The clock and the gateway: every port it enforces its gates with, by name, and its pins loaded. */
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
      pins: ToolPinStoreToken,
    },
    ({ config, graph, registry, ...ports }) =>
      withPinsLoaded(new Gateway({
        ...ports,
        registry,
        bootEgress: { enabled: config.egress.enabled, allowAny: config.egress.allowAny, hosts: config.egress.allowedHosts.map(normalizeEgressHost) },
        // Failures such as "file not found" become known failures in the tenant's graph: of
        // first-party tools only, for principals who may write that memory themselves.
        listeners: [
          createKnownFailureRecorder({ graph, clock: ports.clock, directory: ports.directory, provenanceOf: (tool) => registry.get(tool)?.manifest.provenance }),
        ],
      })),
  );
}
