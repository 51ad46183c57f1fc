import {
  redactSecrets,
  type ApprovalOutcome,
  type ApprovalRecord,
  type ApprovalStatus,
  type ApprovalStore,
  type AuditEvent,
  type AuditReceipt,
  type AuditSink,
  type Clock,
  type Denial,
  type DenialCode,
  type JsonObject,
  type NewApproval,
  type Principal,
  type PrincipalDirectory,
  type TenantWorkspaces,
} from '@toolgate/contracts';
import { approvalDecidedEvent, approvalNotAppliedEvent, approvalRequestedEvent, denialEvent, type ApprovalVerdict } from '../audit/audit-events.js';
import { payloadDigestOf } from '../audit/call-digests.js';
import { newCall, toolOf, type Call } from '../call.js';
import { deny } from '../denials/deny.js';
import { GatewayError } from '../denials/gateway-error.js';
import { stateUnavailable } from '../denials/state-unavailable.js';
import { hiddenCharacters } from './hidden-characters.js';
import { APPROVAL_FILES_NOTE, digestNamedFiles, namedPaths, ReadBudget, type NamedFile } from './named-files.js';
import { fromStore, holds, requireRole } from './roles.js';

const DEFAULT_LIST_LIMIT = 50;
const MAX_LIST_LIMIT = 500;
const MAX_REASON_LENGTH = 500;
/** The longest approval id looked up; ids the desk makes are far shorter, and the API bounds them alike. */
const MAX_ID_LENGTH = 128;
const STATUSES: readonly ApprovalStatus[] = ['pending', 'approved', 'denied', 'consumed'];

/**
 * Undecided, unexpired requests one principal may have at once. Each is a human's time: beyond
 * this, a principal (or an agent in a loop) is asked to wait for decisions instead of queueing more.
 */
export const MAX_PENDING_APPROVALS_PER_PRINCIPAL = 20;

/**
 * An approval as shown to people: the record, what it does not bind, and for `bash` and `git` the
 * workspace files its arguments name with their SHA-256 as they are now (read when shown).
 */
export interface ApprovalView extends ApprovalRecord {
  /** Always `APPROVAL_FILES_NOTE`: the approval binds the arguments, not the files they name. */
  readonly note: string;
  /** Present for `bash`/`git` approvals still pending or approved whose arguments name workspace files. */
  readonly namedFiles?: readonly NamedFile[];
  /**
   * Present when the arguments hold characters that do not show as themselves (controls, bidi and
   * other format characters, fillers): where each is, e.g. `U+2067 at args.command:18`.
   */
  readonly hidden?: readonly string[];
  /** Beside `hidden`: the arguments with those characters written as `\u{XXXX}`, for reading only. */
  readonly argsDisplay?: JsonObject;
}

/** How much of an approval a read builds. */
export interface ApprovalReadOptions {
  /**
   * `false` skips reading and hashing the workspace files a `bash`/`git` approval names (up to
   * 16 files, 64 MiB): for a caller that only needs the status, e.g. a held MCP call polling once a
   * second. Default `true`, as a person reading the approval needs them.
   */
  readonly namedFiles?: boolean;
}

/**
 * The result of asking for an approval: the pending record, or why it cannot be asked for. A
 * refusal carries the `callId` of its `denied` audit record (absent only where the gateway failed
 * before the request was a call).
 */
export type ApprovalRequestResult =
  | { readonly ok: true; readonly approval: ApprovalView }
  | { readonly ok: false; readonly denial: Denial; readonly callId?: string };

/** What a refused decision records as its gate and code: the API's error code has no DenialCode. */
const DECISION_REFUSALS: Readonly<Record<string, DenialCode>> = {
  FORBIDDEN: 'PERMISSION_NOT_GRANTED',
  NOT_FOUND: 'INVALID_INPUT',
  INVALID: 'INVALID_INPUT',
  CONFLICT: 'INVALID_INPUT',
};

/** The `detail` of the `denied` record of a refused approval request (docs/audit-format.md §3.1). */
export const APPROVAL_REQUEST_REFUSED = 'approval request refused';

/** What the approval desk uses: the approvals themselves, the trail, and what a request is checked against. */
export interface ApprovalDeskNeeds {
  readonly approvals: ApprovalStore;
  readonly audit: Pick<AuditSink, 'append'>;
  readonly clock: Clock;
  /** For the tenant's self-approval policy. */
  readonly directory: Pick<PrincipalDirectory, 'tenant'>;
  /** Where the files a `bash`/`git` approval names are read from, to show their digests. */
  readonly workspaces: Pick<TenantWorkspaces, 'prepare'>;
  readonly newId: () => string;
  readonly approvalTtlMs: number;
  /** The gates a request must pass (lookup, allow, budget, size, input), composed by the pipeline. */
  readonly screen: (call: Call) => Promise<Denial | undefined>;
}

