export { testToolContext, TEST_PRINCIPAL } from './tool-context.js';
export { ManualClock } from './manual-clock.js';
export { LiteralDirectory, type DirectoryConfig, type RoleConfig } from './literal-directory.js';
export { RecordingAuditSink } from './recording-audit-sink.js';
export { PassThroughRunner } from './pass-through-runner.js';
