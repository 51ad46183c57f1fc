import type { AuditReport } from '@toolgate/contracts';

/**
 * The trail is damaged: a bad digest, a broken chain, a gap or reorder, a damaged header or
 * segment (files), a head row that is not the last frame (PostgreSQL). The message names the
 * segment (or table) and the record; it carries no host path. The server answers every call with
 * `AUDIT_UNAVAILABLE` until an operator acts. Shared by both sinks so callers handle one class.
 */
export class AuditCorruptError extends Error {
  override readonly name = 'AuditCorruptError';
  /** The verification report whose `fault` names the first bad segment/record. */
  readonly report: AuditReport;
  constructor(report: AuditReport) {
    super(`the audit trail is damaged: ${report.fault?.reason ?? 'unknown fault'}`);
    this.report = report;
  }
  /** The damaged segment's file name (or the table, for PostgreSQL). */
  get segment(): string | undefined {
    return this.report.fault?.segment;
  }
  /** 1-based position of the bad frame in its segment (absent for header and file faults). */
  get record(): number | undefined {
    return this.report.fault?.record;
  }
}

/**
 * The sink cannot accept appends: the directory is held by another writer, the database cannot be
 * reached, the HMAC key does not fit the trail, an earlier `fdatasync` failed, or the sink is
 * closed. Fail closed.
 */
export class AuditUnavailableError extends Error {
  override readonly name = 'AuditUnavailableError';
}