/**
 * Approval requests and decisions. A request goes through lookup, allow, size and input, so
 * the digest an approver signs off is over the repaired arguments a call will actually carry.
 * Deciding is for the tenant's approvers; the requester may decide its own request only where
 * the tenant's policy allows self-approval, and that decision is marked as such.
 *
 * Both are audited before they take effect (ADR 0020): if the trail cannot record a request or a
 * decision, it is refused and nothing changes, so no approval is created or becomes usable
 * without a record of who asked for it and who decided it.
 */
export class ApprovalDesk {
  /** Per principal, the request being checked and created: the pending cap holds in this process. */
  readonly #requesting = new Map<string, Promise<unknown>>();

  constructor(private readonly needs: ApprovalDeskNeeds) {}

  async request(principal: Principal, request: { tool: string; version?: string; args: JsonObject }): Promise<ApprovalRequestResult> {
    const { clock, newId, screen } = this.needs;
    const call = newCall(newId(), 'approval-request', principal, { tool: request.tool, ...(request.version === undefined ? {} : { version: request.version }), args: request.args }, clock.now());
    const refused = await screen(call);
    if (refused) return this.#refuse(call, refused);
    const manifest = toolOf(call).manifest;
    if (manifest.risk !== 'high' && manifest.risk !== 'critical') {
      call.gate = 'approval';
      return this.#refuse(call, deny('approval', 'INVALID_INPUT', `'${manifest.name}' is ${manifest.risk} risk and needs no approval.`, 'Call it directly with tools.invoke.'));
    }
    // Counting and creating one at a time per principal, so concurrent requests cannot all pass
    // the count. (Across server processes the cap can be exceeded by one request per process.)
    const result = await this.#oneAtATime(`${principal.tenant}\u0000${principal.id}`, () => this.#create(principal, call));
    // A store that failed after the request was recorded already has its follow-up record.
    if (result.ok || result.recorded) return result.ok ? result : { ok: false, denial: result.denial, callId: call.callId };
    return this.#refuse(call, result.denial);
  }

