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
import type { Pool } from 'pg';
import type { PgMigration } from './pg-migrations.js';

/** The schema history of the `approvals` component; append, never edit. */
export const PG_APPROVAL_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    description: 'approvals bound to a payload digest',
    up: `
      CREATE TABLE approvals (
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        tenant TEXT NOT NULL,
        id TEXT NOT NULL,
        requester TEXT NOT NULL,
        tool TEXT NOT NULL,
        version TEXT NOT NULL,
        args TEXT NOT NULL,
        payload_digest TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'consumed')),
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        decided_by TEXT,
        decided_at BIGINT,
        reason TEXT,
        self_approved BOOLEAN,
        consumed_at BIGINT,
        PRIMARY KEY (tenant, id)
      );
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
  /** BIGINT arrives as a string from `pg`. */
  created_at: string;
  expires_at: string;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  self_approved: boolean | null;
  consumed_at: string | null;
}

const COLUMNS =
  'tenant, id, requester, tool, version, args, payload_digest, status, created_at, expires_at, decided_by, decided_at, reason, self_approved, consumed_at';

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * Approvals in PostgreSQL, shared by every server process. Deciding and consuming are each one
 * conditional `UPDATE … RETURNING`: PostgreSQL re-checks the WHERE clause against the row a
 * concurrent winner committed, so of any number of processes exactly one changes it (ADR 0009).
 * A follow-up read only names why nothing changed. The schema must exist: open through
 * `PgStores.open`, which migrates it.
 */
export class PgApprovalStore implements ApprovalStore {
  constructor(private readonly pool: Pool) {}

  async create(approval: NewApproval): Promise<ApprovalRecord> {
    const values = [
      requireText('tenant', approval.tenant),
      requireText('id', approval.id),
      requireText('requester', approval.requester),
      requireText('tool', approval.tool),
      requireText('version', approval.version),
      jsonObjectText('args', approval.args),
      requireText('payloadDigest', approval.payloadDigest),
      requireInteger('createdAt', approval.createdAt),
      requireInteger('expiresAt', approval.expiresAt),
    ];
    try {
      const { rows } = await this.pool.query<ApprovalRow>(
        `INSERT INTO approvals (tenant, id, requester, tool, version, args, payload_digest, status, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9)
         RETURNING ${COLUMNS}`,
        values,
      );
      return toRecord(only(rows));
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new Error(`approval '${approval.id}' already exists`);
      throw error;
    }
  }

  async get(tenant: string, id: string): Promise<ApprovalRecord | undefined> {
    if (!isStorableText(tenant) || !isStorableText(id)) return undefined;
    const { rows } = await this.pool.query<ApprovalRow>(`SELECT ${COLUMNS} FROM approvals WHERE tenant = $1 AND id = $2`, [tenant, id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async list(
    tenant: string,
    filter: { readonly status?: ApprovalStatus; readonly requester?: string; readonly payloadDigest?: string; readonly limit: number },
  ): Promise<readonly ApprovalRecord[]> {
    requireListLimit(filter.limit);
    const values: unknown[] = [tenant];
    const where = ['tenant = $1'];
    // Only fixed column names reach the SQL text; every value is a bound parameter.
    const conditions: [string, string | undefined][] = [
      ['status', filter.status],
      ['requester', filter.requester],
      ['payload_digest', filter.payloadDigest],
    ];
    for (const [column, value] of conditions) {
      if (value === undefined) continue;
      values.push(value);
      where.push(`${column} = $${values.length}`);
    }
    if (values.some((value) => !isStorableText(value))) return [];
    values.push(filter.limit);
    const { rows } = await this.pool.query<ApprovalRow>(
      `SELECT ${COLUMNS} FROM approvals WHERE ${where.join(' AND ')} ORDER BY created_at DESC, seq DESC LIMIT $${values.length}`,
      values,
    );
    return rows.map(toRecord);
  }

  async decide(tenant: string, id: string, decision: ApprovalDecision): Promise<ApprovalOutcome> {
    const { status, by, reason, at, selfApproved } = checkDecision(decision);
    if (!isStorableText(tenant) || !isStorableText(id)) return { ok: false, problem: 'not_found' };
    const { rows } = await this.pool.query<ApprovalRow>(
      `UPDATE approvals
          SET status = $3, decided_by = $4, decided_at = $5, reason = $6, self_approved = $7
        WHERE tenant = $1 AND id = $2 AND status = 'pending' AND expires_at > $5
       RETURNING ${COLUMNS}`,
      [tenant, id, status, by, at, reason ?? null, selfApproved],
    );
    if (rows[0]) return { ok: true, record: toRecord(rows[0]) };
    // Decidable now means the row was created after the UPDATE looked; reported as expired.
    return this.#refusal(tenant, id, (record) => decideProblem(record, at) ?? 'expired');
  }

  async consume(tenant: string, id: string, payloadDigest: string, now: number): Promise<ApprovalOutcome> {
    requireInteger('now', now);
    if (!isStorableText(tenant) || !isStorableText(id)) return { ok: false, problem: 'not_found' };
    if (isStorableText(payloadDigest)) {
      const { rows } = await this.pool.query<ApprovalRow>(
        `UPDATE approvals
            SET status = 'consumed', consumed_at = $4
          WHERE tenant = $1 AND id = $2 AND status = 'approved' AND payload_digest = $3 AND expires_at > $4
         RETURNING ${COLUMNS}`,
        [tenant, id, payloadDigest, now],
      );
      if (rows[0]) return { ok: true, record: toRecord(rows[0]) };
    }
    // Consumable now means the row was approved after the UPDATE looked; reported as a mismatch.
    return this.#refusal(tenant, id, (record) => consumeProblem(record, payloadDigest, now) ?? 'payload_mismatch');
  }

  async release(tenant: string, id: string, payloadDigest: string, consumedAt: number): Promise<boolean> {
    requireInteger('consumedAt', consumedAt);
    if (!isStorableText(tenant) || !isStorableText(id) || !isStorableText(payloadDigest)) return false;
    const { rowCount } = await this.pool.query(
      `UPDATE approvals
          SET status = 'approved', consumed_at = NULL
        WHERE tenant = $1 AND id = $2 AND status = 'consumed' AND payload_digest = $3 AND consumed_at = $4`,
      [tenant, id, payloadDigest, consumedAt],
    );
    return rowCount === 1;
  }

  /** Names why a conditional update changed nothing, from the row as it is now. */
  async #refusal(tenant: string, id: string, problemOf: (record: ApprovalRecord) => ApprovalProblem): Promise<ApprovalOutcome> {
    const record = await this.get(tenant, id);
    return record ? { ok: false, problem: problemOf(record), record } : { ok: false, problem: 'not_found' };
  }
}

function only(rows: ApprovalRow[]): ApprovalRow {
  const [row] = rows;
  if (!row) throw new Error('the approval insert returned no row');
  return row;
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
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    ...(row.decided_by === null ? {} : { decidedBy: row.decided_by }),
    ...(row.decided_at === null ? {} : { decidedAt: Number(row.decided_at) }),
    ...(row.reason === null ? {} : { reason: row.reason }),
    ...(row.self_approved === null ? {} : { selfApproved: row.self_approved }),
    ...(row.consumed_at === null ? {} : { consumedAt: Number(row.consumed_at) }),
  };
}
