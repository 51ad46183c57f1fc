export { FileAuditSink, DEFAULT_SEGMENT_BYTES, type FileAuditSinkOptions } from './file-audit-sink.js';
export { MAX_TAIL_LIMIT } from './tail-query.js';
export { UnavailableAuditSink } from './unavailable-audit-sink.js';
export {
  verifyAuditDirectory,
  formatAuditReport,
  type VerifyAuditDirectoryOptions,
  type DirectoryAuditReport,
} from './verify-audit-directory.js';
export { nodeAuditFileIo, type AuditFileIo } from './audit-file-io.js';
