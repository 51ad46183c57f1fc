export { startPostgres, createTestDatabase, type PostgresServer, type TestDatabase } from './postgres/postgres-fixture.js';
export { testApprovalStore } from './stores/approval-store.contract.js';
export { testBudgetStore } from './stores/budget-store.contract.js';
export { testSettingsStore } from './stores/settings-store.contract.js';
export { testToolPinStore, testToolPinStoreAcrossInstances, type SharedPinDatabase } from './stores/tool-pin-store.contract.js';
export type { StoreFactory, StoreUnderTest } from './stores/store-under-test.js';
export { testMessageBus, type BusUnderTest } from './message-bus/message-bus.contract.js';
export { testExecutor, livingProcesses, livingGroupMembers, untilEmpty, sleepMarker, type ExecutorSuiteOptions } from './executor/executor.contract.js';
export { testSearchProvider, SearchErrorReasons, startReplayServer, LoopbackHttpClient, type SearchProviderSuiteOptions, type RecordedFailure, type ReplayServer, type ReplayedRequest, type RecordedResponse } from './search/index.js';
export { testAuditSink, specFrameDigest, specFrameJson, SPEC_FIELD_ORDER, SPEC_GENESIS, type AuditSinkFixture } from './audit/index.js';
export { testTenantWorkspaces, HOSTILE_TENANT_NAMES, type WorkspacesFactory } from './workspaces/index.js';
export {
  testToolContext,
  TEST_PRINCIPAL,
  ManualClock,
  LiteralDirectory,
  RecordingAuditSink,
  PassThroughRunner,
  type DirectoryConfig,
  type RoleConfig,
} from './fakes/index.js';
export { startHostListener, HOST_LISTENER_GREETING, type HostListener } from './network/host-listener.js';
export { filling, MAX_ARGS_ARRAY_BYTES } from './payloads/filling.js';
export { threadSchedule, timeLessCpuWait, timeOnThread, watchLoopHold, type LoopHoldWatch, type ThreadSchedule } from './timing/thread-schedule.js';
export { chromiumPath, chromiumForSuite, CHROMIUM_CANDIDATES } from './browser/chromium-path.js';
export { openObjects } from './schemas/open-objects.js';
export { testPrincipalDirectory, CONTRACT_POLICY, CONTRACT_PRINCIPALS, type DirectoryPolicy, type DirectoryUnderTest } from './principals/principal-directory.contract.js';
export { startOidcProvider, type TestOidcClient, type TestOidcProvider } from './identity/oidc-provider.js';
export { startHostileIssuer, type HostileIssuer, type JwksMode } from './identity/hostile-issuer.js';
