import type { AuditRecord, AuditSink, Principal } from '@toolgate/contracts';
import { GatewayError } from '../denials/gateway-error.js';
import { fromStore, holds, requireRole } from './roles.js';

const MAX_TAIL = 1000;

/** What audit access uses: reading and verifying the trail, never appending to it. */
export interface AuditAccessNeeds {
  readonly audit: Pick<AuditSink, 'tail' | 'verify'>;
}

/** What `audit.verify` tells a tenant's operator: whether the shared trail verifies, nothing about other tenants. */
export interface TenantAuditReport {
  /** True when every record of the whole trail verifies (the chain is shared by all tenants). */
  readonly ok: boolean;
  /** The tenant this answer was given to. */
  readonly tenant: string;
  /** Present when `ok` is false: what to do, without where the fault is (that locates other tenants' records). */
  readonly fault?: { readonly reason: string };
}

const BROKEN_TRAIL =
  'the audit trail does not verify; the host operator can find the first bad record with `toolgate audit verify` on the data dir';

/** Reading the audit trail: operators see their whole tenant, everyone else their own records. */
export class AuditAccess {
  constructor(private readonly needs: AuditAccessNeeds) {}

  async tail(principal: Principal, query: { limit: number; afterSeq?: number }): Promise<readonly AuditRecord[]> {
    if (!Number.isInteger(query?.limit) || query.limit < 1 || query.limit > MAX_TAIL) {
      throw new GatewayError('INVALID', `limit must be an integer from 1 to ${MAX_TAIL}`);
    }
    if (query.afterSeq !== undefined && (!Number.isInteger(query.afterSeq) || query.afterSeq < 0)) {
      throw new GatewayError('INVALID', 'afterSeq must be a non-negative integer');
    }
    const operator = holds(principal, 'operator');
    const records = await fromStore('read the audit trail', () =>
      this.needs.audit.tail({
        tenant: principal.tenant,
        limit: query.limit,
        ...(query.afterSeq === undefined ? {} : { afterSeq: query.afterSeq }),
        ...(operator ? {} : { principal: principal.id }),
      }),
    );
    // Never another tenant's records, whatever the sink returns.
    return records.filter((r) => r.tenant === principal.tenant && (operator || r.principal === principal.id));
  }

  /**
   * Verifies the whole chain (one tenant's records cannot be verified apart from the others'),
   * but tells the tenant's operator only whether it holds: the record and segment counts, and a
   * fault's segment, seq and reason, describe every tenant's activity. The host operator reads
   * those with `toolgate audit verify` on the data dir.
   */
  async verify(principal: Principal): Promise<TenantAuditReport> {
    requireRole(principal, 'operator', 'verify the audit trail');
    const report = await fromStore('verify the audit trail', () => this.needs.audit.verify());
    if (report?.ok === true) return { ok: true, tenant: principal.tenant };
    return { ok: false, tenant: principal.tenant, fault: { reason: BROKEN_TRAIL } };
  }
}
