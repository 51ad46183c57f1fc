import type { AuditEvent, AuditQuery, AuditReceipt, AuditRecord, AuditReport, AuditSink } from '@toolgate/contracts';

/**
 * An audit sink that keeps its records in memory, for tests of what the gateway writes. It chains
 * nothing and digests nothing (`d<seq>`): the real sinks and their format run the shared
 * `testAuditSink` suite. `failWhen` makes an append reject, the way a full disk would.
 */
export class RecordingAuditSink implements AuditSink {
  /** Every record kept, oldest first. */
  readonly records: AuditRecord[] = [];
  /** Return true to make that append reject (nothing is kept). */
  failWhen: (event: AuditEvent) => boolean = () => false;
  /** Runs after a record is kept and before its append resolves: where a test makes something happen meanwhile. */
  afterAppend: (record: AuditRecord) => Promise<void> | void = () => undefined;

  /** The records as events (the same objects). */
  get events(): readonly AuditEvent[] {
    return this.records;
  }

  /** Keeps the event as the next record, unless `failWhen` refuses it. */
  async append(event: AuditEvent): Promise<AuditReceipt> {
    // A message like a real sink's, host path included, so tests see that it never reaches a caller.
    if (this.failWhen(event)) throw new Error('disk full at /var/lib/toolgate/audit');
    const seq = this.records.length + 1;
    const digest = `d${seq}`;
    const record = { ...event, seq, prev: seq === 1 ? 'genesis' : `d${seq - 1}`, digest };
    this.records.push(record);
    await this.afterAppend(record);
    return { seq, digest };
  }

  /** Always intact: there is no chain to break. */
  async verify(): Promise<AuditReport> {
    return { ok: true, records: this.records.length, segments: 1 };
  }

  /** The newest records matching `query`, oldest first, as the port says. */
  async tail(query: AuditQuery): Promise<readonly AuditRecord[]> {
    const matching = this.records.filter(
      (r) =>
        (query.tenant === undefined || r.tenant === query.tenant) &&
        (query.principal === undefined || r.principal === query.principal) &&
        (query.afterSeq === undefined || r.seq > query.afterSeq),
    );
    return query.limit > 0 ? matching.slice(-query.limit) : [];
  }

  /** Always healthy. */
  health(): { readonly ok: boolean; readonly reason?: string } {
    return { ok: true };
  }

  /** Nothing to release. */
  async close(): Promise<void> {}

  /** `event` or `event:code` of each record, oldest first: the shape tests compare. */
  kinds(): string[] {
    return this.records.map((r) => (r.code ? `${r.event}:${r.code}` : r.event));
  }
}
