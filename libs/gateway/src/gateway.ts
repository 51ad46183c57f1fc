import { randomUUID } from 'node:crypto';
import type {
  ApprovalRecord,
  ApprovalStatus,
  AuditRecord,
  EgressSettings,
  ExplainResult,
  Gate,
  InvokeOptions,
  InvokeRequest,
  InvokeResult,
  JsonObject,
  Principal,
  ToolManifest,
} from '@toolgate/contracts';
import { payloadDigestOf } from './audit/call-digests.js';
import { newCall, type Call } from './call.js';
import { deny } from './denials/deny.js';
import { ApprovalDesk, type ApprovalReadOptions, type ApprovalRequestResult, type ApprovalView } from './desks/approval-desk.js';
import { AuditAccess, type TenantAuditReport } from './desks/audit-access.js';
import { EgressSettingsDesk } from './desks/egress-settings-desk.js';
import { GatePipeline, type PipelineWiring } from './gate-pipeline.js';
import type { GatewayDeps } from './gateway-deps.js';
import { DEFAULT_LIMITS } from './limits.js';
import { ToolAccess } from './registry/tool-access.js';
import { exportTools, type ToolExport, type ToolExportFormat } from './registry/tool-exports.js';

/**
 * The one chokepoint every tool call passes: twelve gates in a fixed order, failing closed
 * (DESIGN §3, ADR 0005). `invoke` never throws; a refusal is a normal result. The other methods
 * are the approval, settings and audit operations the API exposes, each checking the caller's
 * built-in roles and throwing `GatewayError` when refused.
 */
export class Gateway {
  readonly #wiring: PipelineWiring;
  readonly #newId: () => string;
  readonly #pipeline: GatePipeline;
  readonly #approvals: ApprovalDesk;
  readonly #egress: EgressSettingsDesk;
  readonly #audit: AuditAccess;

