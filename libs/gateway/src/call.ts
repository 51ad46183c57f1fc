import type { ApprovalRecord, BudgetPolicy, Denial, Gate, InvokeRequest, JsonObject, JsonValue, Principal, Repair, TenantPolicy, ToolDefinition } from '@toolgate/contracts';

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
  /** execute: what the call relayed between its tool and its caller (for the audit). */
  relay?: { summary(): string | undefined };
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

/** One step of the pipeline. Returns a denial to stop the call, or nothing to let it on. */
export interface CallGate {
  readonly name: Gate;
  /**
   * Decides the call from what earlier gates set and the dependencies the gate's factory was
   * given: a gate never sees the gateway's other dependencies.
   */
  check(call: Call): Denial | undefined | Promise<Denial | undefined>;
}

/** A step's answer after the tool ran: its output, or why the call failed or was stopped. */
export type Execution =
  | { readonly ok: true; readonly output: JsonValue }
  | { readonly ok: false; readonly denial: Denial; readonly failed: boolean; readonly cancelled?: boolean };

/** What every answer of an accepted call carries beside its result: the repairs, if any. */
export function repairedOf(call: Call): { readonly repaired?: Repair[] } {
  return call.inputAccepted && call.repaired.length > 0 ? { repaired: call.repaired } : {};
}
