import { redactSecrets, type Denial, type Gate, type InvokeResult, type JsonValue } from '@toolgate/contracts';
import { callEvent, denialEvent } from './audit/audit-events.js';
import { toolOf, type Call, type CallGate, type Runtime } from './call.js';
import { allowGate } from './gates/allow-gate.js';
import { approvalGate } from './gates/approval-gate.js';
import { authorize } from './steps/commit-step.js';
import { budgetGate } from './gates/budget-gate.js';
import { depthGate } from './gates/depth-gate.js';
import { egressGate } from './gates/egress-gate.js';
import { execute, executorFor, type Execution } from './steps/execute-step.js';
import { inputGate } from './gates/input-gate.js';
import { lookupGate } from './gates/lookup-gate.js';
import { checkOutput } from './steps/output-step.js';
import { permissionsGate } from './gates/permissions-gate.js';
import { sizeGate } from './gates/size-gate.js';
import { stateUnavailable } from './denials/state-unavailable.js';

/** Gate 4: nesting first (every later step recurses over the arguments), then the serialized size. */
const nestingAndSizeGate: CallGate = {
  name: 'size',
  check: (call, runtime) => depthGate.check(call, runtime) ?? sizeGate.check(call, runtime),
};

/** Gates 1–8: everything that can be decided without spending or running anything (ADR 0005). */
export const PREFLIGHT_GATES: readonly CallGate[] = [
  lookupGate,
  allowGate,
  budgetGate,
  nestingAndSizeGate,
  permissionsGate,
  inputGate,
  approvalGate,
  egressGate,
];

/**
 * What an approval request must pass so its digest is over arguments a call could send. The
 * budget is checked (not charged) too: a principal whose calls are used up cannot make approvers
 * read requests it could not act on, however many it sends.
 */
export const APPROVAL_REQUEST_GATES: readonly CallGate[] = [lookupGate, allowGate, budgetGate, nestingAndSizeGate, inputGate];

/**
 * Runs gates in order and stops at the first refusal. A gate that throws (a store that is down,
 * or a bug) refuses with STATE_UNAVAILABLE at that gate: the pipeline fails closed.
 */
export async function runGates(gates: readonly CallGate[], call: Call, runtime: Runtime, passed?: Gate[]): Promise<Denial | undefined> {
  for (const gate of gates) {
    call.gate = gate.name;
    let denial: Denial | undefined;
    try {
      const verdict = gate.check(call, runtime);
      // Synchronous gates answer without a promise; skipping the await keeps the fast path fast.
      denial = verdict instanceof Promise ? await verdict : verdict;
    } catch {
      denial = stateUnavailable(gate.name);
    }
    if (denial) return denial;
    passed?.push(gate.name);
  }
  return undefined;
}

/**
 * Takes one call through all twelve steps: the preflight gates, the audited commit (charge and
 * consume), execution, the output checks and the audited outcome. Every refusal is audited;
 * nothing here throws past `invoke`.
 */
export class GatePipeline {
  constructor(private readonly runtime: Runtime) {}

  async invoke(call: Call, signal?: AbortSignal): Promise<InvokeResult> {
    const runtime = this.runtime;
    const refused = await runGates(PREFLIGHT_GATES, call, runtime);
    if (refused) return this.refuse(call, refused);
    const executor = executorFor(call, runtime);
    if (!('execute' in executor)) return this.refuse(call, executor);

    const unauthorized = await authorize(call, runtime);
    if (unauthorized) return this.refuse(call, unauthorized);

    const ran = await execute(call, runtime, executor, signal);
    if (!ran.ok && !ran.failed) return this.refuse(call, ran.denial);
    const result = ran.ok ? checkOutput(call, runtime, ran.output) : ran;
    return this.#finish(call, result);
  }

  /** Audits a refusal (a failing audit does not change the answer) and returns it. */
  async refuse(call: Call, denial: Denial): Promise<InvokeResult> {
    try {
      await this.runtime.deps.audit.append(denialEvent(call, this.runtime, denial));
    } catch {
      // The refusal stands either way; there is nothing safer to answer.
    }
    return { ok: false, callId: call.callId, denial, ...this.#repaired(call) };
  }

  /** Gate 12: the outcome must be recorded before the caller sees it. */
  async #finish(call: Call, result: Execution): Promise<InvokeResult> {
    const { deps } = this.runtime;
    const event = result.ok
      ? callEvent(call, this.runtime, 'succeeded')
      : callEvent(call, this.runtime, 'failed', { gate: result.denial.gate, code: result.denial.code, detail: result.denial.message });
    try {
      await deps.audit.append(event);
    } catch {
      call.gate = 'audit';
      return this.refuse(call, {
        gate: 'audit',
        code: 'OUTCOME_UNAUDITED',
        message: `The tool ran, but its outcome could not be recorded in the audit trail, so ${result.ok ? 'its output is withheld' : 'its result is withheld'}.`,
        hint: 'Do not assume the call had no effect. An operator can find it by its callId in the "authorized" record.',
      });
    }
    if (!result.ok) {
      this.#notifyFailure(call, result.denial.message);
      return { ok: false, callId: call.callId, denial: result.denial, ...this.#repaired(call) };
    }
    return { ok: true, callId: call.callId, output: result.output as JsonValue, ...this.#repaired(call) };
  }

  /**
   * Listeners learn of failures after they are audited, without delaying the answer or changing it.
   * They may keep what they hear where other principals read it (the shared memory), so the text
   * is redacted with the audit's rules first: a token in an error message stays out of them all.
   */
  #notifyFailure(call: Call, message: string): void {
    const listeners = this.runtime.deps.listeners ?? [];
    if (listeners.length === 0) return;
    const failure = {
      principal: call.principal,
      tool: toolOf(call).manifest.name,
      args: call.args,
      message: redactSecrets(message),
      at: this.runtime.deps.clock.now(),
    };
    for (const listener of listeners) {
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

  #repaired(call: Call) {
    return call.inputAccepted && call.repaired.length > 0 ? { repaired: call.repaired } : {};
  }
}
