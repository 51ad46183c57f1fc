import type { JsonObject, JsonValue } from './json.js';
import type { Grant, Principal } from './principal.js';

/** The gates of the pipeline, in the order they run. */
export type Gate =
  | 'authenticate'
  | 'lookup'
  | 'allow'
  | 'budget'
  | 'size'
  | 'permissions'
  | 'input'
  | 'approval'
  | 'egress'
  | 'audit'
  | 'execute'
  | 'output';
export const GATES: readonly Gate[] = [
  'authenticate',
  'lookup',
  'allow',
  'budget',
  'size',
  'permissions',
  'input',
  'approval',
  'egress',
  'audit',
  'execute',
  'output',
];

/** Why a call did not run (or did not complete). Stable: clients switch on these. */
export type DenialCode =
  | 'UNAUTHENTICATED'
  | 'TOOL_NOT_FOUND'
  | 'TOOL_DEFINITION_CHANGED'
  | 'SOURCE_UNAVAILABLE'
  | 'VERSION_MISMATCH'
  | 'TOOL_NOT_ALLOWED'
  | 'BUDGET_EXHAUSTED'
  | 'INPUT_TOO_LARGE'
  | 'PERMISSION_NOT_GRANTED'
  | 'INVALID_INPUT'
  | 'APPROVAL_REQUIRED'
  | 'APPROVAL_PAYLOAD_MISMATCH'
  | 'APPROVAL_EXPIRED'
  | 'APPROVAL_DENIED'
  | 'EGRESS_BLOCKED'
  | 'STATE_UNAVAILABLE'
  | 'AUDIT_UNAVAILABLE'
  | 'TIMEOUT'
  | 'EXECUTION_FAILED'
  | 'OUTPUT_TOO_LARGE'
  | 'INVALID_OUTPUT'
  | 'OUTCOME_UNAUDITED';

/** A refusal: a normal result, not an exception. */
export interface Denial {
  readonly gate: Gate;
  readonly code: DenialCode;
  /** One sentence for the caller (agent or human). Never a stack trace, host path or secret. */
  readonly message: string;
  /** What to do about it, e.g. roles that hold the tool, or the host to allow. */
  readonly hint?: string;
  /** Machine-readable specifics, e.g. `{ host }`, `{ payloadDigest }`, `{ parameters }`. */
  readonly data?: Readonly<Record<string, JsonValue>>;
}

/** One change the input repair made, reported in the result and the audit. */
export interface Repair {
  readonly kind: 'rename' | 'coerce' | 'clamp' | 'drop';
  /** JSON pointer of the argument, e.g. `/max_results`. */
  readonly path: string;
  /** Human-readable description, e.g. `renamed 'q' to 'query'`. */
  readonly detail: string;
}

/** A tool call as the API layer hands it to the gateway. */
export interface InvokeRequest {
  readonly tool: string;
  /** Pinned version; when absent the registered version is used. */
  readonly version?: string;
  readonly args: JsonObject;
  /**
   * Narrows this call to these permissions. Each must be covered by a standing grant of the
   * principal's roles or tenant; absent means every standing grant applies (ADR 0022).
   */
  readonly grants?: readonly Grant[];
  /** An approval granted for exactly this payload. */
  readonly approvalId?: string;
  /** The caller approves its own call; counts only if it holds the `approver` role. */
  readonly selfApprove?: boolean;
}

export type InvokeResult =
  | {
      readonly ok: true;
      readonly callId: string;
      readonly output: JsonValue;
      readonly repaired?: readonly Repair[];
    }
  | {
      readonly ok: false;
      readonly callId: string;
      readonly denial: Denial;
      readonly repaired?: readonly Repair[];
    };

/** What `explain` reports: the gates that would pass, and the first that would not. */
export interface ExplainResult {
  readonly wouldRun: boolean;
  readonly passed: readonly Gate[];
  readonly denial?: Denial;
  readonly repaired?: readonly Repair[];
  /** SHA-256 of the canonical payload an approval would have to be bound to. */
  readonly payloadDigest?: string;
  /** Whether this call would need a human approval. */
  readonly approvalRequired: boolean;
}

/**
 * What `whoami` reports: who the gateway takes the caller to be and what it may do now, so an
 * agent learns its limits before it meets them (issue 13).
 */
export interface WhoAmI {
  /** The principal as authenticated (with the issuer of its token, for an OIDC principal). */
  readonly principal: Principal;
  /** The standing grants its roles and tenant hold, as configured (ADR 0022), without repeats. */
  readonly grants: readonly Grant[];
  /** How many tools it may call now (the tenant's allowlist and its roles). */
  readonly visibleTools: number;
  /** Its call budget in the current window; absent when it has none (unlimited). */
  readonly budget?: {
    readonly calls: number;
    readonly windowSeconds: number;
    /** Calls left in the current window. */
    readonly remaining: number;
    /** ISO-8601 time the current window ends and the budget is whole again. */
    readonly resetsAt: string;
  };
}
