import type {
  ApprovalDecision,
  ApprovalOutcome,
  ApprovalProblem,
  ApprovalRecord,
  ApprovalStatus,
  ApprovalStore,
  JsonObject,
  NewApproval,
} from '@toolgate/contracts';
import {
  checkDecision,
  consumeProblem,
  decideProblem,
  isStorableText,
  jsonObjectText,
  requireInteger,
  requireListLimit,
  requireText,
} from '@toolgate/adapter-kit-store';
import type Database from 'better-sqlite3';
import { migrateSqlite, type SqliteMigration } from './sqlite-migrations.js';

/** The schema history of the `approvals` component; append, never edit. */
export const APPROVAL_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    description: 'approvals bound to a payload digest',
    up: `
      CREATE TABLE approvals (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant TEXT NOT NULL,
        id TEXT NOT NULL,
        requester TEXT NOT NULL,
        tool TEXT NOT NULL,
        version TEXT NOT NULL,
        args TEXT NOT NULL,
        payload_digest TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'consumed')),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        decided_by TEXT,
        decided_at INTEGER,
        reason TEXT,
        self_approved INTEGER CHECK (self_approved IN (0, 1)),
        consumed_at INTEGER,
        UNIQUE (tenant, id)
      ) STRICT;
      CREATE INDEX approvals_newest ON approvals (tenant, created_at DESC, seq DESC);
      CREATE INDEX approvals_by_digest ON approvals (tenant, payload_digest);
    `,
  },
];

interface ApprovalRow {
  tenant: string;
  id: string;
  requester: string;
  tool: string;
  version: string;
  args: string;
  payload_digest: string;
  status: ApprovalStatus;
  created_at: number;
  expires_at: number;
  decided_by: string | null;
  decided_at: number | null;
  reason: string | null;
  self_approved: number | null;
  consumed_at: number | null;
}

const COLUMNS =
  'tenant, id, requester, tool, version, args, payload_digest, status, created_at, expires_at, decided_by, decided_at, reason, self_approved, consumed_at';

/**
 * Approvals in SQLite. Deciding and consuming are each one conditional `UPDATE … RETURNING`, so
 * the check and the change cannot be separated, whether the competitor is this connection or
 * another process on the same file (ADR 0009). A follow-up read only names why nothing changed.
 */
export class SqliteApprovalStore implements ApprovalStore {
  readonly #insert: Database.Statement<[Record<string, unknown>]>;
  readonly #get: Database.Statement<[string, string], ApprovalRow>;
  readonly #decide: Database.Statement<[Record<string, unknown>], ApprovalRow>;
  readonly #consume: Database.Statement<[Record<string, unknown>], ApprovalRow>;
  readonly #release: Database.Statement<[Record<string, unknown>]>;
  readonly #db: Database.Database;

