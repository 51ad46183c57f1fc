import type { ApprovalOutcome, ApprovalStore, AuditSink, BudgetStore, Clock, Denial } from '@toolgate/contracts';
import { callEvent } from '../audit/audit-events.js';
import type { Call } from '../call.js';
import { budgetExhausted } from '../denials/budget-exhausted.js';
import { deny } from '../denials/deny.js';
import { stateUnavailable } from '../denials/state-unavailable.js';

/**
 * What the commit step writes: the "authorized" record, the approval's consumption and the budget's
 * charge (the only places a call spends anything), at the clock's time.
 */
export interface CommitNeeds {
  readonly audit: Pick<AuditSink, 'append'>;
  readonly approvals: Pick<ApprovalStore, 'consume'>;
  readonly budgets: Pick<BudgetStore, 'charge'>;
  readonly clock: Clock;
}

/**
 * Gate 9, the commit point: the "authorized" record must be durable before anything is spent
 * or run; then the approval is consumed and the budget charged, each with one atomic store
 * operation, so concurrent calls (even in other server processes) cannot overspend or reuse.
 * A refusal here leaves the tool unrun.
 *
 * The approval comes first (ADR 0027): of many calls racing for one approval, only the winner is
 * charged. The price is that a winner whose charge is then refused (another call of the same
 * principal spent the last unit meanwhile) has used its approval up; the refusal says so.
 */
export async function authorize(call: Call, needs: CommitNeeds): Promise<Denial | undefined> {
  const { principal } = call;
  call.gate = 'audit';
  try {
    await needs.audit.append(callEvent(call, needs.clock.now(), 'authorized'));
  } catch {
    return deny('audit', 'AUDIT_UNAVAILABLE', 'The audit trail cannot record this call, so it was not run.', 'Try again later; an operator can check the audit sink with health.');
  }

  const record = call.approval?.record;
  if (record) {
    call.gate = 'approval';
    let outcome: ApprovalOutcome;
    try {
      outcome = await needs.approvals.consume(principal.tenant, record.id, record.payloadDigest, needs.clock.now());
    } catch {
      return stateUnavailable('approval');
    }
    if (!outcome.ok) return consumeRefused(outcome.problem, record.id);
  }

  if (call.budget) {
    call.gate = 'budget';
    const now = needs.clock.now();
    let charged: boolean;
    try {
      charged = await needs.budgets.charge(principal.tenant, principal.id, call.budget, now);
    } catch {
      return stateUnavailable('budget');
    }
    if (!charged) {
      const exhausted = budgetExhausted(call.budget.calls, call.budget.windowSeconds, now);
      if (!record) return exhausted;
      return { ...exhausted, message: `${exhausted.message} Approval '${record.id}' was used up by this call, which did not run; ask for a new one.` };
    }
  }
  return undefined;
}

/** A concurrent call can win the race for an approval between the check and the consume. */
function consumeRefused(problem: string, id: string): Denial {
  switch (problem) {
    case 'expired':
      return deny('approval', 'APPROVAL_EXPIRED', `Approval '${id}' expired before the call could use it.`);
    case 'payload_mismatch':
      return deny('approval', 'APPROVAL_PAYLOAD_MISMATCH', `Approval '${id}' does not match this call's payload.`);
    case 'consumed':
      return deny('approval', 'APPROVAL_REQUIRED', `Approval '${id}' was already used; each approval allows one call.`);
    default:
      return deny('approval', 'APPROVAL_REQUIRED', `Approval '${id}' can no longer be used (${problem}).`);
  }
}
