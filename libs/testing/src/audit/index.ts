export { testAuditSink, type AuditSinkFixture } from './audit-sink.contract.js';
export { specFrameDigest, specFrameJson, SPEC_FIELD_ORDER, SPEC_GENESIS } from './reference-frame.js';
