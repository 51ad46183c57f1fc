import type { ApprovalOutcome, Denial } from '@toolgate/contracts';
import { deny, type Call, type Runtime } from '../call.js';
import { callEvent } from '../audit/audit-events.js';
import { budgetExhausted } from '../gates/budget-gate.js';
import { stateUnavailable } from '../denials/state-unavailable.js';

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
export async function authorize(call: Call, runtime: Runtime): Promise<Denial | undefined> {
  const { deps } = runtime;
  const { principal } = call;
  call.gate = 'audit';
  try {
    await deps.audit.append(callEvent(call, runtime, 'authorized'));
  } catch {
    return deny('audit', 'AUDIT_UNAVAILABLE', 'The audit trail cannot record this call, so it was not run.', 'Try again later; an operator can check the audit sink with health.');
  }

  const record = call.approval?.record;
  if (record) {
    call.gate = 'approval';
    let outcome: ApprovalOutcome;
    try {
      outcome = await deps.approvals.consume(principal.tenant, record.id, record.payloadDigest, deps.clock.now());
    } catch {
      return stateUnavailable('approval');
    }
    if (!outcome.ok) return consumeRefused(outcome.problem, record.id);
  }

  if (call.budget) {
    call.gate = 'budget';
    const now = deps.clock.now();
    let charged: boolean;
    try {
      charged = await deps.budgets.charge(principal.tenant, principal.id, call.budget, now);
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
