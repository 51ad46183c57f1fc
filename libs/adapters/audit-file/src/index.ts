export { FileAuditSink, DEFAULT_SEGMENT_BYTES, MAX_TAIL_LIMIT, type FileAuditSinkOptions } from './file-audit-sink.js';
export { UnavailableAuditSink } from './unavailable-audit-sink.js';
export {
  verifyAuditDirectory,
  formatAuditReport,
  type VerifyAuditDirectoryOptions,
  type DirectoryAuditReport,
} from './verify-audit-directory.js';
export { nodeAuditFileIo, type AuditFileIo } from './audit-file-io.js';
