import { redactSecrets, type AuditSink, type Clock, type Denial, type GatewayListener, type InvokeResult, type JsonValue } from '@toolgate/contracts';
import { callEvent } from '../audit/audit-events.js';
import { repairedOf, toolOf, type Call, type Execution } from '../call.js';

/** What the outcome step writes and tells: the outcome record, and the listeners of failures. */
export interface OutcomeNeeds {
  readonly audit: Pick<AuditSink, 'append'>;
  readonly clock: Clock;
  readonly listeners: readonly GatewayListener[];
}

/**
 * Gate 12: the outcome must be recorded before the caller sees it. Answers the caller's result,
 * or, when the record could not be written, the refusal the pipeline must give (and audit)
 * instead: the result is withheld, since nothing unrecorded may reach the caller.
 */
export async function recordOutcome(
  call: Call,
  needs: OutcomeNeeds,
  result: Execution,
  handed = true,
): Promise<{ readonly answer: InvokeResult } | { readonly unaudited: Denial }> {
  const now = needs.clock.now();
  // What the call relayed to its caller (progress, elicitation, sampling) is part of its record.
  const relayed = call.relay?.summary();
  const event = result.ok
    ? callEvent(call, now, 'succeeded', relayed === undefined ? undefined : { detail: relayed })
    : callEvent(call, now, 'failed', {
        gate: result.denial.gate,
        code: result.denial.code,
        detail: relayed === undefined ? result.denial.message : `${result.denial.message}; ${relayed}`,
      });
  try {
    await needs.audit.append(event);
  } catch {
    call.gate = 'audit';
    return {
      unaudited: {
        gate: 'audit',
        code: 'OUTCOME_UNAUDITED',
        message: handed
          ? `The tool ran, but its outcome could not be recorded in the audit trail, so ${result.ok ? 'its output is withheld' : 'its result is withheld'}.`
          : `The call did not reach its tool, but its outcome could not be recorded in the audit trail, so its result is withheld. ${result.ok ? '' : result.denial.message}`.trimEnd(),
        hint: handed
          ? 'Do not assume the call had no effect. An operator can find it by its callId in the "authorized" record.'
          : 'An operator can find the call by its callId in the "authorized" record.',
      },
    };
  }
  if (!result.ok) {
    notifyFailure(call, needs, result.denial.message);
    return { answer: { ok: false, callId: call.callId, denial: result.denial, ...repairedOf(call) } };
  }
  return { answer: { ok: true, callId: call.callId, output: result.output as JsonValue, ...repairedOf(call) } };
}

/**
 * Listeners learn of failures after they are audited, without delaying the answer or changing it.
 * They may keep what they hear where other principals read it (the shared memory), so the text
 * is redacted with the audit's rules first: a token in an error message stays out of them all.
 */
function notifyFailure(call: Call, needs: OutcomeNeeds, message: string): void {
  if (needs.listeners.length === 0) return;
  const failure = {
    principal: call.principal,
    tool: toolOf(call).manifest.name,
    args: call.args,
    message: redactSecrets(message),
    at: needs.clock.now(),
  };
  for (const listener of needs.listeners) {
    if (!listener.onToolFailure) continue;
    queueMicrotask(() => {
      try {
        listener.onToolFailure?.(failure)?.catch?.(() => undefined);
      } catch {
        // A listener can never change a result.
      }
    });
  }
}
