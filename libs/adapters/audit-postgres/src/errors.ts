import type { AuditReport } from '@toolgate/contracts';

/**
 * The chain in the database is damaged: a frame whose digest does not match, a gap, a broken
 * `prev`, index columns that disagree with their frame, a head that is not the last frame. The
 * message names the table and the seq. (Same name and shape as the file sink's error.)
 */
export class AuditCorruptError extends Error {
  override readonly name = 'AuditCorruptError';
  readonly report: AuditReport;
  constructor(report: AuditReport) {
    super(`the audit trail is damaged: ${report.fault?.reason ?? 'unknown fault'}`);
    this.report = report;
  }
}

/** The sink cannot accept appends (database unreachable, wrong HMAC key, closed). Fail closed. */
export class AuditUnavailableError extends Error {
  override readonly name = 'AuditUnavailableError';
}
