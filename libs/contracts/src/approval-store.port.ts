import type { JsonObject } from './json.js';
import { token, type Token } from './token.js';

/**
 * Where an approval stands: `pending` until decided, then `approved` or `denied`; an approved one
 * becomes `consumed` when the call it approved runs (once only).
 */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'consumed';

/** A request for a human to approve one exact payload. */
export interface ApprovalRecord {
  /** Unique within the tenant; the id an approver decides and a caller presents. */
  readonly id: string;
  /** The tenant the approval belongs to; no other tenant sees or uses it. */
  readonly tenant: string;
  /** The principal whose call needs the approval. */
  readonly requester: string;
  /** The tool the payload calls. */
  readonly tool: string;
  /** The tool version the payload pins. */
  readonly version: string;
  /** The (repaired) arguments, shown to the approver. */
  readonly args: JsonObject;
  /** `sha256:<hex>` of canonical JSON of {tenant, principal, tool, version, args}. */
  readonly payloadDigest: string;
  /** Where the approval stands now. */
  readonly status: ApprovalStatus;
  /** Epoch ms when it was requested. */
  readonly createdAt: number;
  /** Epoch ms after which the approval cannot be decided or used. */
  readonly expiresAt: number;
  /** The principal who approved or denied it (absent while pending). */
  readonly decidedBy?: string;
  /** Epoch ms of the decision (absent while pending). */
  readonly decidedAt?: number;
  /** The decider's reason, as given. */
  readonly reason?: string;
  /** The approver was the requester (allowed only by tenant policy). */
  readonly selfApproved?: boolean;
  /** Epoch ms when the approved call used it (set with `consumed`). */
  readonly consumedAt?: number;
}

/** What a caller gives to request an approval: the record before anyone decided anything. */
export type NewApproval = Omit<
  ApprovalRecord,
  'status' | 'decidedBy' | 'decidedAt' | 'reason' | 'selfApproved' | 'consumedAt'
>;

/** An approver's answer to one pending approval. */
export interface ApprovalDecision {
  /** True to approve, false to deny. */
  readonly approve: boolean;
  /** The deciding principal. */
  readonly by: string;
  /** Why, in the decider's words (stored as given). */
  readonly reason?: string;
  /** The decider is the requester (the gateway allows it only where tenant policy does). */
  readonly selfApproved: boolean;
  /** Epoch ms of the decision; an approval whose `expiresAt` is not after it is `expired`. */
  readonly at: number;
}

/** Why an approval could not be decided or used. */
export type ApprovalProblem = 'not_found' | 'not_pending' | 'not_approved' | 'payload_mismatch' | 'expired' | 'consumed';

/** The record as changed, or the problem that stopped the change (with the record when it exists). */
export type ApprovalOutcome =
  | { readonly ok: true; readonly record: ApprovalRecord }
  | { readonly ok: false; readonly problem: ApprovalProblem; readonly record?: ApprovalRecord };

/**
 * Approvals bound to a payload digest. `consume` is one atomic check-and-set, so two concurrent
 * calls (even in two server processes) cannot both use one approval.
 */
export interface ApprovalStore {
  /** Stores a new `pending` approval; rejects when the tenant already has one with this id. */
  create(approval: NewApproval): Promise<ApprovalRecord>;
  /** The tenant's approval with this id, or undefined (another tenant's id finds nothing). */
  get(tenant: string, id: string): Promise<ApprovalRecord | undefined>;
  /** The tenant's approvals matching every given filter, newest first, at most `limit` (0 lists none). */
  list(
    tenant: string,
    filter: { readonly status?: ApprovalStatus; readonly requester?: string; readonly payloadDigest?: string; readonly limit: number },
  ): Promise<readonly ApprovalRecord[]>;
  /** Decides a pending, unexpired approval; anything else is refused with its problem. */
  decide(tenant: string, id: string, decision: ApprovalDecision): Promise<ApprovalOutcome>;
  /** Uses an approved, unexpired, unconsumed approval whose digest matches; at most once. */
  consume(tenant: string, id: string, payloadDigest: string, now: number): Promise<ApprovalOutcome>;
  /**
   * Gives back an approval that `consume` used at `consumedAt` for a call that never reached its
   * tool: `consumed` becomes `approved` again (and `consumedAt` is cleared), in one atomic
   * check-and-set that matches the tenant, id, digest and that exact `consumedAt`, so only the
   * call that used it can give it back, and only once. Returns false (changing nothing) when the
   * approval is not in that state. An approval given back past its expiry stays expired.
   */
  release(tenant: string, id: string, payloadDigest: string, consumedAt: number): Promise<boolean>;
}
/** The approval store `apps/server` binds by `TOOLGATE_STORE` (SQLite or PostgreSQL). */
export const ApprovalStoreToken: Token<ApprovalStore> = token('ApprovalStore');
