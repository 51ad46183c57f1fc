import type { Gateway } from '@toolgate/gateway';
import { mapGatewayErrors } from '../errors.js';
import { egressAllowInput, egressSetInput } from '../schemas.js';
import { scopedProcedure, router } from '../trpc.js';

export function createSettingsRouter(gateway: Gateway) {
  return router({
    egress: router({
      /** The caller's tenant's effective egress settings (saved, else boot config). */
      get: scopedProcedure('toolgate:admin').query(({ ctx }) => mapGatewayErrors(() => gateway.getEgress(ctx.principal))),
      /** Replaces the tenant's egress settings (operator role). */
      set: scopedProcedure('toolgate:admin')
        .input(egressSetInput)
        .mutation(({ ctx, input }) => mapGatewayErrors(() => gateway.setEgress(ctx.principal, input))),
      /** Enables egress and adds one host (operator role). */
      allow: scopedProcedure('toolgate:admin')
        .input(egressAllowInput)
        .mutation(({ ctx, input }) => mapGatewayErrors(() => gateway.allowEgressHost(ctx.principal, input.host))),
    }),
  });
}
