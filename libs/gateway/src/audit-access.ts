import type { AuditRecord, AuditReport, Principal } from '@toolgate/contracts';
import type { Runtime } from './call.js';
import { GatewayError } from './gateway-error.js';
import { fromStore, holds, requireRole } from './roles.js';

const MAX_TAIL = 1000;

/** Reading the audit trail: operators see their whole tenant, everyone else their own records. */
export class AuditAccess {
  constructor(private readonly runtime: Runtime) {}

  async tail(principal: Principal, query: { limit: number; afterSeq?: number }): Promise<readonly AuditRecord[]> {
    if (!Number.isInteger(query?.limit) || query.limit < 1 || query.limit > MAX_TAIL) {
      throw new GatewayError('INVALID', `limit must be an integer from 1 to ${MAX_TAIL}`);
    }
    if (query.afterSeq !== undefined && (!Number.isInteger(query.afterSeq) || query.afterSeq < 0)) {
      throw new GatewayError('INVALID', 'afterSeq must be a non-negative integer');
    }
    const operator = holds(principal, 'operator');
    const records = await fromStore('read the audit trail', () =>
      this.runtime.deps.audit.tail({
        tenant: principal.tenant,
        limit: query.limit,
        ...(query.afterSeq === undefined ? {} : { afterSeq: query.afterSeq }),
        ...(operator ? {} : { principal: principal.id }),
      }),
    );
    // Never another tenant's records, whatever the sink returns.
    return records.filter((r) => r.tenant === principal.tenant && (operator || r.principal === principal.id));
  }

  async verify(principal: Principal): Promise<AuditReport> {
    requireRole(principal, 'operator', 'verify the audit trail');
    return fromStore('verify the audit trail', () => this.runtime.deps.audit.verify());
  }
}