  constructor(db: Database.Database) {
    migrateSqlite(db, 'approvals', APPROVAL_MIGRATIONS);
    this.#db = db;
    this.#insert = db.prepare(`
      INSERT INTO approvals (tenant, id, requester, tool, version, args, payload_digest, status, created_at, expires_at)
      VALUES (@tenant, @id, @requester, @tool, @version, @args, @payloadDigest, 'pending', @createdAt, @expiresAt)`);
    this.#get = db.prepare(`SELECT ${COLUMNS} FROM approvals WHERE tenant = ? AND id = ?`);
    this.#decide = db.prepare(`
      UPDATE approvals
         SET status = @status, decided_by = @by, decided_at = @at, reason = @reason, self_approved = @selfApproved
       WHERE tenant = @tenant AND id = @id AND status = 'pending' AND expires_at > @at
      RETURNING ${COLUMNS}`);
    this.#consume = db.prepare(`
      UPDATE approvals
         SET status = 'consumed', consumed_at = @now
       WHERE tenant = @tenant AND id = @id AND status = 'approved' AND payload_digest = @digest AND expires_at > @now
      RETURNING ${COLUMNS}`);
    this.#release = db.prepare(`
      UPDATE approvals
         SET status = 'approved', consumed_at = NULL
       WHERE tenant = @tenant AND id = @id AND status = 'consumed' AND payload_digest = @digest AND consumed_at = @consumedAt`);
  }

  async create(approval: NewApproval): Promise<ApprovalRecord> {
    const row = {
      tenant: requireText('tenant', approval.tenant),
      id: requireText('id', approval.id),
      requester: requireText('requester', approval.requester),
      tool: requireText('tool', approval.tool),
      version: requireText('version', approval.version),
      args: jsonObjectText('args', approval.args),
      payloadDigest: requireText('payloadDigest', approval.payloadDigest),
      createdAt: requireInteger('createdAt', approval.createdAt),
      expiresAt: requireInteger('expiresAt', approval.expiresAt),
    };
    try {
      this.#insert.run(row);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new Error(`approval '${row.id}' already exists`);
      throw error;
    }
    const stored = this.#get.get(row.tenant, row.id);
    if (!stored) throw new Error(`approval '${row.id}' vanished right after it was created`);
    return toRecord(stored);
  }

  async get(tenant: string, id: string): Promise<ApprovalRecord | undefined> {
    return this.#read(tenant, id);
  }

  async list(
    tenant: string,
    filter: { readonly status?: ApprovalStatus; readonly requester?: string; readonly payloadDigest?: string; readonly limit: number },
  ): Promise<readonly ApprovalRecord[]> {
    requireListLimit(filter.limit);
    const texts = [tenant, filter.status, filter.requester, filter.payloadDigest].filter((v) => v !== undefined);
    if (!texts.every(isStorableText)) return [];
    const where = ['tenant = @tenant'];
    if (filter.status !== undefined) where.push('status = @status');
    if (filter.requester !== undefined) where.push('requester = @requester');
    if (filter.payloadDigest !== undefined) where.push('payload_digest = @payloadDigest');
    // Only fixed column names reach the SQL text; every value is a bound parameter.
    const rows = this.#db
      .prepare<[Record<string, unknown>], ApprovalRow>(
        `SELECT ${COLUMNS} FROM approvals WHERE ${where.join(' AND ')} ORDER BY created_at DESC, seq DESC LIMIT @limit`,
      )
      .all({ tenant, status: filter.status, requester: filter.requester, payloadDigest: filter.payloadDigest, limit: filter.limit });
    return rows.map(toRecord);
  }

  async decide(tenant: string, id: string, decision: ApprovalDecision): Promise<ApprovalOutcome> {
    const { status, by, reason, at, selfApproved } = checkDecision(decision);
    if (!isStorableText(tenant) || !isStorableText(id)) return { ok: false, problem: 'not_found' };
    const row = this.#decide.get({ tenant, id, status, by, reason: reason ?? null, selfApproved: selfApproved ? 1 : 0, at });
    if (row) return { ok: true, record: toRecord(row) };
    // Decidable now means the row was created after the UPDATE looked; reported as expired.
    return this.#refusal(tenant, id, (record) => decideProblem(record, at) ?? 'expired');
  }

  async consume(tenant: string, id: string, payloadDigest: string, now: number): Promise<ApprovalOutcome> {
    requireInteger('now', now);
    if (!isStorableText(tenant) || !isStorableText(id)) return { ok: false, problem: 'not_found' };
    const row = isStorableText(payloadDigest) ? this.#consume.get({ tenant, id, digest: payloadDigest, now }) : undefined;
    if (row) return { ok: true, record: toRecord(row) };
    // Consumable now means the row was approved after the UPDATE looked; reported as a mismatch.
    return this.#refusal(tenant, id, (record) => consumeProblem(record, payloadDigest, now) ?? 'payload_mismatch');
  }

  async release(tenant: string, id: string, payloadDigest: string, consumedAt: number): Promise<boolean> {
    requireInteger('consumedAt', consumedAt);
    if (!isStorableText(tenant) || !isStorableText(id) || !isStorableText(payloadDigest)) return false;
    return this.#release.run({ tenant, id, digest: payloadDigest, consumedAt }).changes === 1;
  }

  #read(tenant: string, id: string): ApprovalRecord | undefined {
    if (!isStorableText(tenant) || !isStorableText(id)) return undefined;
    const row = this.#get.get(tenant, id);
    return row ? toRecord(row) : undefined;
  }

  /** Names why a conditional update changed nothing, from the row as it is now. */
  #refusal(tenant: string, id: string, problemOf: (record: ApprovalRecord) => ApprovalProblem): ApprovalOutcome {
    const record = this.#read(tenant, id);
    return record ? { ok: false, problem: problemOf(record), record } : { ok: false, problem: 'not_found' };
  }
}

function toRecord(row: ApprovalRow): ApprovalRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    requester: row.requester,
    tool: row.tool,
    version: row.version,
    args: JSON.parse(row.args) as JsonObject,
    payloadDigest: row.payload_digest,
    status: row.status,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    ...(row.decided_by === null ? {} : { decidedBy: row.decided_by }),
    ...(row.decided_at === null ? {} : { decidedAt: row.decided_at }),
    ...(row.reason === null ? {} : { reason: row.reason }),
    ...(row.self_approved === null ? {} : { selfApproved: row.self_approved === 1 }),
    ...(row.consumed_at === null ? {} : { consumedAt: row.consumed_at }),
  };
}
