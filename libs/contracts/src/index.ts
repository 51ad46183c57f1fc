export { token, type Token } from './token.js';
export type { JsonValue, JsonObject, JsonSchema } from './json.js';
export {
  BuiltInRoles,
  type Principal,
  type PrincipalRecord,
  type BudgetPolicy,
  type TenantPolicy,
  type Grant,
} from './principal.js';
export { PrincipalDirectoryToken, type Authentication, type PrincipalDirectory } from './principal-directory.port.js';
export { TOOLGATE_SCOPES, allowsScope, type ToolgateScope } from './scopes.js';
export {
  RISK_LEVELS,
  PERMISSION_TYPES,
  type RiskLevel,
  type PermissionType,
  type Permission,
  type Provenance,
  type EgressSpec,
  type ToolManifest,
} from './tool-manifest.js';
export {
  EXECUTOR_TIERS,
  EXECUTOR_TIER_TRAITS,
  PROCESS_TIERS,
  LONG_LIVED_TIERS,
  isProcessTier,
  isLongLivedTier,
  type ExecutorTier,
  type ExecutorTierTraits,
  type ProcessTier,
  type LongLivedTier,
} from './executor-tiers.js';
export type { ToolContext, ToolHandler, ToolDefinition, ProgressUpdate, CallerRequests, CallerRequestKind, InvokeOptions } from './tool-handler.js';
export type { ToolSource, ToolSourceState, ToolSourceStatus } from './tool-source.port.js';
export { ToolPinStoreToken, type ToolPinStore, type ToolPin } from './tool-pin-store.port.js';
export { ToolExecutorsToken, type ToolExecutor, type ExecutorIsolation, type ExecutionOutcome } from './tool-executor.port.js';
export type { ProcessRunner, ProcessSpec, ProcessLimits, ProcessResult, PreparedCommand } from './process-runner.port.js';
export {
  HttpClientToken,
  canStream,
  type HttpClient,
  type HttpRequest,
  type HttpResponse,
  type HttpStreamRequest,
  type HttpStreamResponse,
  type StreamingHttpClient,
} from './http-client.port.js';
export { ToolError, PathEscapeError, EgressDeniedError, ToolAbortedError, ToolNotReachedError } from './errors.js';
export {
  GATES,
  type Gate,
  type DenialCode,
  type Denial,
  type Repair,
  type InvokeRequest,
  type InvokeResult,
  type ExplainResult,
  type WhoAmI,
} from './invocation.js';
export {
  AuditSinkToken,
  AuditCorruptError,
  AuditUnavailableError,
  InvalidAuditEventError,
  type AuditSink,
  type AuditEvent,
  type AuditEventKind,
  type AuditRecord,
  type AuditReceipt,
  type AuditReport,
  type AuditQuery,
} from './audit-sink.port.js';
export {
  ApprovalStoreToken,
  type ApprovalStore,
  type ApprovalRecord,
  type ApprovalStatus,
  type NewApproval,
  type ApprovalDecision,
  type ApprovalProblem,
  type ApprovalOutcome,
} from './approval-store.port.js';
export { BudgetStoreToken, type BudgetStore } from './budget-store.port.js';
export { SettingsStoreToken, type SettingsStore, type EgressSettings } from './settings-store.port.js';
export { ClockToken, type Clock } from './clock.port.js';
export { TenantWorkspacesToken, type TenantWorkspaces } from './tenant-workspaces.port.js';
export {
  SearchProviderToken,
  SearchConfigError,
  SEARCH_FAILURE_REASONS,
  type SearchFailureReason,
  type SearchProvider,
  type SearchResult,
  type SearchOptions,
} from './search-provider.port.js';
export { MessageBusToken, type MessageBus, type BusMessage } from './message-bus.port.js';
export {
  KnowledgeGraphToken,
  type KnowledgeGraph,
  type Triple,
  type GraphTerm,
  type QueryLimits,
  type QueryAnswer,
} from './knowledge-graph.port.js';
export type { GatewayListener, ToolFailure } from './gateway-listener.js';
export { redactSecrets, REDACTED } from './redaction.js';
export { flattenText, hasUnshowable } from './visible-text.js';
export { ecmaToLinearPattern, PatternRefused, MAX_PATTERN_SOURCE } from './ecma-pattern.js';
export {
  refuseQuadraticKeywords,
  refuseExpensiveExpansion,
  expandedChecks,
  schemaCost,
  type SchemaCost,
  SchemaCostRefused,
  MAX_DEEP_UNIQUE_ITEMS,
  MAX_SCHEMA_CHECKS,
  MAX_SCHEMA_BRANCHES,
  MAX_CHECKS_ON_ONE_VALUE,
  BRANCH_ERROR_CHECKS,
  MAX_COSTED_VALUES,
  MAX_COSTED_DEPTH,
  enumMatcher,
} from './schema-cost.js';
