import type { JsonObject } from './json.js';
import { token, type Token } from './token.js';

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'consumed';

/** A request for a human to approve one exact payload. */
export interface ApprovalRecord {
  readonly id: string;
  readonly tenant: string;
  /** The principal whose call needs the approval. */
  readonly requester: string;
  readonly tool: string;
  readonly version: string;
  /** The (repaired) arguments, shown to the approver. */
  readonly args: JsonObject;
  /** `sha256:<hex>` of canonical JSON of {tenant, principal, tool, version, args}. */
  readonly payloadDigest: string;
  readonly status: ApprovalStatus;
  readonly createdAt: number;
  /** Epoch ms after which the approval cannot be decided or used. */
  readonly expiresAt: number;
  readonly decidedBy?: string;
  readonly decidedAt?: number;
  readonly reason?: string;
  /** The approver was the requester (allowed only by tenant policy). */
  readonly selfApproved?: boolean;
  readonly consumedAt?: number;
}

export type NewApproval = Omit<
  ApprovalRecord,
  'status' | 'decidedBy' | 'decidedAt' | 'reason' | 'selfApproved' | 'consumedAt'
>;

export interface ApprovalDecision {
  readonly approve: boolean;
  readonly by: string;
  readonly reason?: string;
  readonly selfApproved: boolean;
  readonly at: number;
}

/** Why an approval could not be decided or used. */
export type ApprovalProblem = 'not_found' | 'not_pending' | 'not_approved' | 'payload_mismatch' | 'expired' | 'consumed';

export type ApprovalOutcome =
  | { readonly ok: true; readonly record: ApprovalRecord }
  | { readonly ok: false; readonly problem: ApprovalProblem; readonly record?: ApprovalRecord };

/**
 * Approvals bound to a payload digest. `consume` is one atomic check-and-set, so two concurrent
 * calls (even in two server processes) cannot both use one approval.
 */
export interface ApprovalStore {
  create(approval: NewApproval): Promise<ApprovalRecord>;
  get(tenant: string, id: string): Promise<ApprovalRecord | undefined>;
  /** Newest first. */
  list(
    tenant: string,
    filter: { readonly status?: ApprovalStatus; readonly requester?: string; readonly payloadDigest?: string; readonly limit: number },
  ): Promise<readonly ApprovalRecord[]>;
  /** Decides a pending, unexpired approval; anything else is refused with its problem. */
  decide(tenant: string, id: string, decision: ApprovalDecision): Promise<ApprovalOutcome>;
  /** Uses an approved, unexpired, unconsumed approval whose digest matches; at most once. */
  consume(tenant: string, id: string, payloadDigest: string, now: number): Promise<ApprovalOutcome>;
}
export const ApprovalStoreToken: Token<ApprovalStore> = token('ApprovalStore');
