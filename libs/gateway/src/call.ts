import type {
  ApprovalRecord,
  BudgetPolicy,
  Denial,
  DenialCode,
  Gate,
  InvokeRequest,
  JsonObject,
  JsonValue,
  Principal,
  Repair,
  TenantPolicy,
  TenantWorkspaces,
  ToolDefinition,
  ToolExecutor,
} from '@toolgate/contracts';
import { argsDigest } from './audit/canonical-json.js';
import type { GatewayDeps, GatewayLimits } from './gateway-deps.js';
import type { ToolAccess } from './registry/tool-access.js';

/** Why a call is being taken through the gates: the same gates serve three operations. */
export type CallMode = 'invoke' | 'explain' | 'approval-request';

/** How the approval gate let a high-risk call through. */
export interface ApprovalGrant {
  readonly approvedBy: string;
  /** `approval:<id>` or `self-approval`, as the audit records it. */
  readonly reason: string;
  /** The stored approval to consume at the audit gate (absent for a self-approval). */
  readonly record?: ApprovalRecord;
}

/**
 * What the gates learn about one call as it goes through them. Each gate reads what earlier
 * gates set and adds its own finding; nothing is set before the gate that owns it has passed.
 */
export interface Call {
  readonly callId: string;
  readonly mode: CallMode;
  readonly principal: Principal;
  readonly request: InvokeRequest;
  /** Clock time the call arrived. */
  readonly startedAt: number;
  /** The gate running now (for attributing an unexpected failure). */
  gate: Gate;
  /** lookup: the tool. */
  tool?: ToolDefinition;
  /** allow: the tenant's policy. */
  tenant?: TenantPolicy;
  /** budget: the principal's policy, absent when unlimited. */
  budget?: BudgetPolicy;
  /** permissions: the standing grants that covered the manifest's permissions, as `type:scope` (for the audit). */
  standingGrantsUsed?: readonly string[];
  /** The arguments: as sent until the input gate replaces them with the repaired ones. */
  args: JsonObject;
  /** input: whether the arguments were accepted (so they and their digest may be reported). */
  inputAccepted: boolean;
  repaired: Repair[];
  /** approval: whether the tool's risk needs an approval. */
  approvalRequired: boolean;
  approval?: ApprovalGrant;
  /** egress: hosts the call may reach, or every public host. */
  egress?: { readonly hosts: ReadonlySet<string>; readonly allowAny: boolean };
}

/** Creates the state of a call about to enter the gates. */
export function newCall(callId: string, mode: CallMode, principal: Principal, request: InvokeRequest, startedAt: number): Call {
  return {
    callId,
    mode,
    principal,
    request,
    startedAt,
    gate: 'lookup',
    args: request.args,
    inputAccepted: false,
    repaired: [],
    approvalRequired: false,
  };
}

/** The tool found by the lookup gate; a gate after it that finds none is a bug in the pipeline. */
export function toolOf(call: Call): ToolDefinition {
  if (!call.tool) throw new Error(`the ${call.gate} gate ran before the lookup gate`);
  return call.tool;
}

/** Digest of the accepted (repaired) arguments, memoised: several audit events carry it. */
const digests = new WeakMap<Call, string>();
export function argsDigestOf(call: Call): string | undefined {
  if (!call.inputAccepted) return undefined;
  let digest = digests.get(call);
  if (digest === undefined) {
    digest = argsDigest(call.args);
    digests.set(call, digest);
  }
  return digest;
}

/** The gateway's dependencies with defaults applied, as every gate sees them. */
export interface Runtime {
  readonly deps: GatewayDeps;
  readonly limits: GatewayLimits;
  readonly access: ToolAccess;
  readonly executors: ReadonlyMap<string, ToolExecutor>;
  readonly newId: () => string;
  readonly workspaces: TenantWorkspaces;
}

/** One step of the pipeline. Returns a denial to stop the call, or nothing to let it on. */
export interface CallGate {
  readonly name: Gate;
  check(call: Call, runtime: Runtime): Denial | undefined | Promise<Denial | undefined>;
}

/** Builds a denial, leaving out the optional parts that are absent. */
export function deny(
  gate: Gate,
  code: DenialCode,
  message: string,
  hint?: string,
  data?: Readonly<Record<string, JsonValue>>,
): Denial {
  return { gate, code, message, ...(hint === undefined ? {} : { hint }), ...(data === undefined ? {} : { data }) };
}
