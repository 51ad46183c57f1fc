import {
  AuditCorruptError,
  AuditUnavailableError,
  type AuditEvent,
  type AuditQuery,
  type AuditReceipt,
  type AuditRecord,
  type AuditReport,
  type AuditSink,
} from '@toolgate/contracts';
import pg from 'pg';
import {
  chainPrefix,
  createFrameDigester,
  decodeFrameJson,
  encodePrepared,
  GENESIS_DIGEST,
  GroupCommitQueue,
  type EncodedFrame,
  type FrameDigester,
} from '@toolgate/adapter-kit-audit';
import { FRAMES_TABLE, HEAD_TABLE, migrateAuditSchema } from './pg-audit-schema.js';

/** Options of `PgAuditSink.open`. */
export interface PgAuditSinkOptions {
  /**
   * Key for HMAC-SHA-256 frame digests (a string is used as its UTF-8 bytes; at least 16 bytes).
   * Every process sharing the database must use the same key; the first one fixes it.
   */
  readonly hmacKey?: string | Uint8Array;
  /** Most events committed in one transaction. Default 500. */
  readonly maxBatchFrames?: number;
  /** Connections of this process's pool. Default 4. */
  readonly poolSize?: number;
  /** Verify the whole chain before accepting appends (default true; the gateway fails closed on damage). */
  readonly verifyOnOpen?: boolean;
}

/** `tail` never returns more than this many records in one page. */
export const MAX_TAIL_LIMIT = 10_000;
/** Where faults are reported: the table plays the part of a segment. */
const SEGMENT = FRAMES_TABLE;
const VERIFY_PAGE = 2000;

interface FrameRow {
  seq: string;
  prev: string;
  digest: string;
  tenant: string | null;
  principal: string | null;
  frame: string;
}

/** A pg error's message without anything from the connection string (it never holds one). */
function pgText(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return `${e.message ?? String(error)}${e.code ? ` [${e.code}]` : ''}`;
}

/**
 * The audit sink for several server processes: the same hash chain as the file sink, one row per
 * frame, in PostgreSQL. Each append runs in a transaction that locks the one-row chain head
 * `FOR UPDATE`, so writers in any number of processes produce one gap-free chain; within a
 * process, concurrent appends are group-committed into one transaction. An append resolves only
 * after COMMIT, i.e. once PostgreSQL has made it durable.
 */
