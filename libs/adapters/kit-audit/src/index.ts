export {
  GENESIS_DIGEST,
  AUDIT_EVENT_KINDS,
  FRAME_FIELDS,
  MAX_WRITTEN_FRAME_BYTES,
  FRAME_PREFIX_BYTES,
  MAX_FRAME_BYTES,
  MIN_HMAC_KEY_BYTES,
  InvalidAuditEventError,
  createFrameDigester,
  normalizeEvent,
  encodeFrameJson,
  prepareEvent,
  encodePrepared,
  encodeFrame,
  chainPrefix,
  decodeFrameJson,
  type DigestAlgorithm,
  type FrameDigester,
  type EncodedFrame,
} from './frame-codec.js';
export { redactSecrets, REDACTED } from './redact.js';
export { AuditCorruptError, AuditUnavailableError } from './errors.js';
export { GroupCommitQueue, type GroupCommitOptions, type PendingAppend } from './group-commit-queue.js';