  constructor(deps: GatewayDeps) {
    const limits = { ...DEFAULT_LIMITS, ...deps.limits };
    for (const [key, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value <= 0) throw new RangeError(`gateway limit ${key} must be a positive integer`);
    }
    const wiring: PipelineWiring = {
      registry: deps.registry,
      directory: deps.directory,
      access: new ToolAccess(deps.directory),
      approvals: deps.approvals,
      budgets: deps.budgets,
      settings: deps.settings,
      audit: deps.audit,
      clock: deps.clock,
      executors: new Map(deps.executors.map((e) => [e.tier, e])),
      workspaces: deps.workspaces,
      ...(deps.http === undefined ? {} : { http: deps.http }),
      bootEgress: deps.bootEgress,
      limits,
      listeners: deps.listeners ?? [],
    };
    this.#wiring = wiring;
    this.#newId = deps.newId ?? randomUUID;
    const pipeline = new GatePipeline(wiring);
    this.#pipeline = pipeline;
    this.#approvals = new ApprovalDesk({
      approvals: deps.approvals,
      audit: deps.audit,
      clock: deps.clock,
      directory: deps.directory,
      workspaces: deps.workspaces,
      newId: this.#newId,
      approvalTtlMs: limits.approvalTtlMs,
      screen: (call) => pipeline.screenApprovalRequest(call),
    });
    this.#egress = new EgressSettingsDesk({ settings: deps.settings, bootEgress: deps.bootEgress });
    this.#audit = new AuditAccess({ audit: deps.audit });
  }

  /** Runs a tool call through every gate. Never throws: an unexpected fault is a denial too. */
  async invoke(principal: Principal, request: InvokeRequest, options: InvokeOptions = {}): Promise<InvokeResult> {
    let call: Call;
    try {
      call = this.#newCall('invoke', principal, request);
    } catch {
      // Without a clock or an id there is nothing to audit against; refuse plainly.
      return { ok: false, callId: 'unassigned', denial: unexpectedAt('lookup') };
    }
    try {
      return await this.#pipeline.invoke(call, options);
    } catch {
      return this.#pipeline.refuse(call, unexpected(call));
    }
  }

  /**
   * What `invoke` would decide at gates 1–8 (and whether an executor exists for the tool's tier),
   * without executing, charging, consuming or auditing anything.
   */
  async explain(principal: Principal, request: InvokeRequest): Promise<ExplainResult> {
    const passed: Gate[] = ['authenticate'];
    let call: Call | undefined;
    try {
      call = this.#newCall('explain', principal, request);
      const denial = (await this.#pipeline.preflight(call, passed)) ?? this.#pipeline.notRunnable(call);
      return {
        wouldRun: denial === undefined,
        passed,
        ...(denial ? { denial } : {}),
        ...(call.inputAccepted && call.repaired.length > 0 ? { repaired: call.repaired } : {}),
        ...(call.inputAccepted ? { payloadDigest: payloadDigestOf(call) } : {}),
        approvalRequired: call.approvalRequired,
      };
    } catch {
      return { wouldRun: false, passed, denial: call ? unexpected(call) : unexpectedAt('lookup'), approvalRequired: call?.approvalRequired ?? false };
    }
  }

  /** The manifests of the tools this principal may call (tenant allowlist ∩ roles). */
  listTools(principal: Principal): ToolManifest[] {
    const tools = this.#wiring.registry.list();
    const mine = new Set(this.#wiring.access.toolsOf(principal, tools));
    return tools.filter((t) => mine.has(t.manifest.name)).map((t) => t.manifest);
  }

  /**
   * The tools this principal may call, as `listTools` shows them, in `format` (ADR 0053): the
   * manifests, or definitions ready for an LLM request, with the alias of every name the vendor's
   * rule refuses. An alias is never a registered tool's name, visible or not: that name would win.
   */
  exportTools<F extends ToolExportFormat>(principal: Principal, format: F): ToolExport<F> {
    const registered = new Set(this.#wiring.registry.list().map((t) => t.manifest.name));
    return exportTools(this.listTools(principal), format, (name) => registered.has(name));
  }

  /** Asks for an approval of one exact (repaired) payload; returns the pending record with its digest. */
  requestApproval(principal: Principal, request: { tool: string; version?: string; args: JsonObject }): Promise<ApprovalRequestResult> {
    return this.#approvals.request(principal, request).catch(() => ({ ok: false as const, denial: unexpectedAt('approval') }));
  }

  /** Approvers and operators see their tenant's approvals; everyone else only their own requests. */
  listApprovals(principal: Principal, filter?: { status?: ApprovalStatus; limit?: number }): Promise<readonly ApprovalView[]> {
    return this.#approvals.list(principal, filter);
  }

  /**
   * One approval by id, visible as in `listApprovals`: approvers and operators see their tenant's,
   * everyone else only their own. Another tenant's id (or another requester's, to a requester) is
   * `undefined`, the same as an unknown id. Throws `GatewayError` (`INVALID`, `UNAVAILABLE`).
   * `{ namedFiles: false }` reads the status without reading the workspace files it names.
   */
  getApproval(principal: Principal, id: string, options?: ApprovalReadOptions): Promise<ApprovalView | undefined> {
    return this.#approvals.get(principal, id, options);
  }

  /** Approves or denies a pending request (approver role, same tenant). Throws `GatewayError`. */
  decideApproval(principal: Principal, id: string, decision: { approve: boolean; reason?: string }): Promise<ApprovalRecord> {
    return this.#approvals.decide(principal, id, decision);
  }

  /** The tenant's effective egress settings: saved ones, else the boot configuration. */
  getEgress(principal: Principal): Promise<EgressSettings> {
    return this.#egress.get(principal);
  }

  /** Replaces the tenant's egress settings (operator only); hosts are validated and normalised. */
  setEgress(principal: Principal, settings: EgressSettings): Promise<EgressSettings> {
    return this.#egress.set(principal, settings);
  }

  /** Enables egress and adds one host for the tenant (operator only). */
  allowEgressHost(principal: Principal, host: string): Promise<EgressSettings> {
    return this.#egress.allowHost(principal, host);
  }

  /** The newest audit records: the whole tenant for operators, one's own for everyone else. */
  auditTail(principal: Principal, query: { limit: number; afterSeq?: number }): Promise<readonly AuditRecord[]> {
    return this.#audit.tail(principal, query);
  }

  /** Verifies the whole audit trail (operator only), answering only whether it holds. */
  auditVerify(principal: Principal): Promise<TenantAuditReport> {
    return this.#audit.verify(principal);
  }

  #newCall(mode: Call['mode'], principal: Principal, request: InvokeRequest): Call {
    return newCall(this.#newId(), mode, principal, request, this.#wiring.clock.now());
  }
}

/** A fault the gates did not anticipate is still a refusal, attributed to where it happened. */
function unexpected(call: Call) {
  return call.gate === 'execute' || call.gate === 'output' ? unexpectedExecution() : unexpectedAt(call.gate);
}

function unexpectedAt(gate: Gate) {
  return deny(gate, 'STATE_UNAVAILABLE', `The gateway failed unexpectedly at the ${gate} gate, so the call was refused.`, 'Try again later; if it persists, an operator should check the gateway log.');
}

function unexpectedExecution() {
  return deny('execute', 'EXECUTION_FAILED', 'The gateway failed unexpectedly while running the tool.', 'An operator can find the call by its callId.');
}
