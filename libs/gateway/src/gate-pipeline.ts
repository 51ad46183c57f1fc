import type {
  ApprovalStore,
  AuditSink,
  BudgetStore,
  Clock,
  Denial,
  EgressSettings,
  Gate,
  GatewayListener,
  HttpClient,
  InvokeOptions,
  InvokeResult,
  PrincipalDirectory,
  SettingsStore,
  TenantWorkspaces,
  ToolExecutor,
} from '@toolgate/contracts';
import { denialEvent } from './audit/audit-events.js';
import { repairedOf, type Call, type CallGate } from './call.js';
import { stateUnavailable } from './denials/state-unavailable.js';
import { allowGate } from './gates/allow-gate.js';
import { approvalGate } from './gates/approval-gate.js';
import { budgetGate } from './gates/budget-gate.js';
import { depthGate } from './gates/depth-gate.js';
import { egressGate } from './gates/egress-gate.js';
import { inputGate } from './gates/input-gate.js';
import { lookupGate, namedAsSent } from './gates/lookup-gate.js';
import { permissionsGate } from './gates/permissions-gate.js';
import { sizeGate } from './gates/size-gate.js';
import type { GatewayLimits } from './limits.js';
import type { ToolAccess } from './registry/tool-access.js';
import type { ToolRegistry } from './registry/tool-registry.js';
import { authorize, giveBack, withApprovalFate, type ApprovalUse, type CommitNeeds } from './steps/commit-step.js';
import { CANCELLED_DETAIL, execute, executorFor, type ExecuteNeeds, type Ran } from './steps/execute-step.js';
import { recordOutcome, type OutcomeNeeds } from './steps/outcome-step.js';
import { checkOutput, type OutputNeeds } from './steps/output-step.js';

/**
 * The gateway's dependencies with defaults applied. Only the pipeline holds them all: it hands
 * each gate and step the few it declares (`LookupNeeds`, `CommitNeeds`, …) and nothing else.
 */
export interface PipelineWiring {
  readonly registry: ToolRegistry;
  readonly directory: PrincipalDirectory;
  readonly access: ToolAccess;
  readonly approvals: ApprovalStore;
  readonly budgets: BudgetStore;
  readonly settings: SettingsStore;
  readonly audit: AuditSink;
  readonly clock: Clock;
  readonly executors: ReadonlyMap<string, ToolExecutor>;
  readonly workspaces: TenantWorkspaces;
  readonly http?: HttpClient;
  readonly bootEgress: EgressSettings;
  readonly limits: GatewayLimits;
  readonly listeners: readonly GatewayListener[];
}

/** The gate lists and each step's dependencies, built once from the wiring. */
interface Stages {
  /** Gates 1–8: everything that can be decided without spending or running anything (ADR 0005). */
  readonly preflight: readonly CallGate[];
  /**
   * What an approval request must pass so its digest is over arguments a call could send. The
   * budget is checked (not charged) too: a principal whose calls are used up cannot make approvers
   * read requests it could not act on, however many it sends.
   */
  readonly approvalRequest: readonly CallGate[];
  readonly commit: CommitNeeds;
  readonly execute: ExecuteNeeds;
  readonly output: OutputNeeds;
  readonly outcome: OutcomeNeeds;
}

/** The names of `T`'s methods. */
type MethodOf<T> = { [K in keyof T]: T[K] extends (...args: never[]) => unknown ? K : never }[keyof T];

/**
 * A view of `port` that holds only the methods `members`, each calling the port's method of that
 * name when it runs (so a port whose method is replaced later is still the one called). The gates'
 * needs types already leave out what spends (`charge`, `consume`, `setEgress`); handing a gate this
 * view makes that true at run time too, so a gate cannot reach the rest of a store through a cast.
 */
export function portView<T extends object, K extends MethodOf<T>>(port: T, ...members: K[]): Pick<T, K> {
  const view: Record<PropertyKey, unknown> = {};
  for (const member of members) {
    view[member] = (...args: unknown[]) => (port[member] as (...a: unknown[]) => unknown).apply(port, args);
  }
  return Object.freeze(view) as Pick<T, K>;
}

function stages(w: PipelineWiring): Stages {
  const lookup = lookupGate({ registry: w.registry, access: w.access });
  const allow = allowGate({ directory: w.directory, access: w.access, registry: w.registry });
  const budget = budgetGate({ directory: w.directory, budgets: portView(w.budgets, 'remaining'), clock: w.clock });
  const depth = depthGate();
  const bytes = sizeGate({ maxArgsBytes: w.limits.maxArgsBytes });
  // Gate 4: nesting first (every later step recurses over the arguments), then the serialized size.
  const size: CallGate = { name: 'size', check: (call) => depth.check(call) ?? bytes.check(call) };
  const permissions = permissionsGate({ directory: w.directory });
  const input = inputGate();
  const approval = approvalGate({ approvals: portView(w.approvals, 'get', 'list'), directory: w.directory, clock: w.clock });
  const egress = egressGate({ settings: portView(w.settings, 'getEgress'), bootEgress: w.bootEgress });
  return {
    preflight: [lookup, allow, budget, size, permissions, input, approval, egress],
    approvalRequest: [lookup, allow, budget, size, input],
    commit: { audit: w.audit, approvals: w.approvals, budgets: w.budgets, clock: w.clock },
    execute: { workspaces: w.workspaces, ...(w.http === undefined ? {} : { http: w.http }) },
    output: { maxOutputBytes: w.limits.maxOutputBytes },
    outcome: { audit: w.audit, clock: w.clock, listeners: w.listeners },
  };
}

