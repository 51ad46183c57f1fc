import { redactSecrets, type JsonObject } from '@toolgate/contracts';
import { TRPCError } from '@trpc/server';
import type { Gateway } from '@toolgate/gateway';
import { mapGatewayErrors } from '../errors.js';
import { approvalDecideInput, approvalGetInput, approvalListInput, approvalRequestInput } from '../schemas.js';
import { scopedProcedure, router } from '../trpc.js';

export function createApprovalsRouter(gateway: Gateway) {
  return router({
    /** Asks for a human approval of one exact payload; the result carries its digest and id. */
    request: scopedProcedure('tools:call').input(approvalRequestInput).mutation(({ ctx, input }) =>
      mapGatewayErrors(() =>
        gateway.requestApproval(ctx.principal, {
          tool: input.tool,
          args: input.args as JsonObject,
          ...(input.version !== undefined ? { version: input.version } : {}),
        }),
      ),
    ),
    /** Approvers and operators see their tenant's requests; everyone else only their own. */
    list: scopedProcedure('tools:read').input(approvalListInput).query(({ ctx, input }) =>
      mapGatewayErrors(() =>
        gateway.listApprovals(ctx.principal, { limit: input.limit, ...(input.status ? { status: input.status } : {}) }),
      ),
    ),
    /**
     * One approval by id, visible as in `list`. Another tenant's id, and another requester's to a
     * requester, is NOT_FOUND with the same message as an unknown id, so nothing tells them apart.
     */
    get: scopedProcedure('tools:read').input(approvalGetInput).query(async ({ ctx, input }) => {
      const view = await mapGatewayErrors(() => gateway.getApproval(ctx.principal, input.id));
      // Redacted before it is cut, as the desk quotes ids: a cut secret may no longer match a rule.
      if (!view) throw new TRPCError({ code: 'NOT_FOUND', message: `There is no approval '${redactSecrets(input.id).slice(0, 64)}' that you can see in your tenant.` });
      return view;
    }),
    /** Approves or denies a pending request (approver role, same tenant). */
    decide: scopedProcedure('approvals:decide').input(approvalDecideInput).mutation(({ ctx, input }) =>
      mapGatewayErrors(() =>
        gateway.decideApproval(ctx.principal, input.id, {
          approve: input.approve,
          ...(input.reason !== undefined ? { reason: input.reason } : {}),
        }),
      ),
    ),
  });
}
