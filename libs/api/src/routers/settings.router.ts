import type { Gateway } from '@toolgate/gateway';
import { mapGatewayErrors } from '../errors.js';
import { egressAllowInput, egressSetInput } from '../schemas.js';
import { authedProcedure, router } from '../trpc.js';

export function createSettingsRouter(gateway: Gateway) {
  return router({
    egress: router({
      /** The caller's tenant's effective egress settings (saved, else boot config). */
      get: authedProcedure.query(({ ctx }) => mapGatewayErrors(() => gateway.getEgress(ctx.principal))),
      /** Replaces the tenant's egress settings (operator role). */
      set: authedProcedure
        .input(egressSetInput)
        .mutation(({ ctx, input }) => mapGatewayErrors(() => gateway.setEgress(ctx.principal, input))),
      /** Enables egress and adds one host (operator role). */
      allow: authedProcedure
        .input(egressAllowInput)
        .mutation(({ ctx, input }) => mapGatewayErrors(() => gateway.allowEgressHost(ctx.principal, input.host))),
    }),
  });
}
