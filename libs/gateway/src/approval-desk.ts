import type { ApprovalRecord, ApprovalStatus, Denial, JsonObject, Principal } from '@toolgate/contracts';
import { deny, newCall, toolOf, type Runtime } from './call.js';
import { APPROVAL_REQUEST_GATES, runGates } from './gate-pipeline.js';
import { GatewayError } from './gateway-error.js';
import { payloadDigestOf } from './gates/approval-gate.js';
import { stateUnavailable } from './gates/state-unavailable.js';
import { fromStore, holds, requireRole } from './roles.js';

const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 500;
const MAX_REASON_LENGTH = 500;
const STATUSES: readonly ApprovalStatus[] = ['pending', 'approved', 'denied', 'consumed'];

/** The result of asking for an approval: the pending record, or why it cannot be asked for. */
export type ApprovalRequestResult = { readonly ok: true; readonly approval: ApprovalRecord } | { readonly ok: false; readonly denial: Denial };

/**
 * Approval requests and decisions. A request goes through lookup, allow, size and input, so
 * the digest an approver signs off is over the repaired arguments a call will actually carry.
 * Deciding is for the tenant's approvers; the requester may decide its own request only where
 * the tenant's policy allows self-approval, and that decision is marked as such.
 */
export class ApprovalDesk {
  constructor(private readonly runtime: Runtime) {}

  async request(principal: Principal, request: { tool: string; version?: string; args: JsonObject }): Promise<ApprovalRequestResult> {
    const { deps, limits, newId } = this.runtime;
    const call = newCall(newId(), 'approval-request', principal, { tool: request.tool, ...(request.version === undefined ? {} : { version: request.version }), args: request.args }, deps.clock.now());
    const refused = await runGates(APPROVAL_REQUEST_GATES, call, this.runtime);
    if (refused) return { ok: false, denial: refused };
    const manifest = toolOf(call).manifest;
    if (manifest.risk !== 'high' && manifest.risk !== 'critical') {
      return {
        ok: false,
        denial: deny('approval', 'INVALID_INPUT', `'${manifest.name}' is ${manifest.risk} risk and needs no approval.`, 'Call it directly with tools.invoke.'),
      };
    }
    const now = deps.clock.now();
    try {
      const approval = await deps.approvals.create({
        id: newId(),
        tenant: principal.tenant,
        requester: principal.id,
        tool: manifest.name,
        version: manifest.version,
        args: call.args,
        payloadDigest: payloadDigestOf(call),
        createdAt: now,
        expiresAt: now + limits.approvalTtlMs,
      });
      return { ok: true, approval };
    } catch {
      return { ok: false, denial: stateUnavailable('approval') };
    }
  }

  async list(principal: Principal, filter: { status?: ApprovalStatus; limit?: number } = {}): Promise<readonly ApprovalRecord[]> {
    if (filter.status !== undefined && !STATUSES.includes(filter.status)) {
      throw new GatewayError('INVALID', `status must be one of ${STATUSES.join(', ')}`);
    }
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw new GatewayError('INVALID', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`);
    const everyone = holds(principal, 'approver') || holds(principal, 'operator');
    const records = await fromStore('list approvals', () =>
      this.runtime.deps.approvals.list(principal.tenant, {
        limit,
        ...(filter.status === undefined ? {} : { status: filter.status }),
        ...(everyone ? {} : { requester: principal.id }),
      }),
    );
    // The store is tenant-scoped; this filter is the second lock on the same door.
    return records.filter((r) => r.tenant === principal.tenant && (everyone || r.requester === principal.id));
  }

  async decide(principal: Principal, id: string, decision: { approve: boolean; reason?: string }): Promise<ApprovalRecord> {
    requireRole(principal, 'approver', 'decide approval requests');
    if (typeof decision?.approve !== 'boolean') throw new GatewayError('INVALID', 'approve must be true or false');
    if (decision.reason !== undefined && (typeof decision.reason !== 'string' || decision.reason.length > MAX_REASON_LENGTH)) {
      throw new GatewayError('INVALID', `reason must be a string of at most ${MAX_REASON_LENGTH} characters`);
    }
    const { deps } = this.runtime;
    const record = await fromStore('read the approval', () => deps.approvals.get(principal.tenant, id));
    if (!record || record.tenant !== principal.tenant) throw new GatewayError('NOT_FOUND', `There is no approval '${String(id).slice(0, 64)}' in your tenant.`);
    const self = record.requester === principal.id;
    if (self && deps.directory.tenant(principal.tenant)?.selfApproval !== true) {
      throw new GatewayError('FORBIDDEN', `You requested approval '${record.id}' yourself, and tenant '${principal.tenant}' does not allow self-approval; another approver must decide it.`);
    }
    const now = deps.clock.now();
    if (record.status !== 'pending') throw new GatewayError('CONFLICT', `Approval '${record.id}' was already decided (${record.status}).`);
    if (now >= record.expiresAt) throw new GatewayError('CONFLICT', `Approval '${record.id}' expired at ${new Date(record.expiresAt).toISOString()}; ask for a new request.`);
    const outcome = await fromStore('record the decision', () =>
      deps.approvals.decide(principal.tenant, record.id, {
        approve: decision.approve,
        by: principal.id,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
        selfApproved: self,
        at: now,
      }),
    );
    if (outcome.ok) return outcome.record;
    if (outcome.problem === 'not_found') throw new GatewayError('NOT_FOUND', `There is no approval '${record.id}' in your tenant.`);
    throw new GatewayError('CONFLICT', `Approval '${record.id}' can no longer be decided (${outcome.problem.replace('_', ' ')}).`);
  }
}
