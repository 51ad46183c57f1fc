import { BuiltInRoles, type ApprovalRecord, type ApprovalStore, type Clock, type Denial, type PrincipalDirectory } from '@toolgate/contracts';
import { payloadDigestOf } from '../audit/call-digests.js';
import { toolOf, type Call, type CallGate } from '../call.js';
import { deny } from '../denials/deny.js';

/**
 * What the approval gate reads: stored approvals (`get` and `list` only: it checks, the commit
 * step consumes), the tenant's self-approval policy, and the time.
 */
export interface ApprovalNeeds {
  readonly approvals: Pick<ApprovalStore, 'get' | 'list'>;
  readonly directory: Pick<PrincipalDirectory, 'tenant'>;
  readonly clock: Clock;
}

/**
 * Gate 7: `high` and `critical` tools need an approval bound to this exact payload (see ADR
 * 0006). Accepted, in this order: the caller's own `selfApprove` when it holds the approver
 * role and its tenant allows self-approval (the same policy that governs deciding one's own
 * request); the approval named by `approvalId`; an approved, unused approval of this caller for
 * the same digest. The approval is only checked here; the commit step consumes it atomically.
 */
export function approvalGate(needs: ApprovalNeeds): CallGate {
  return {
    name: 'approval',
    check(call) {
      const manifest = toolOf(call).manifest;
      call.approvalRequired = manifest.risk === 'high' || manifest.risk === 'critical';
      return call.approvalRequired ? checkApproval(call, needs) : undefined;
    },
  };
}

async function checkApproval(call: Call, needs: ApprovalNeeds): Promise<Denial | undefined> {
  const { principal, request } = call;

  if (request.selfApprove === true && maySelfApprove(call, needs)) {
    call.approval = { approvedBy: principal.id, reason: 'self-approval' };
    return undefined;
  }
  const digest = payloadDigestOf(call);
  const now = needs.clock.now();
  if (typeof request.approvalId === 'string') {
    const record = await needs.approvals.get(principal.tenant, request.approvalId);
    const problem = checkRecord(call, record, request.approvalId, digest, now);
    if (problem) return problem;
    call.approval = grantOf(record as ApprovalRecord);
    return undefined;
  }
  const matching = await needs.approvals.list(principal.tenant, {
    status: 'approved',
    requester: principal.id,
    payloadDigest: digest,
    limit: 20,
  });
  const usable = matching.find((r) => r.tenant === principal.tenant && r.expiresAt > now && r.payloadDigest === digest);
  if (usable) {
    call.approval = grantOf(usable);
    return undefined;
  }
  return await approvalRequired(call, needs, digest);
}

/** `selfApprove` needs both the approver role and a tenant whose policy allows self-approval. */
function maySelfApprove(call: Call, needs: ApprovalNeeds): boolean {
  return call.principal.roles.includes(BuiltInRoles.approver) && needs.directory.tenant(call.principal.tenant)?.selfApproval === true;
}

function grantOf(record: ApprovalRecord) {
  return { approvedBy: record.decidedBy ?? 'unknown', reason: `approval:${record.id}`, record };
}

function checkRecord(call: Call, record: ApprovalRecord | undefined, id: string, digest: string, now: number): Denial | undefined {
  const shownId = id.slice(0, 64);
  // Another tenant's approval is indistinguishable from a missing one: ids do not cross tenants.
  if (!record || record.tenant !== call.principal.tenant) {
    return deny('approval', 'APPROVAL_REQUIRED', `There is no approval '${shownId}' in your tenant.`, requestHint(call), { payloadDigest: digest });
  }
  switch (record.status) {
    case 'pending':
      // Undecided and past its time it can never be decided: say so, or the caller waits on it forever.
      if (now >= record.expiresAt) {
        return deny('approval', 'APPROVAL_EXPIRED', `Approval '${shownId}' expired at ${new Date(record.expiresAt).toISOString()} without a decision.`, requestHint(call), {
          payloadDigest: digest,
        });
      }
      return deny('approval', 'APPROVAL_REQUIRED', `Approval '${shownId}' is still pending.`, 'Wait until an approver has decided it, then call again.', {
        payloadDigest: digest,
        approvalId: record.id,
      });
    case 'denied':
      return deny(
        'approval',
        'APPROVAL_DENIED',
        `Approval '${shownId}' was denied${record.decidedBy ? ` by ${record.decidedBy}` : ''}${record.reason ? `: ${record.reason.slice(0, 200)}` : ''}.`,
        undefined,
        { approvalId: record.id },
      );
    case 'consumed':
      return deny('approval', 'APPROVAL_REQUIRED', `Approval '${shownId}' was already used; each approval allows one call.`, requestHint(call), {
        payloadDigest: digest,
      });
    case 'approved':
      break;
  }
  if (now >= record.expiresAt) {
    return deny('approval', 'APPROVAL_EXPIRED', `Approval '${shownId}' expired at ${new Date(record.expiresAt).toISOString()}.`, requestHint(call), {
      payloadDigest: digest,
    });
  }
  if (record.requester !== call.principal.id || record.payloadDigest !== digest) {
    return deny(
      'approval',
      'APPROVAL_PAYLOAD_MISMATCH',
      record.requester !== call.principal.id
        ? `Approval '${shownId}' was granted to another principal.`
        : `Approval '${shownId}' was granted for different arguments (or another tool version) than this call's.`,
      'An approval covers one exact payload: call with the approved arguments, or request an approval for these.',
      { payloadDigest: digest, approvedDigest: record.payloadDigest },
    );
  }
  return undefined;
}

/**
 * How many of the caller's pending requests for one digest are looked at for one still open.
 * Each has one TTL and is listed newest first, so the first unexpired one is among the newest.
 */
const PENDING_LOOKED_AT = 20;

async function approvalRequired(call: Call, needs: ApprovalNeeds, digest: string): Promise<Denial> {
  const manifest = toolOf(call).manifest;
  const pending = await needs.approvals.list(call.principal.tenant, {
    status: 'pending',
    requester: call.principal.id,
    payloadDigest: digest,
    limit: PENDING_LOOKED_AT,
  });
  // The store keeps an expired request 'pending': naming one would send the caller to wait on it forever.
  const now = needs.clock.now();
  const waiting = pending.find((r) => r.tenant === call.principal.tenant && r.payloadDigest === digest && r.expiresAt > now);
  const selfFlagIgnored =
    call.request.selfApprove !== true
      ? ''
      : call.principal.roles.includes(BuiltInRoles.approver)
        ? " ('selfApprove' is ignored: your tenant does not allow self-approval.)"
        : " ('selfApprove' counts only for a caller holding the approver role.)";
  if (waiting) {
    return deny('approval', 'APPROVAL_REQUIRED', `'${manifest.name}' is ${manifest.risk} risk; your approval request '${waiting.id}' is still pending.${selfFlagIgnored}`, 'Call again once an approver has approved it.', {
      payloadDigest: digest,
      approvalId: waiting.id,
    });
  }
  return deny('approval', 'APPROVAL_REQUIRED', `'${manifest.name}' is ${manifest.risk} risk and needs a human approval for exactly these arguments.${selfFlagIgnored}`, requestHint(call), {
    payloadDigest: digest,
  });
}

function requestHint(call: Call): string {
  const manifest = toolOf(call).manifest;
  return (
    `Request one with approvals.request {tool: '${manifest.name}', version: '${manifest.version}', args: <the same args>}; ` +
    'once an approver approves it, call again with the same tool, version and args (optionally passing approvalId).'
  );
}
