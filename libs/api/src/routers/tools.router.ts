import type { InvokeRequest } from '@toolgate/contracts';
import type { Gateway } from '@toolgate/gateway';
import { mapGatewayErrors } from '../errors.js';
import { explainInput, invokeInput, toolsListInput, type InvokeInput } from '../schemas.js';
import { authedProcedure, router } from '../trpc.js';

/** Maps the wire shape (`approved`) onto the gateway's request (`selfApprove`). */
export function toInvokeRequest(input: InvokeInput): InvokeRequest {
  return {
    tool: input.tool,
    args: input.args as InvokeRequest['args'],
    ...(input.version !== undefined ? { version: input.version } : {}),
    ...(input.grants !== undefined ? { grants: input.grants } : {}),
    ...(input.approvalId !== undefined ? { approvalId: input.approvalId } : {}),
    ...(input.approved !== undefined ? { selfApprove: input.approved } : {}),
  };
}

export function createToolsRouter(gateway: Gateway) {
  return router({
    /**
     * The tools this caller may use (denied tools are not listed): their manifests, or, given a
     * `format`, definitions ready to paste into an LLM request with the aliases they use (ADR 0053).
     */
    list: authedProcedure
      .input(toolsListInput)
      .query(({ ctx, input }) => (input === undefined ? gateway.listTools(ctx.principal) : gateway.exportTools(ctx.principal, input.format))),
    /** Runs a tool through every gate. A denial is a normal result (`ok: false`), not an error. */
    invoke: authedProcedure
      .input(invokeInput)
      .mutation(({ ctx, input, signal }) =>
        mapGatewayErrors(() => gateway.invoke(ctx.principal, toInvokeRequest(input), signal ? { signal } : {})),
      ),
    /** Runs gates 1–8 without executing, charging, consuming or auditing anything. */
    explain: authedProcedure
      .input(explainInput)
      .query(({ ctx, input }) => mapGatewayErrors(() => gateway.explain(ctx.principal, toInvokeRequest(input)))),
  });
}
