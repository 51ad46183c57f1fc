import type { ApprovalRecord, AuditEvent, AuditEventKind, Denial } from '@toolgate/contracts';
import type { Call } from '../call.js';
import { argsDigestOf } from './call-digests.js';
import { argsDigest } from './canonical-json.js';

const MAX_NAME = 128;

type MutableEvent = { -readonly [K in keyof AuditEvent]: AuditEvent[K] };

// Formatting a date is a measurable part of a fast call, and calls within one millisecond share it.
let isoAt = Number.NaN;
let iso = '';
function isoTime(now: number): string {
  if (now !== isoAt) {
    iso = new Date(now).toISOString();
    isoAt = now;
  }
  return iso;
}

/**
 * The audit event of one moment of a call, at clock time `now`. Carries the digest of the accepted arguments, never
 * the arguments; the repair descriptions name arguments, not their values. Built field by field
 * (not by spreading) because two of these are made for every call on the hot path.
 */
export function callEvent(call: Call, now: number, event: AuditEventKind, extra?: Partial<AuditEvent>): AuditEvent {
  const manifest = call.tool?.manifest;
  const record: MutableEvent = {
    event,
    ts: isoTime(now),
    callId: call.callId,
    tenant: call.principal.tenant,
    principal: call.principal.id,
    tool: manifest ? manifest.name : String(call.request.tool).slice(0, MAX_NAME),
  };
  if (manifest) record.version = manifest.version;
  // Who vouched for the caller, when an issuer did (ADR 0074).
  if (call.principal.issuer !== undefined) record.issuer = call.principal.issuer;
  else if (typeof call.request.version === 'string') record.version = call.request.version.slice(0, MAX_NAME);
  record.durationMs = Math.max(0, now - call.startedAt);
  const digest = argsDigestOf(call);
  if (digest) record.argsDigest = digest;
  if (call.approval) {
    record.approvedBy = call.approval.approvedBy;
    record.approvalReason = call.approval.reason;
  }
  if (call.repaired.length > 0) record.repaired = call.repaired.map((r) => r.detail);
  // Which operator-configured grants let the call run (ADR 0022): on the records of a call that ran.
  const grants = call.standingGrantsUsed;
  if (grants && grants.length > 0 && (event === 'authorized' || event === 'succeeded' || event === 'failed')) record.grants = grants;
  return extra ? Object.assign(record, extra) : record;
}

/** The record of a refusal. */
export function denialEvent(call: Call, now: number, denial: Denial): AuditEvent {
  return callEvent(call, now, 'denied', { gate: denial.gate, code: denial.code });
}

/** The approval an approval record is about: the stored record, or the one about to be created. */
type ApprovalSubject = Pick<ApprovalRecord, 'id' | 'tenant' | 'tool' | 'version' | 'args'>;

/**
 * The record of an approval request, made before the approval is created (ADR 0020). Like a
 * call's records it carries the digest of the (repaired) arguments, never the arguments.
 */
export function approvalRequestedEvent(
  approval: ApprovalSubject & Pick<ApprovalRecord, 'requester' | 'expiresAt'>,
  repaired: readonly string[],
  now: number,
  detail?: string,
): AuditEvent {
  return {
    event: 'approval_requested',
    ts: isoTime(now),
    tenant: approval.tenant,
    principal: approval.requester,
    tool: approval.tool,
    version: approval.version,
    argsDigest: argsDigest(approval.args),
    ...(repaired.length > 0 ? { repaired } : {}),
    detail: detail ?? `pending until ${new Date(approval.expiresAt).toISOString()}`,
    approvalId: approval.id,
  };
}

/** What was decided, by whom, and why, as `approval_decided` records it. */
export interface ApprovalVerdict {
  readonly approve: boolean;
  /** The deciding principal's id. */
  readonly by: string;
  readonly reason?: string;
  /** The decider is the requester (allowed only by the tenant's policy). */
  readonly self: boolean;
}

/**
 * The record of an approval decision, made before the decision is stored (ADR 0020): `detail`
 * is `approved` or `denied`, `approvedBy` names the approver of an approval.
 */
export function approvalDecidedEvent(approval: ApprovalSubject, verdict: ApprovalVerdict, now: number): AuditEvent {
  // A self-approval is marked as such (ADR 0006); the decider's own words follow the marker.
  const selfApproval = verdict.approve && verdict.self;
  const reason = selfApproval ? (verdict.reason === undefined ? 'self-approval' : `self-approval: ${verdict.reason}`) : verdict.reason;
  return {
    event: 'approval_decided',
    ts: isoTime(now),
    tenant: approval.tenant,
    principal: verdict.by,
    tool: approval.tool,
    version: approval.version,
    argsDigest: argsDigest(approval.args),
    ...(verdict.approve ? { approvedBy: verdict.by } : {}),
    ...(reason === undefined ? {} : { approvalReason: reason }),
    detail: verdict.approve ? 'approved' : 'denied',
    approvalId: approval.id,
  };
}

/**
 * The follow-up of an `approval_decided` record whose decision the store did not apply (or may
 * not have): same approval and decider, `detail` saying so, and no `approvedBy`, so a reader
 * looking for who approved what never finds an approval that did not take effect.
 */
export function approvalNotAppliedEvent(approval: ApprovalSubject, by: string, now: number, detail: string): AuditEvent {
  return {
    event: 'approval_decided',
    ts: isoTime(now),
    tenant: approval.tenant,
    principal: by,
    tool: approval.tool,
    version: approval.version,
    argsDigest: argsDigest(approval.args),
    detail,
    approvalId: approval.id,
  };
}
