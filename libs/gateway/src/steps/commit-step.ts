import type { ApprovalOutcome, ApprovalRecord, ApprovalStore, AuditSink, BudgetStore, Clock, Denial } from '@toolgate/contracts';
import { callEvent } from '../audit/audit-events.js';
import type { Call } from '../call.js';
import { budgetExhausted } from '../denials/budget-exhausted.js';
import { deny } from '../denials/deny.js';
import { stateUnavailable } from '../denials/state-unavailable.js';

/**
 * What the commit step writes: the "authorized" record, the approval's consumption and the budget's
 * charge (the only places a call spends anything), at the clock's time; and the approval's release
 * when the call then never reaches its tool.
 */
export interface CommitNeeds {
  readonly audit: Pick<AuditSink, 'append'>;
  readonly approvals: Pick<ApprovalStore, 'consume' | 'release'>;
  readonly budgets: Pick<BudgetStore, 'charge'>;
  readonly clock: Clock;
}

/** The approval a commit used: what `release` needs to give it back (ADR 0062). */
export interface ApprovalUse {
  readonly id: string;
  readonly payloadDigest: string;
  /** The time the consume wrote; only a release naming it can give the approval back. */
  readonly consumedAt: number;
  readonly expiresAt: number;
}

/** A committed call (with the approval it used, if any), or the refusal that left it unrun. */
export type Commit = { readonly ok: true; readonly used?: ApprovalUse } | { readonly ok: false; readonly denial: Denial };

const COMMITTED: Commit = Object.freeze({ ok: true });

/**
 * Gate 9, the commit point: the "authorized" record must be durable before anything is spent
 * or run; then the approval is consumed and the budget charged, each with one atomic store
 * operation, so concurrent calls (even in other server processes) cannot overspend or reuse.
 * A refusal here leaves the tool unrun.
 *
 * The approval comes first (ADR 0027): of many calls racing for one approval, only the winner is
 * charged. A winner whose charge is then refused (another call of the same principal spent the
 * last unit meanwhile, or the budget store failed) gives its approval back (ADR 0062), since the
 * tool never ran; the refusal says whether that worked.
 */
export async function authorize(call: Call, needs: CommitNeeds): Promise<Commit> {
  const { principal } = call;
  call.gate = 'audit';
  try {
    await needs.audit.append(callEvent(call, needs.clock.now(), 'authorized'));
  } catch {
    return refused(deny('audit', 'AUDIT_UNAVAILABLE', 'The audit trail cannot record this call, so it was not run.', 'Try again later; an operator can check the audit sink with health.'));
  }

  const record = call.approval?.record;
  let used: ApprovalUse | undefined;
  if (record) {
    call.gate = 'approval';
    let outcome: ApprovalOutcome;
    try {
      outcome = await needs.approvals.consume(principal.tenant, record.id, record.payloadDigest, needs.clock.now());
    } catch {
      return refused(stateUnavailable('approval'));
    }
    if (!outcome.ok) return refused(consumeRefused(outcome.problem, record.id));
    used = approvalUse(outcome.record);
  }

  if (call.budget) {
    call.gate = 'budget';
    const now = needs.clock.now();
    let charged: boolean;
    try {
      charged = await needs.budgets.charge(principal.tenant, principal.id, call.budget, now);
    } catch {
      return refused(await withGiveBack(stateUnavailable('budget'), call, needs, used));
    }
    if (!charged) return refused(await withGiveBack(budgetExhausted(call.budget.calls, call.budget.windowSeconds, now), call, needs, used));
  }
  return used ? { ok: true, used } : COMMITTED;
}

/** What became of an approval given back: a sentence for the caller and the audit, and whether it can be used again. */
export interface GiveBack {
  readonly sentence: string;
  readonly released: boolean;
}

/**
 * Gives back the approval a committed call used, for a call that was never handed to its tool
 * (ADR 0062), and says in one sentence for the caller and the audit what became of it. A release
 * the store refuses or cannot answer leaves the approval used, and the sentence says so.
 */
export async function giveBack(call: Call, needs: Pick<CommitNeeds, 'approvals' | 'clock'>, used: ApprovalUse): Promise<GiveBack> {
  let released: boolean;
  try {
    released = await needs.approvals.release(call.principal.tenant, used.id, used.payloadDigest, used.consumedAt);
  } catch {
    return { released: false, sentence: `Approval '${used.id}' could not be given back (the approval store did not answer), so it counts as used; ask for a new one.` };
  }
  if (!released) return { released: false, sentence: `Approval '${used.id}' could not be given back (the approval store refused), so it counts as used; ask for a new one.` };
  // The store gives an approval back past its expiry too, but it stays expired: say so rather than promise a call.
  if (needs.clock.now() >= used.expiresAt) return { released: true, sentence: `Approval '${used.id}' was not used, but it has expired; ask for a new one.` };
  return { released: true, sentence: `Approval '${used.id}' was not used and still allows one call.` };
}

/**
 * The refusal of a call that did not reach its tool, saying what became of its approval: in the
 * message (which the audit's detail repeats) and in `data` (`approvalId`, `approvalReleased`).
 */
export function withApprovalFate(denial: Denial, used: ApprovalUse, fate: GiveBack): Denial {
  return { ...denial, message: `${denial.message} ${fate.sentence}`, data: { ...denial.data, approvalId: used.id, approvalReleased: fate.released } };
}

/** The refusal with what became of the approval appended, when the refused call had used one. */
async function withGiveBack(denial: Denial, call: Call, needs: CommitNeeds, used: ApprovalUse | undefined): Promise<Denial> {
  if (!used) return denial;
  return withApprovalFate({ ...denial, message: `${denial.message} The call did not run.` }, used, await giveBack(call, needs, used));
}

function refused(denial: Denial): Commit {
  return { ok: false, denial };
}

function approvalUse(record: ApprovalRecord): ApprovalUse | undefined {
  // A store that did not say when it consumed cannot be released by time; the approval then stays used.
  return record.consumedAt === undefined ? undefined : { id: record.id, payloadDigest: record.payloadDigest, consumedAt: record.consumedAt, expiresAt: record.expiresAt };
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