export class PgAuditSink implements AuditSink {
  private readonly appends: GroupCommitQueue;
  private lastError: string | undefined;
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly digester: FrameDigester,
    maxBatchFrames: number,
  ) {
    this.appends = new GroupCommitQueue({
      maxBatch: maxBatchFrames,
      commit: async (batch) => {
        const receipts = await this.commit(batch.map((p) => p.event));
        this.lastError = undefined;
        batch.forEach((pending, i) => pending.resolve(receipts[i] as AuditReceipt));
      },
      onCommitError: (batch, error) => {
        if (error instanceof AuditUnavailableError || error instanceof AuditCorruptError) {
          for (const pending of batch) pending.reject(error);
          return;
        }
        // The transaction was rolled back (or its COMMIT is in doubt): nobody is acknowledged.
        this.lastError = `the audit record could not be stored in PostgreSQL (${pgText(error)})`;
        for (const pending of batch) pending.reject(new AuditUnavailableError(this.lastError));
      },
    });
  }

  /**
   * Connects, migrates the schema, fixes (or checks) the chain's digest algorithm and key id,
   * and by default verifies the whole chain. Rejects with `AuditCorruptError` when the chain is
   * damaged and `AuditUnavailableError` when the database cannot be used or the key does not fit.
   */
  static async open(databaseUrl: string, options: PgAuditSinkOptions = {}): Promise<PgAuditSink> {
    const maxBatchFrames = options.maxBatchFrames ?? 500;
    if (!Number.isInteger(maxBatchFrames) || maxBatchFrames < 1) throw new RangeError('maxBatchFrames must be a positive integer');
    const digester = createFrameDigester(options.hmacKey);
    const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 4, connectionTimeoutMillis: 10_000 });
    const sink = new PgAuditSink(pool, digester, maxBatchFrames);
    // An idle connection that dies must not crash the process; the next query reconnects.
    pool.on('error', (error) => {
      sink.lastError = `PostgreSQL connection lost (${pgText(error)})`;
    });
    try {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw new AuditUnavailableError(`the PostgreSQL audit store cannot be reached (${pgText(error)})`);
      }
      try {
        await migrateAuditSchema(client);
        await client.query(
          `INSERT INTO ${HEAD_TABLE} (id, seq, digest, alg, key_id) VALUES (1, 0, $1, $2, $3) ON CONFLICT (id) DO NOTHING`,
          [GENESIS_DIGEST, digester.algorithm, digester.keyId ?? null],
        );
        const { rows } = await client.query<{ alg: string; key_id: string | null }>(`SELECT alg, key_id FROM ${HEAD_TABLE} WHERE id = 1`);
        const head = rows[0];
        const mismatch = head ? keyMismatch(head.alg, head.key_id, digester) : 'the chain head row is missing';
        if (mismatch) throw new AuditUnavailableError(mismatch);
      } finally {
        client.release();
      }
      if (options.verifyOnOpen ?? true) {
        const report = await sink.verify();
        if (!report.ok) throw new AuditCorruptError(report);
      }
      return sink;
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  append(event: AuditEvent): Promise<AuditReceipt> {
    if (this.closed) return Promise.reject(new AuditUnavailableError('the audit sink is closed'));
    return this.appends.enqueue(event);
  }

  /**
   * Verifies the whole chain in one consistent snapshot: every frame's digest, seq without gaps,
   * `prev` links, the index columns against their frame, and the head row against the last frame.
   */
  async verify(): Promise<AuditReport> {
    if (this.closed) throw new AuditUnavailableError('the audit sink is closed');
    const client = await this.connect();
    let records = 0;
    const fault = (reason: string, seq?: number): AuditReport => ({
      ok: false,
      records,
      segments: 1,
      fault: { segment: SEGMENT, ...(seq !== undefined ? { seq, record: seq } : {}), reason: `${SEGMENT}${seq !== undefined ? `, seq ${seq}` : ''}: ${reason}` },
    });
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const head = (await client.query<{ seq: string; digest: string }>(`SELECT seq, digest FROM ${HEAD_TABLE} WHERE id = 1`)).rows[0];
      if (!head) return fault('the chain head row is missing');
      let seq = 0;
      let prev = GENESIS_DIGEST;
      for (;;) {
        const { rows } = await client.query<FrameRow>(
          `SELECT seq, prev, digest, tenant, principal, frame FROM ${FRAMES_TABLE} WHERE seq > $1 ORDER BY seq LIMIT ${VERIFY_PAGE}`,
          [seq],
        );
        for (const row of rows) {
          const expected = seq + 1;
          const found = Number(row.seq);
          if (found !== expected) return fault(`seq ${found} where seq ${expected} was expected (records are missing)`, expected);
          if (this.digester.digest(Buffer.from(row.frame, 'utf8')) !== row.digest) return fault('the digest does not match the frame (the record was altered)', expected);
          if (row.prev !== prev || !row.frame.startsWith(chainPrefix(expected, prev))) {
            return fault('prev is not the digest of the previous record (a record before it was removed, reordered or replaced)', expected);
          }
          let record: AuditRecord;
          try {
            record = decodeFrameJson(row.frame, row.digest);
          } catch (error) {
            return fault((error as Error).message, expected);
          }
          if ((record.tenant ?? null) !== row.tenant || (record.principal ?? null) !== row.principal) {
            return fault('the tenant/principal columns do not match the frame (an index column was altered)', expected);
          }
          seq = expected;
          prev = row.digest;
          records += 1;
        }
        if (rows.length < VERIFY_PAGE) break;
      }
      if (Number(head.seq) !== seq || head.digest !== prev) {
        return fault(`the chain head says seq ${head.seq} but the last frame is seq ${seq}: frames were removed or the head was altered`);
      }
      return { ok: true, records, segments: 1 };
    } finally {
      await client.query('COMMIT').catch(() => undefined);
      client.release();
    }
  }

  /** The newest `limit` matching records with seq > `afterSeq`, oldest first. */
  async tail(query: AuditQuery): Promise<readonly AuditRecord[]> {
    if (this.closed) throw new AuditUnavailableError('the audit sink is closed');
    const { limit, afterSeq = 0, tenant, principal } = query;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_TAIL_LIMIT) throw new RangeError(`limit must be an integer from 1 to ${MAX_TAIL_LIMIT}`);
    if (!Number.isInteger(afterSeq) || afterSeq < 0) throw new RangeError('afterSeq must be an integer >= 0');
    const client = await this.connect();
    try {
      const { rows } = await client.query<FrameRow>(
        `SELECT seq, prev, digest, tenant, principal, frame FROM ${FRAMES_TABLE}
          WHERE seq > $1 AND ($2::text IS NULL OR tenant = $2) AND ($3::text IS NULL OR principal = $3)
          ORDER BY seq DESC LIMIT $4`,
        [afterSeq, tenant ?? null, principal ?? null, limit],
      );
      return rows.reverse().map((row) => {
        const seq = Number(row.seq);
        const bad = (reason: string): never => {
          throw new AuditCorruptError({ ok: false, records: 0, segments: 1, fault: { segment: SEGMENT, seq, record: seq, reason: `${SEGMENT}, seq ${seq}: ${reason}` } });
        };
        if (this.digester.digest(Buffer.from(row.frame, 'utf8')) !== row.digest) bad('the digest does not match the frame (the record was altered)');
        let record: AuditRecord;
        try {
          record = decodeFrameJson(row.frame, row.digest);
        } catch (error) {
          return bad((error as Error).message);
        }
        if (record.seq !== seq || record.prev !== row.prev) bad('the frame does not match its row');
        return record;
      });
    } finally {
      client.release();
    }
  }

  health(): { readonly ok: boolean; readonly reason?: string } {
    if (this.closed) return { ok: false, reason: 'the audit sink is closed' };
    if (this.lastError) return { ok: false, reason: this.lastError };
    return { ok: true };
  }

  /** Waits for queued appends to be committed (or refused), then closes the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.appends.drain();
    await this.pool.end();
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      this.lastError = `the PostgreSQL audit store cannot be reached (${pgText(error)})`;
      throw new AuditUnavailableError(this.lastError);
    }
  }

  /** One transaction: lock the head, chain the frames after it, insert them, move the head. */
  private async commit(events: readonly AuditEvent[]): Promise<AuditReceipt[]> {
    const client = await this.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const head = (await client.query<{ seq: string; digest: string }>(`SELECT seq, digest FROM ${HEAD_TABLE} WHERE id = 1 FOR UPDATE`)).rows[0];
      if (!head) throw new AuditCorruptError({ ok: false, records: 0, segments: 1, fault: { segment: SEGMENT, reason: `${SEGMENT}: the chain head row is missing` } });
      let seq = Number(head.seq);
      let prev = head.digest;
      const frames: EncodedFrame[] = [];
      for (const event of events) {
        const frame = encodePrepared(seq + 1, prev, event, this.digester);
        frames.push(frame);
        seq = frame.seq;
        prev = frame.digest;
      }
      await client.query(
        `INSERT INTO ${FRAMES_TABLE} (seq, prev, digest, tenant, principal, frame)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])`,
        [
          frames.map((f) => f.seq),
          frames.map((f) => f.prev),
          frames.map((f) => f.digest),
          events.map((e) => e.tenant ?? null),
          events.map((e) => e.principal ?? null),
          frames.map((f) => f.json),
        ],
      );
      await client.query(`UPDATE ${HEAD_TABLE} SET seq = $1, digest = $2 WHERE id = 1`, [seq, prev]);
      await client.query('COMMIT');
      return frames.map((f) => ({ seq: f.seq, digest: f.digest }));
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      // A connection whose ROLLBACK failed is in an unknown state: do not hand it out again.
      client.release(broken);
    }
  }
}

function keyMismatch(alg: string, keyId: string | null, digester: FrameDigester): string | undefined {
  if (alg === 'hmac-sha256' && digester.algorithm === 'sha256') {
    return `the audit chain in PostgreSQL is keyed with HMAC-SHA-256 (key id ${keyId}); the HMAC key is needed to verify or extend it`;
  }
  if (alg === 'sha256' && digester.algorithm === 'hmac-sha256') {
    return 'the audit chain in PostgreSQL uses plain SHA-256 but an HMAC key was given; a chain keeps the digest it was created with';
  }
  if (alg === 'hmac-sha256' && keyId !== digester.keyId) {
    return `the HMAC key given (key id ${digester.keyId}) is not the audit chain's key (key id ${keyId})`;
  }
  return undefined;
}