/**
 * The audit detail of a call stopped before its tool finished: a cancellation says so, a call that
 * was never started says what became of its approval, and what was relayed.
 */
function stoppedDetail(call: Call, ran: Ran & { readonly ok: false }): string | undefined {
  const parts: string[] = [];
  if (ran.cancelled === true) parts.push(CANCELLED_DETAIL);
  if (!ran.handed && ran.denial.data?.['approvalId'] !== undefined) parts.push(ran.denial.message);
  const relayed = call.relay?.summary();
  if (relayed !== undefined) parts.push(relayed);
  return parts.length === 0 ? undefined : parts.join('; ');
}

/**
 * Runs gates in order and stops at the first refusal. A gate that throws (a store that is down,
 * or a bug) refuses with STATE_UNAVAILABLE at that gate: the pipeline fails closed.
 */
export async function runGates(gates: readonly CallGate[], call: Call, passed?: Gate[]): Promise<Denial | undefined> {
  for (const gate of gates) {
    call.gate = gate.name;
    let denial: Denial | undefined;
    try {
      const verdict = gate.check(call);
      // Synchronous gates answer without a promise; skipping the await keeps the fast path fast.
      denial = verdict instanceof Promise ? await verdict : verdict;
    } catch {
      denial = stateUnavailable(gate.name);
    }
    if (denial) return namedAsSent(call, denial);
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
  readonly #wiring: PipelineWiring;
  readonly #stages: Stages;

  constructor(wiring: PipelineWiring) {
    this.#wiring = wiring;
    this.#stages = stages(wiring);
  }

  async invoke(call: Call, options: InvokeOptions = {}): Promise<InvokeResult> {
    const stage = this.#stages;
    const refused = await runGates(stage.preflight, call);
    if (refused) return this.refuse(call, refused);
    const executor = executorFor(call, this.#wiring.executors);
    if (!('execute' in executor)) return this.refuse(call, executor);

    const commit = await authorize(call, stage.commit);
    // A refusal after the consume says in its record what became of the approval, as its answer does.
    if (!commit.ok) return this.refuse(call, commit.denial, commit.denial.data?.['approvalId'] === undefined ? undefined : commit.denial.message);

    const executed = await execute(call, stage.execute, executor, options);
    // A call that was not handed to its tool ran nothing: the approval it used is given back first,
    // so the answer and the outcome record can say honestly what became of it (ADR 0062).
    const ran = !executed.handed && commit.used ? await this.#givenBack(call, executed, commit.used) : executed;
    if (!ran.ok && !ran.failed) return this.refuse(call, ran.denial, stoppedDetail(call, ran));
    const result = ran.ok ? checkOutput(call, stage.output, ran.output) : ran;
    const outcome = await recordOutcome(call, stage.outcome, result, ran.handed);
    return 'answer' in outcome ? outcome.answer : this.refuse(call, outcome.unaudited);
  }

  /** The execution's refusal, saying whether the approval the call used could be given back. */
  async #givenBack(call: Call, executed: Ran, used: ApprovalUse): Promise<Ran> {
    if (executed.ok) return executed;
    const fate = await giveBack(call, this.#stages.commit, used);
    return { ...executed, denial: withApprovalFate(executed.denial, used, fate) };
  }

  /** Gates 1–8 only, recording in `passed` the gates the call got through (for `explain`). */
  preflight(call: Call, passed?: Gate[]): Promise<Denial | undefined> {
    return runGates(this.#stages.preflight, call, passed);
  }

  /** The gates an approval request passes before it is counted and created. */
  screenApprovalRequest(call: Call): Promise<Denial | undefined> {
    return runGates(this.#stages.approvalRequest, call);
  }

  /** Why the call's tool could not run on this gateway (no executor for its tier), if it could not. */
  notRunnable(call: Call): Denial | undefined {
    const executor = executorFor(call, this.#wiring.executors);
    return 'execute' in executor ? undefined : executor;
  }

  /** Audits a refusal (a failing audit does not change the answer) and returns it; `detail` goes into its record. */
  async refuse(call: Call, refusal: Denial, detail?: string): Promise<InvokeResult> {
    const denial = namedAsSent(call, refusal);
    try {
      const event = denialEvent(call, this.#wiring.clock.now(), denial);
      await this.#wiring.audit.append(detail === undefined ? event : { ...event, detail });
    } catch {
      // The refusal stands either way; there is nothing safer to answer.
    }
    return { ok: false, callId: call.callId, denial, ...repairedOf(call) };
  }
}
