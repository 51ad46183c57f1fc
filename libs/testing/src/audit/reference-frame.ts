import { createHash, createHmac } from 'node:crypto';
import type { AuditRecord } from '@toolgate/contracts';

/**
 * An independent implementation of the frame digest in docs/audit-format.md, written from the
 * document and not from either sink, so the contract suite can hold both sinks to the one
 * specification: the frame JSON is the record's members in this order, absent ones omitted,
 * no whitespace; the digest is SHA-256 (or HMAC-SHA-256) of its UTF-8 bytes, in lowercase hex.
 */
export const SPEC_FIELD_ORDER = [
  'seq',
  'prev',
  'ts',
  'tenant',
  'principal',
  'tool',
  'version',
  'event',
  'gate',
  'code',
  'durationMs',
  'argsDigest',
  'approvedBy',
  'approvalReason',
  'repaired',
  'callId',
  'detail',
  'approvalId',
  'grants',
  'issuer',
] as const;

/** `prev` of seq 1. */
export const SPEC_GENESIS = '0'.repeat(64);

/** The frame JSON text a record was stored as, per the specification. */
export function specFrameJson(record: AuditRecord): string {
  const source = record as unknown as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  for (const field of SPEC_FIELD_ORDER) if (source[field] !== undefined) ordered[field] = source[field];
  return JSON.stringify(ordered);
}

/** The digest a record must carry, per the specification. */
export function specFrameDigest(record: AuditRecord, hmacKey?: string): string {
  const bytes = Buffer.from(specFrameJson(record), 'utf8');
  return hmacKey === undefined ? createHash('sha256').update(bytes).digest('hex') : createHmac('sha256', Buffer.from(hmacKey, 'utf8')).update(bytes).digest('hex');
}
