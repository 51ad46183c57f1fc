import { AuditUnavailableError, type AuditEvent, type AuditQuery, type AuditReceipt, type AuditRecord, type AuditReport, type AuditSink } from '@toolgate/contracts';

/**
 * The sink the server installs when the real one cannot open (damaged trail, locked directory,
 * wrong key, unreachable database): every append is refused, so every call is denied with
 * `AUDIT_UNAVAILABLE`, while `health` and `verify` say why.
 */
export class UnavailableAuditSink implements AuditSink {
  constructor(readonly reason: string) {}

  append(_event: AuditEvent): Promise<AuditReceipt> {
    return Promise.reject(new AuditUnavailableError(`the audit trail is unavailable: ${this.reason}`));
  }

  async verify(): Promise<AuditReport> {
    return { ok: false, records: 0, segments: 0, fault: { reason: this.reason } };
  }

  tail(_query: AuditQuery): Promise<readonly AuditRecord[]> {
    return Promise.reject(new AuditUnavailableError(`the audit trail is unavailable: ${this.reason}`));
  }

  health(): { readonly ok: boolean; readonly reason: string } {
    return { ok: false, reason: this.reason };
  }

  async close(): Promise<void> {}
}
