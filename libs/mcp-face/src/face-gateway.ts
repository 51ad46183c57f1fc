import type { ApprovalRecord, Denial, ExplainResult, InvokeOptions, InvokeRequest, InvokeResult, JsonObject, Principal, ToolManifest } from '@toolgate/contracts';

/**
 * What the MCP face needs of the gateway: the operations `tools.list`, `tools.invoke` and
 * `tools.explain` use, and asking for and reading one's own approvals (ADR 0050). The face and
 * its approval flow take this one interface, so the two cannot drift apart.
 */
export interface McpFaceGateway {
  listTools(principal: Principal): readonly ToolManifest[];
  invoke(principal: Principal, request: InvokeRequest, options?: InvokeOptions): Promise<InvokeResult>;
  /** The gates' verdict and the payload digest of a call, without running or auditing it. */
  explain(principal: Principal, request: InvokeRequest): Promise<ExplainResult>;
  /** Creates a pending approval request for one exact (repaired) payload. */
  requestApproval(
    principal: Principal,
    request: { tool: string; version?: string; args: JsonObject },
  ): Promise<{ readonly ok: true; readonly approval: ApprovalRecord } | { readonly ok: false; readonly denial: Denial; readonly callId?: string }>;
  /**
   * One approval the principal may see (its own request), or undefined. The flow polls a held
   * call's approval with `{ namedFiles: false }`: it needs the status only, and the full view of a
   * pending `bash`/`git` approval reads and hashes the workspace files it names on every read.
   */
  getApproval(principal: Principal, id: string, options?: { readonly namedFiles?: boolean }): Promise<ApprovalRecord | undefined>;
}
