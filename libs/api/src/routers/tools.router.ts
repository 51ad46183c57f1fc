import type { InvokeRequest } from '@toolgate/contracts';
import type { Gateway } from '@toolgate/gateway';
import { mapGatewayErrors } from '../errors.js';
import { explainInput, invokeInput, toolAcceptInput, toolsListInput, type InvokeInput } from '../schemas.js';
import { sourceHealthOf, type SourceHealth } from '../source-health.js';
import { scopedProcedure, router } from '../trpc.js';

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

/** Every source's state and counts, as health shows them (no reason texts, paths or commands). */
export function sourcesOf(gateway: Gateway): SourceHealth[] {
  return gateway.toolSources().map(sourceHealthOf);
}

export function createToolsRouter(gateway: Gateway) {
  return router({
    /**
     * The tools this caller may use (denied, held and down tools are not listed): their manifests,
     * or, given a `format`, definitions ready to paste into an LLM request with the aliases they use
     * (ADR 0053) and `sources`, where each tool source is (ADR 0067). Without a format the answer
     * stays the bare array current clients read; `tools.sources` answers the same metadata.
     */
    list: scopedProcedure('tools:read')
      .input(toolsListInput)
      .query(({ ctx, input }) =>
        input === undefined ? gateway.listTools(ctx.principal) : { ...gateway.exportTools(ctx.principal, input.format), sources: sourcesOf(gateway) },
      ),
    /** Where each tool source is: state, transport, attempt, accepted, rejected and held counts, since when. */
    sources: scopedProcedure('tools:read').query(() => sourcesOf(gateway)),
    /**
     * The tools held because their definition changed since it was pinned, with what changed
     * (who may see them is the gateway's rule: ADR 0060).
     */
    held: scopedProcedure('tools:read').query(({ ctx }) => mapGatewayErrors(() => gateway.heldTools(ctx.principal))),
    /**
     * Accepts a held tool's changed definition, named by the digest the caller looked at: the tool
     * is served again at once, and the acceptance is audited. Unknown tool, a tool not held, a
     * digest that is no longer the tool's and a caller without the role are each their own error.
     */
    accept: scopedProcedure('toolgate:admin')
      .input(toolAcceptInput)
      .mutation(({ ctx, input }) => mapGatewayErrors(() => gateway.acceptToolDefinition(ctx.principal, { tool: input.tool, digest: input.digest }))),
    /** Runs a tool through every gate. A denial is a normal result (`ok: false`), not an error. */
    invoke: scopedProcedure('tools:call')
      .input(invokeInput)
      .mutation(({ ctx, input, signal }) =>
        mapGatewayErrors(() => gateway.invoke(ctx.principal, toInvokeRequest(input), signal ? { signal } : {})),
      ),
    /** Runs gates 1–8 without executing, charging, consuming or auditing anything. */
    explain: scopedProcedure('tools:read')
      .input(explainInput)
      .query(({ ctx, input }) => mapGatewayErrors(() => gateway.explain(ctx.principal, toInvokeRequest(input)))),
  });
}
