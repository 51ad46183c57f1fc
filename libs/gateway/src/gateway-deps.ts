import type {
  ApprovalStore,
  AuditSink,
  BudgetStore,
  Clock,
  EgressSettings,
  GatewayListener,
  HttpClient,
  PrincipalDirectory,
  SettingsStore,
  TenantWorkspaces,
  ToolExecutor,
  ToolPinStore,
} from '@toolgate/contracts';
import type { GatewayLimits } from './limits.js';
import type { ToolRegistry } from './registry/tool-registry.js';

/** Everything the gateway needs; the composition root builds it from configuration. */
export interface GatewayDeps {
  readonly registry: ToolRegistry;
  /**
   * Where the definitions of pinned tools (every source's, and first-party tools with `integrity`)
   * are kept (ADR 0060). Read by `Gateway.loadPins` before the first call; until then, and without
   * a store, no pinned tool is served.
   */
  readonly pins?: ToolPinStore;
  readonly directory: PrincipalDirectory;
  readonly approvals: ApprovalStore;
  readonly budgets: BudgetStore;
  readonly settings: SettingsStore;
  readonly audit: AuditSink;
  /** One executor per tier; a tool whose tier has none cannot run. */
  readonly executors: readonly ToolExecutor[];
  readonly clock: Clock;
  /** The guarded client, handed (scoped to the call's egress) to tools with a `network` permission. */
  readonly http?: HttpClient;
  /** Each tenant's workspace directory, prepared before a call runs (the core never makes directories itself). */
  readonly workspaces: TenantWorkspaces;
  /** Egress settings from the boot configuration; a tenant's saved settings replace them wholesale. */
  readonly bootEgress: EgressSettings;
  readonly limits?: Partial<GatewayLimits>;
  readonly listeners?: readonly GatewayListener[];
  /** Ids for calls and approvals; random UUIDs by default. */
  readonly newId?: () => string;
}
