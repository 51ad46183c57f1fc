import type { Gateway } from '@toolgate/gateway';
import { mapGatewayErrors } from '../errors.js';
import { auditTailInput } from '../schemas.js';
import { scopedProcedure, router } from '../trpc.js';

export function createAuditRouter(gateway: Gateway) {
  return router({
    /** The newest records: operators see their tenant's, others their own. */
    tail: scopedProcedure('toolgate:admin').input(auditTailInput).query(({ ctx, input }) =>
      mapGatewayErrors(() =>
        gateway.auditTail(ctx.principal, { limit: input.limit, ...(input.afterSeq !== undefined ? { afterSeq: input.afterSeq } : {}) }),
      ),
    ),
    /** Verifies the whole chain (operator role). */
    verify: scopedProcedure('toolgate:admin').query(({ ctx }) => mapGatewayErrors(() => gateway.auditVerify(ctx.principal))),
  });
}
