import type { AuditReport } from '@toolgate/contracts';

/**
 * The trail on disk is damaged: a bad digest, a broken chain, a gap or reorder, a damaged header,
 * a missing or unsafe segment. The message names the segment file and the record; it carries no
 * host path. The server answers every call with `AUDIT_UNAVAILABLE` until an operator acts.
 */
export class AuditCorruptError extends Error {
  override readonly name = 'AuditCorruptError';
  /** The verification report whose `fault` names the first bad segment/record. */
  readonly report: AuditReport;
  constructor(report: AuditReport) {
    super(`the audit trail is damaged: ${report.fault?.reason ?? 'unknown fault'}`);
    this.report = report;
  }
  /** File name of the damaged segment. */
  get segment(): string | undefined {
    return this.report.fault?.segment;
  }
  /** 1-based position of the bad frame in its segment (absent for header and file faults). */
  get record(): number | undefined {
    return this.report.fault?.record;
  }
}

/**
 * The sink cannot accept appends: the directory is held by another writer, the HMAC key does not
 * fit the trail, an earlier `fdatasync` failed, or the sink is closed. Fail closed.
 */
export class AuditUnavailableError extends Error {
  override readonly name = 'AuditUnavailableError';
}
