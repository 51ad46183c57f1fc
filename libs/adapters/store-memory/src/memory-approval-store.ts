import type {
  ApprovalDecision,
  ApprovalOutcome,
  ApprovalRecord,
  ApprovalStatus,
  ApprovalStore,
  NewApproval,
} from '@toolgate/contracts';
import {
  checkDecision,
  consumeProblem,
  decideProblem,
  requireInteger,
  requireListLimit,
  requireText,
} from '@toolgate/adapter-kit-store';
import { requireJsonObject } from './stored-json.js';

interface Entry {
  /** Insertion order, the tie-break for approvals created in the same millisecond. */
  readonly seq: number;
  record: ApprovalRecord;
}

/**
 * Approvals in a map, for tests and single-process experiments. Every method runs to completion
 * without awaiting, so each check-and-set is atomic on Node's single thread. State is lost when
 * the process exits.
 */
export class MemoryApprovalStore implements ApprovalStore {
  readonly #byTenant = new Map<string, Map<string, Entry>>();
  #seq = 0;

  async create(approval: NewApproval): Promise<ApprovalRecord> {
    const record = checkNewApproval(approval);
    const approvals = this.#tenant(record.tenant);
    if (approvals.has(record.id)) throw new Error(`approval '${record.id}' already exists`);
    approvals.set(record.id, { seq: ++this.#seq, record });
    return copy(record);
  }

  async get(tenant: string, id: string): Promise<ApprovalRecord | undefined> {
    const entry = this.#byTenant.get(tenant)?.get(id);
    return entry ? copy(entry.record) : undefined;
  }

  async list(
    tenant: string,
    filter: { readonly status?: ApprovalStatus; readonly requester?: string; readonly payloadDigest?: string; readonly limit: number },
  ): Promise<readonly ApprovalRecord[]> {
    const limit = requireListLimit(filter.limit);
    const entries = [...(this.#byTenant.get(tenant)?.values() ?? [])].filter(
      ({ record }) =>
        (filter.status === undefined || record.status === filter.status) &&
        (filter.requester === undefined || record.requester === filter.requester) &&
        (filter.payloadDigest === undefined || record.payloadDigest === filter.payloadDigest),
    );
    entries.sort((a, b) => b.record.createdAt - a.record.createdAt || b.seq - a.seq);
    return entries.slice(0, limit).map(({ record }) => copy(record));
  }

  async decide(tenant: string, id: string, decision: ApprovalDecision): Promise<ApprovalOutcome> {
    const { status, by, reason, at, selfApproved } = checkDecision(decision);
    const entry = this.#byTenant.get(tenant)?.get(id);
    if (!entry) return { ok: false, problem: 'not_found' };
    const current = entry.record;
    const problem = decideProblem(current, at);
    if (problem) return { ok: false, problem, record: copy(current) };
    entry.record = {
      ...current,
      status,
      decidedBy: by,
      decidedAt: at,
      ...(reason === undefined ? {} : { reason }),
      selfApproved,
    };
    return { ok: true, record: copy(entry.record) };
  }

  async consume(tenant: string, id: string, payloadDigest: string, now: number): Promise<ApprovalOutcome> {
    requireInteger('now', now);
    const entry = this.#byTenant.get(tenant)?.get(id);
    if (!entry) return { ok: false, problem: 'not_found' };
    const current = entry.record;
    const problem = consumeProblem(current, payloadDigest, now);
    if (problem) return { ok: false, problem, record: copy(current) };
    entry.record = { ...current, status: 'consumed', consumedAt: now };
    return { ok: true, record: copy(entry.record) };
  }

  async release(tenant: string, id: string, payloadDigest: string, consumedAt: number): Promise<boolean> {
    requireInteger('consumedAt', consumedAt);
    const entry = this.#byTenant.get(tenant)?.get(id);
    const current = entry?.record;
    if (!entry || !current || current.status !== 'consumed' || current.payloadDigest !== payloadDigest || current.consumedAt !== consumedAt) return false;
    const { consumedAt: _used, ...rest } = current;
    entry.record = { ...rest, status: 'approved' };
    return true;
  }

  #tenant(tenant: string): Map<string, Entry> {
    let approvals = this.#byTenant.get(tenant);
    if (!approvals) {
      approvals = new Map();
      this.#byTenant.set(tenant, approvals);
    }
    return approvals;
  }
}

/** Copies the fields the port defines (and nothing else) after checking what SQL would refuse. */
function checkNewApproval(approval: NewApproval): ApprovalRecord {
  return {
    id: requireText('id', approval.id),
    tenant: requireText('tenant', approval.tenant),
    requester: requireText('requester', approval.requester),
    tool: requireText('tool', approval.tool),
    version: requireText('version', approval.version),
    args: requireJsonObject('args', approval.args),
    payloadDigest: requireText('payloadDigest', approval.payloadDigest),
    status: 'pending',
    createdAt: requireInteger('createdAt', approval.createdAt),
    expiresAt: requireInteger('expiresAt', approval.expiresAt),
  };
}

/** Callers get their own copy, as they would from a database, so they cannot edit stored state. */
function copy(record: ApprovalRecord): ApprovalRecord {
  return { ...record, args: structuredClone(record.args) };
}