  /**
   * Records a refused request as `denied` (DESIGN §3: every denial is audited with its gate and
   * code) with the digest of its arguments if they were accepted. Best effort, as the pipeline's
   * refusals are: the request is refused whether or not the record could be written.
   */
  async #refuse(call: Call, denial: Denial): Promise<ApprovalRequestResult> {
    await this.#followUp({ ...denialEvent(call, this.needs.clock.now(), denial), detail: APPROVAL_REQUEST_REFUSED });
    return { ok: false, denial, callId: call.callId };
  }

  async #create(principal: Principal, call: Call): Promise<{ ok: true; approval: ApprovalView } | { ok: false; denial: Denial; recorded?: true }> {
    const { approvals, audit, clock, newId, approvalTtlMs } = this.needs;
    const manifest = toolOf(call).manifest;
    const now = clock.now();
    const digest = payloadDigestOf(call);
    let open: readonly ApprovalRecord[];
    try {
      const records = await approvals.list(principal.tenant, { status: 'pending', requester: principal.id, limit: MAX_PENDING_APPROVALS_PER_PRINCIPAL });
      // Newest first with one TTL for all: if the newest are expired, so is everything older.
      open = records.filter((r) => r.tenant === principal.tenant && r.requester === principal.id && r.expiresAt > now);
    } catch {
      return { ok: false, denial: stateUnavailable('approval') };
    }
    // The same payload already waiting (two concurrent first calls, an agent asking twice): one
    // request for approvers to decide, not duplicates that each count against the cap. Its
    // `approval_requested` record already says who asked for it; reusing it changes nothing.
    const same = open.find((r) => r.payloadDigest === digest && r.tool === manifest.name && r.version === manifest.version);
    if (same) return { ok: true, approval: await this.#view(same, new ReadBudget()) };
    const pending = open.length;
    if (pending >= MAX_PENDING_APPROVALS_PER_PRINCIPAL) {
      return {
        ok: false,
        denial: deny(
          'approval',
          'BUDGET_EXHAUSTED',
          `You have ${pending} approval requests waiting for a decision; at most ${MAX_PENDING_APPROVALS_PER_PRINCIPAL} may wait at once.`,
          'Wait for an approver to decide them (approvals.list shows them) or for them to expire, then ask again.',
          { pending, limit: MAX_PENDING_APPROVALS_PER_PRINCIPAL },
        ),
      };
    }
    const approval: NewApproval = {
      id: newId(),
      tenant: principal.tenant,
      requester: principal.id,
      tool: manifest.name,
      version: manifest.version,
      args: call.args,
      payloadDigest: digest,
      createdAt: now,
      expiresAt: now + approvalTtlMs,
    };
    let receipt: AuditReceipt;
    try {
      receipt = await audit.append(approvalRequestedEvent(approval, call.repaired.map((r) => r.detail), now));
    } catch {
      return {
        ok: false,
        denial: deny('audit', 'AUDIT_UNAVAILABLE', 'The audit trail cannot record this approval request, so it was not created.', 'Try again later; an operator can check the audit sink with health.'),
      };
    }
    let created: ApprovalRecord;
    try {
      created = await approvals.create(approval);
    } catch {
      // The store may or may not have kept it; the trail must not claim either.
      await this.#followUp(approvalRequestedEvent(approval, [], clock.now(), `outcome unknown: the approval store failed (the request recorded at seq ${receipt.seq})`));
      return { ok: false, denial: stateUnavailable('approval'), recorded: true };
    }
    return { ok: true, approval: await this.#view(created, new ReadBudget()) };
  }

  async list(principal: Principal, filter: { status?: ApprovalStatus; limit?: number } = {}): Promise<readonly ApprovalView[]> {
    if (filter.status !== undefined && !STATUSES.includes(filter.status)) {
      throw new GatewayError('INVALID', `status must be one of ${STATUSES.join(', ')}`);
    }
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw new GatewayError('INVALID', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`);
    const everyone = holds(principal, 'approver') || holds(principal, 'operator');
    const records = await fromStore('list approvals', () =>
      this.needs.approvals.list(principal.tenant, {
        limit,
        ...(filter.status === undefined ? {} : { status: filter.status }),
        ...(everyone ? {} : { requester: principal.id }),
      }),
    );
    // The store is tenant-scoped; this filter is the second lock on the same door.
    const visible = records.filter((r) => r.tenant === principal.tenant && (everyone || r.requester === principal.id));
    const budget = new ReadBudget();
    const views: ApprovalView[] = [];
    // One after another: the shared budget bounds what one listing reads, in order of the list.
    for (const record of visible) views.push(await this.#view(record, budget));
    return views;
  }

  /**
   * One approval by id, with the visibility of `list`: approvers and operators see any of their
   * tenant's, everyone else only their own requests. Another tenant's id, or someone else's to a
   * requester, is `undefined`, exactly as an id that does not exist, so its existence does not leak.
   */
  async get(principal: Principal, id: string, options: ApprovalReadOptions = {}): Promise<ApprovalView | undefined> {
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
      throw new GatewayError('INVALID', `id must be a string of 1 to ${MAX_ID_LENGTH} characters`);
    }
    const everyone = holds(principal, 'approver') || holds(principal, 'operator');
    const record = await fromStore('read the approval', () => this.needs.approvals.get(principal.tenant, id));
    // The store is tenant-scoped; this check is the second lock on the same door, as in `list`.
    if (!record || record.tenant !== principal.tenant || (!everyone && record.requester !== principal.id)) return undefined;
    return this.#view(record, new ReadBudget(), options.namedFiles ?? true);
  }

  /** The record with its note, its hidden characters if any, and the digests of workspace files it names. */
  async #view(record: ApprovalRecord, budget: ReadBudget, namedFiles = true): Promise<ApprovalView> {
    // What an approver reads must be what runs: hidden characters are pointed out beside the exact args.
    const view = { ...record, note: APPROVAL_FILES_NOTE, ...hiddenCharacters(record.args) };
    if (!namedFiles || (record.status !== 'pending' && record.status !== 'approved')) return view;
    const paths = namedPaths(record.tool, record.args);
    if (paths.length === 0) return view;
    try {
      const workspace = await this.needs.workspaces.prepare(record.tenant);
      const namedFiles = await digestNamedFiles(workspace, paths, budget);
      return namedFiles.length === 0 ? view : { ...view, namedFiles };
    } catch {
      // Showing digests is a courtesy to the approver; without a workspace there is nothing to show.
      return view;
    }
  }

  async decide(principal: Principal, id: string, decision: { approve: boolean; reason?: string }): Promise<ApprovalRecord> {
    const { approvals, audit, clock } = this.needs;
    const now = clock.now();
    let record: ApprovalRecord;
    let self: boolean;
    try {
      ({ record, self } = await this.#decidable(principal, id, decision, now));
    } catch (error) {
      await this.#refuseDecision(principal, id, error, now);
      throw error;
    }
    const verdict: ApprovalVerdict = { approve: decision.approve, by: principal.id, self, ...(decision.reason === undefined ? {} : { reason: decision.reason }) };
    // The record of the decision comes first: a decision the trail cannot show never takes effect.
    let receipt: AuditReceipt;
    try {
      receipt = await audit.append(approvalDecidedEvent(record, verdict, now));
    } catch {
      throw new GatewayError('UNAVAILABLE', `The audit trail cannot record this decision, so approval '${record.id}' was not decided and is still pending; try again later.`);
    }
    let outcome: ApprovalOutcome;
    try {
      outcome = await approvals.decide(principal.tenant, record.id, {
        approve: decision.approve,
        by: principal.id,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
        selfApproved: self,
        at: now,
      });
    } catch {
      await this.#followUp(approvalNotAppliedEvent(record, principal.id, clock.now(), `outcome unknown: the approval store failed (the decision recorded at seq ${receipt.seq})`));
      throw new GatewayError('UNAVAILABLE', 'The gateway could not record the decision (its state is unavailable); try again later.');
    }
    if (outcome.ok) return outcome.record;
    // Another decision won the race (or the approval expired or vanished) after the intent was recorded.
    const problem = outcome.problem.replaceAll('_', ' ');
    // Naming the intent's seq ties this record to that one decision, even among concurrent ones.
    await this.#followUp(approvalNotAppliedEvent(record, principal.id, clock.now(), `not applied: ${problem} (the decision recorded at seq ${receipt.seq})`));
    if (outcome.problem === 'not_found') throw new GatewayError('NOT_FOUND', `There is no approval '${record.id}' in your tenant.`);
    throw new GatewayError('CONFLICT', `Approval '${record.id}' can no longer be decided (${problem}).`);
  }

  /** The checks a decision must pass before its intent is recorded; each throws the caller's error. */
  async #decidable(principal: Principal, id: string, decision: { approve: boolean; reason?: string }, now: number): Promise<{ record: ApprovalRecord; self: boolean }> {
    requireRole(principal, 'approver', 'decide approval requests');
    if (typeof decision?.approve !== 'boolean') throw new GatewayError('INVALID', 'approve must be true or false');
    if (decision.reason !== undefined && (typeof decision.reason !== 'string' || decision.reason.length > MAX_REASON_LENGTH)) {
      throw new GatewayError('INVALID', `reason must be a string of at most ${MAX_REASON_LENGTH} characters`);
    }
    const { approvals, directory } = this.needs;
    const record = await fromStore('read the approval', () => approvals.get(principal.tenant, id));
    // Redacted before it is cut: a cut secret may no longer match a redaction rule.
    if (!record || record.tenant !== principal.tenant) throw new GatewayError('NOT_FOUND', `There is no approval '${redactSecrets(String(id)).slice(0, 64)}' in your tenant.`);
    const self = record.requester === principal.id;
    if (self && directory.tenant(principal.tenant)?.selfApproval !== true) {
      throw new GatewayError('FORBIDDEN', `You requested approval '${record.id}' yourself, and tenant '${principal.tenant}' does not allow self-approval; another approver must decide it.`);
    }
    if (record.status !== 'pending') throw new GatewayError('CONFLICT', `Approval '${record.id}' was already decided (${record.status}).`);
    if (now >= record.expiresAt) throw new GatewayError('CONFLICT', `Approval '${record.id}' expired at ${new Date(record.expiresAt).toISOString()}; ask for a new request.`);
    return { record, self };
  }

  /**
   * Records a refused decision as `denied` at the approval gate, naming the approval asked for
   * (only ids within the caller's tenant are ever looked up, so nothing of another tenant's is
   * recorded) and the API's error code in `detail`. Best effort: the refusal stands either way.
   */
  async #refuseDecision(principal: Principal, id: string, error: unknown, now: number): Promise<void> {
    const code = error instanceof GatewayError ? error.code : 'UNAVAILABLE';
    // The gateway's own sentence (it names no host path); redacted because it quotes the caller's id.
    const why = error instanceof GatewayError ? `${code}: ${redactSecrets(error.message)}` : code;
    await this.#followUp({
      event: 'denied',
      ts: new Date(now).toISOString(),
      tenant: principal.tenant,
      principal: principal.id,
      gate: 'approval',
      code: DECISION_REFUSALS[code] ?? 'STATE_UNAVAILABLE',
      detail: `approval decision refused: ${why}`.slice(0, 400),
      approvalId: redactSecrets(String(id)).slice(0, 128),
    });
  }

  /** Runs `work` after every earlier one of the same key has settled, whatever their outcome. */
  async #oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.#requesting.get(key) ?? Promise.resolve();
    const mine = before.then(work, work);
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    this.#requesting.set(key, settled);
    try {
      return await mine;
    } finally {
      // The last in line cleans up, so the map holds only principals with a request in flight.
      if (this.#requesting.get(key) === settled) this.#requesting.delete(key);
    }
  }

  /**
   * Records that an audited request or decision did not (or may not) take effect. Best effort:
   * the caller is refused either way, and the earlier record already shows the attempt, so
   * nothing the store may have kept is unrecorded.
   */
  async #followUp(event: AuditEvent): Promise<void> {
    try {
      await this.needs.audit.append(event);
    } catch {
      // The refusal stands; there is nothing safer to answer.
    }
  }
}
