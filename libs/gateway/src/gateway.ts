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
  ToolPin,
  WhoAmI,
} from '@toolgate/contracts';
import { payloadDigestOf } from './audit/call-digests.js';
import { newCall, type Call } from './call.js';
import { deny } from './denials/deny.js';
import { fromStore } from './desks/roles.js';
import { ApprovalDesk, type ApprovalReadOptions, type ApprovalRequestResult, type ApprovalView } from './desks/approval-desk.js';
import { AuditAccess, type TenantAuditReport } from './desks/audit-access.js';
import { EgressSettingsDesk } from './desks/egress-settings-desk.js';
import { GatePipeline, type PipelineWiring } from './gate-pipeline.js';
import { standingGrantsOf } from './gates/permissions-gate.js';
import type { GatewayDeps } from './gateway-deps.js';
import { DEFAULT_LIMITS } from './limits.js';
import { ToolAccess } from './registry/tool-access.js';
import { exportTools, type ToolExport, type ToolExportFormat } from './registry/tool-exports.js';
import { ToolPinDesk, type HeldTool, type ToolSourceReport } from './desks/tool-pin-desk.js';
import { ToolPins } from './registry/tool-pins.js';

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
  readonly #pins: ToolPins;
  readonly #pinDesk: ToolPinDesk;

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
    this.#pins = new ToolPins(deps.pins, deps.clock, limits.pinWaitMs);
    deps.registry.usePins(this.#pins);
    this.#pinDesk = new ToolPinDesk({ registry: deps.registry, pins: this.#pins, audit: deps.audit, clock: deps.clock });
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

  /**
   * The start step that must run before the gateway serves calls (the composition root awaits it
   * before it listens): reads every pin from the pin store, then pins each tool its sources offer
   * for the first time and waits for those pins to be durable. Until it has resolved, no pinned
   * tool (no source's tool, no first-party tool with `integrity`) is listed or served. A tool whose
   * definition changed is held, not a failure. Rejects with `GatewayError` UNAVAILABLE when there
   * is no pin store or it cannot be read; calling it again re-reads the store.
   */
  async loadPins(): Promise<void> {
    await this.#pins.load();
    this.#wiring.registry.list();
    await this.#pins.settled();
  }

  /**
   * Waits (at most `pinWaitMs`) until the first-seen pins of the tools the sources offer now are
   * durable, so a listing made right after a server's tool list changed includes its new tools
   * rather than leaving them out until a later listing. Never rejects; a pin that is not durable
   * by then leaves its tool unlisted.
   */
  async settlePins(): Promise<void> {
    try {
      this.#wiring.registry.list();
      await this.#pins.settled();
    } catch {
      // A listing or a store that fails leaves the tools unlisted, which is the safe answer.
    }
  }

  /** Each tool source with its status and how many of its tools are held (for health and `tools.list` metadata). */
  toolSources(): readonly ToolSourceReport[] {
    return this.#wiring.registry.sources().map(({ name, status, held }) => ({
      name,
      state: status.state,
      transport: status.transport,
      attempt: status.attempt,
      accepted: status.accepted,
      rejected: status.rejected,
      since: status.since,
      held,
    }));
  }

  /** The tools held because their definition changed, with what changed (built-in `admin` role only; `GatewayError` FORBIDDEN otherwise). */
  async heldTools(principal: Principal): Promise<readonly HeldTool[]> {
    return this.#pinDesk.held(principal);
  }

  /**
   * Accepts a held tool's new definition (built-in `admin` role only): `digest` is the new digest
   * the admin reviewed (`HeldTool.newDigest`), so a definition that changed again since is refused.
   * Audited (`tool_accepted`) before it is stored; served at once after. Throws `GatewayError`:
   * FORBIDDEN, INVALID, NOT_FOUND (no held tool of that name), CONFLICT (not held, changed again,
   * or replaced meanwhile), UNAVAILABLE (the audit or the pin store failed; nothing changed).
   */
  acceptToolDefinition(principal: Principal, request: { tool: string; digest: string }): Promise<ToolPin> {
    return this.#pinDesk.accept(principal, request);
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

  /**
   * Who the caller is and what it may do now: its principal, standing grants, how many tools it
   * may call, and its budget with the calls left and when the window ends. Reads the budget store
   * (UNAVAILABLE when it cannot be read) but spends nothing and writes no audit record.
   */
  async whoami(principal: Principal): Promise<WhoAmI> {
    const { directory, budgets, clock } = this.#wiring;
    const seen = new Set<string>();
    const grants = standingGrantsOf(principal, directory.tenant(principal.tenant), directory).filter((g) => {
      const key = `${g.type}\u0000${g.scope}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    const base = { principal, grants, visibleTools: this.listTools(principal).length };
    const policy = directory.get(principal.tenant, principal.id)?.budget;
    if (!policy) return base;
    const now = clock.now();
    const remaining = await fromStore('read the budget', () => budgets.remaining(principal.tenant, principal.id, policy, now));
    // Fixed windows, as the budget store counts them (`floor(now / window)`).
    const windowMs = policy.windowSeconds * 1000;
    const resetsAt = new Date((Math.floor(now / windowMs) + 1) * windowMs).toISOString();
    return { ...base, budget: { calls: policy.calls, windowSeconds: policy.windowSeconds, remaining, resetsAt } };
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
