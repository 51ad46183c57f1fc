import type { JsonObject } from '@toolgate/contracts';
import type { Gateway } from '@toolgate/gateway';
import { mapGatewayErrors } from '../errors.js';
import { approvalDecideInput, approvalListInput, approvalRequestInput } from '../schemas.js';
import { authedProcedure, router } from '../trpc.js';

export function createApprovalsRouter(gateway: Gateway) {
  return router({
    /** Asks for a human approval of one exact payload; the result carries its digest and id. */
    request: authedProcedure.input(approvalRequestInput).mutation(({ ctx, input }) =>
      mapGatewayErrors(() =>
        gateway.requestApproval(ctx.principal, {
          tool: input.tool,
          args: input.args as JsonObject,
          ...(input.version !== undefined ? { version: input.version } : {}),
        }),
      ),
    ),
    /** Approvers and operators see their tenant's requests; everyone else only their own. */
    list: authedProcedure.input(approvalListInput).query(({ ctx, input }) =>
      mapGatewayErrors(() =>
        gateway.listApprovals(ctx.principal, { limit: input.limit, ...(input.status ? { status: input.status } : {}) }),
      ),
    ),
    /** Approves or denies a pending request (approver role, same tenant). */
    decide: authedProcedure.input(approvalDecideInput).mutation(({ ctx, input }) =>
      mapGatewayErrors(() =>
        gateway.decideApproval(ctx.principal, input.id, {
          approve: input.approve,
          ...(input.reason !== undefined ? { reason: input.reason } : {}),
        }),
      ),
    ),
  });
}
