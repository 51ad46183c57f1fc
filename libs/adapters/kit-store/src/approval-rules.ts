import type { ApprovalDecision, ApprovalProblem, ApprovalRecord } from '@toolgate/contracts';
import { requireInteger, requireText } from './text-rules.js';

/** A decision with its fields checked as every store stores them. */
export interface CheckedDecision {
  readonly status: 'approved' | 'denied';
  readonly by: string;
  readonly reason: string | undefined;
  readonly at: number;
  readonly selfApproved: boolean;
}

/** Checks a decision before any lookup, so a malformed one fails the same way in every store. */
export function checkDecision(decision: ApprovalDecision): CheckedDecision {
  const by = requireText('decision.by', decision.by);
  const reason = decision.reason === undefined ? undefined : requireText('decision.reason', decision.reason);
  const at = requireInteger('decision.at', decision.at);
  return { status: decision.approve ? 'approved' : 'denied', by, reason, at, selfApproved: decision.selfApproved === true };
}

/**
 * Why `record` cannot be decided at `at`, or `undefined` when it can: only a pending approval
 * that has not expired is decided. The memory store checks with it; the SQL stores put the same
 * condition in their `UPDATE … WHERE` and use it to name why the update changed nothing.
 */
export function decideProblem(record: ApprovalRecord, at: number): 'not_pending' | 'expired' | undefined {
  if (record.status !== 'pending') return 'not_pending';
  if (at >= record.expiresAt) return 'expired';
  return undefined;
}

/**
 * Why `record` cannot be consumed for `payloadDigest` at `now`, or `undefined` when it can. The
 * order is the order of the questions a caller needs answered: already used, never approved,
 * too late, then approved for a different payload.
 */
export function consumeProblem(
  record: ApprovalRecord,
  payloadDigest: string,
  now: number,
): Exclude<ApprovalProblem, 'not_found' | 'not_pending'> | undefined {
  if (record.status === 'consumed') return 'consumed';
  if (record.status !== 'approved') return 'not_approved';
  if (now >= record.expiresAt) return 'expired';
  if (record.payloadDigest !== payloadDigest) return 'payload_mismatch';
  return undefined;
}

/** The `limit` of an approval listing: `0` is allowed and lists nothing. */
export function requireListLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError('limit must be a non-negative integer');
  return limit;
}
