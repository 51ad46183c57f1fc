/**
 * The audit kit: the frame codec and the group-commit queue both audit sinks (file, PostgreSQL)
 * share, so they write the same frame JSON and the same digest and one specification
 * (docs/audit-format.md) and one verifier cover both (ADR 0010, ADR 0011). A sink adds only where
 * frames are kept and how a batch is made durable. The errors a sink throws are the port's
 * (`@toolgate/contracts`), not the kit's. Only audit adapters import it.
 */
export {
  GENESIS_DIGEST,
  FRAME_PREFIX_BYTES,
  MAX_FRAME_BYTES,
  createFrameDigester,
  encodePrepared,
  chainPrefix,
  decodeFrameJson,
  type DigestAlgorithm,
  type FrameDigester,
  type EncodedFrame,
} from './frame-codec.js';
export { GroupCommitQueue, type GroupCommitOptions, type PendingAppend } from './group-commit-queue.js';
