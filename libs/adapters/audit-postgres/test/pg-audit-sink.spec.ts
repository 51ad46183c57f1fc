import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AuditCorruptError, AuditUnavailableError, type AuditEvent, type AuditReceipt } from '@toolgate/contracts';
import { createTestDatabase, specFrameDigest, type TestDatabase } from '@toolgate/testing';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { PgAuditSink } from '../src/index.js';

const TSX = fileURLToPath(new URL('../../../../node_modules/.bin/tsx', import.meta.url));
const CHILD = fileURLToPath(new URL('./pg-writer-child.ts', import.meta.url));
const KEY = 'pg-suite-hmac-key-0123456789abcdef';

function sample(i: number, overrides: Partial<AuditEvent> = {}): AuditEvent {
  return { event: 'authorized', ts: '2025-03-01T12:00:00.000Z', tenant: 'acme', principal: `p${i % 3}`, tool: 'web_search', version: '1.0.0', callId: `call-${i}`, ...overrides };
}

let db: TestDatabase;
beforeEach(async () => {
  db = await createTestDatabase(inject('toolgatePostgresUrl'));
});
afterEach(async () => db.drop());

/** SQL as a superuser who bypasses the append-only trigger (what an attacker with DB access can do). */
async function asSuperuser(sql: string, params: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query("SET session_replication_role = 'replica'");
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

async function writeChain(count: number, options: { hmacKey?: string } = {}): Promise<void> {
  const sink = await PgAuditSink.open(db.url, options);
  for (let i = 1; i <= count; i++) await sink.append(sample(i));
  await sink.close();
}

describe('PgAuditSink', () => {
  it('refuses ordinary UPDATE, DELETE and TRUNCATE of frames', async () => {
    await writeChain(2);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await expect(client.query("UPDATE toolgate_audit_frames SET tenant = 'x'")).rejects.toThrow(/append-only/);
      await expect(client.query('DELETE FROM toolgate_audit_frames')).rejects.toThrow(/append-only/);
      await expect(client.query('TRUNCATE toolgate_audit_frames')).rejects.toThrow(/append-only/);
    } finally {
      await client.end();
    }
  });

  it('verify detects a tampered row and names its seq; a damaged chain refuses to open', async () => {
    await writeChain(5);
    await asSuperuser(`UPDATE toolgate_audit_frames SET frame = replace(frame, '"tenant":"acme"', '"tenant":"evil"') WHERE seq = 3`);
    const sink = await PgAuditSink.open(db.url, { verifyOnOpen: false });
    const report = await sink.verify();
    expect(report.ok).toBe(false);
    expect(report.records).toBe(2);
    expect(report.fault).toMatchObject({ segment: 'toolgate_audit_frames', seq: 3 });
    expect(report.fault?.reason).toMatch(/seq 3: the digest does not match the frame/);
    await expect(sink.tail({ limit: 10 })).rejects.toBeInstanceOf(AuditCorruptError);
    await sink.close();
    const error = await PgAuditSink.open(db.url).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(AuditCorruptError);
    expect((error as Error).message).toMatch(/toolgate_audit_frames, seq 3/);
  });

  it('verify detects a rewrite with recomputed digests when the chain is keyed', async () => {
    await writeChain(4, { hmacKey: KEY });
    // The attacker recomputes a plain SHA-256 for the edited frame.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query<{ frame: string }>('SELECT frame FROM toolgate_audit_frames WHERE seq = 2');
    await client.end();
    const forged = (rows[0]?.frame as string).replace('"tenant":"acme"', '"tenant":"evil"');
    const { createHash } = await import('node:crypto');
    await asSuperuser('UPDATE toolgate_audit_frames SET frame = $1, digest = $2, tenant = $3 WHERE seq = 2', [forged, createHash('sha256').update(forged).digest('hex'), 'evil']);
    const error = await PgAuditSink.open(db.url, { hmacKey: KEY }).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(AuditCorruptError);
    expect((error as Error).message).toMatch(/seq 2: the digest does not match/);
  });

  it('verify detects a deleted row, an edited index column and a rolled-back head', async () => {
    await writeChain(6);
    const sink = await PgAuditSink.open(db.url);
    await asSuperuser("UPDATE toolgate_audit_frames SET tenant = 'other' WHERE seq = 2");
    expect((await sink.verify()).fault?.reason).toMatch(/seq 2: the tenant\/principal columns do not match the frame/);
    await asSuperuser("UPDATE toolgate_audit_frames SET tenant = 'acme' WHERE seq = 2");
    expect((await sink.verify()).ok).toBe(true);
    await asSuperuser('DELETE FROM toolgate_audit_frames WHERE seq = 4');
    expect((await sink.verify()).fault?.reason).toMatch(/seq 5 where seq 4 was expected/);
    await sink.close();

    await db.drop();
    db = await createTestDatabase(inject('toolgatePostgresUrl'));
    await writeChain(6);
    await asSuperuser('DELETE FROM toolgate_audit_frames WHERE seq = 6');
    const cut = await PgAuditSink.open(db.url, { verifyOnOpen: false });
    expect((await cut.verify()).fault?.reason).toMatch(/chain head says seq 6 but the last frame is seq 5/);
    await cut.close();
  });

  it('two server processes appending at once produce one gap-free verified chain', async () => {
    const [workers, each] = [10, 15];
    const perProcess = workers * each;
    // Its own process group, so a failed test can kill tsx and the node process it runs.
    const child = spawn(TSX, [CHILD, db.url, String(workers), String(each)], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const said = (line: string) =>
      new Promise<void>((resolve) => {
        const look = () => out.split('\n').includes(line) && resolve();
        child.stdout.on('data', look);
        look();
      });
    child.stdout.on('data', (d: Buffer) => void (out += d.toString()));
    const ready = said('ready');
    child.stdin.on('error', () => undefined); // a child that died is reported through its exit code
    const sink = await PgAuditSink.open(db.url);
    try {
      await Promise.race([ready, exit]);
      // One record each in turn (child, parent), so the chain interleaves however loaded the box
      // is, then both processes' 10 writers at once.
      child.stdin.write('go\n');
      await Promise.race([said('first'), exit]);
      const mine: AuditReceipt[] = [await sink.append(sample(0, { principal: 'parent' }))];
      child.stdin.end('more\n');
      await Promise.all(
        Array.from({ length: workers }, async (_, w) => {
          for (let i = w === 0 ? 1 : 0; i < each; i++) mine.push(await sink.append(sample(w * each + i, { principal: 'parent' })));
        }),
      );
      expect(await exit, err).toBe(0);
      const theirs = JSON.parse(out.trim().split('\n').pop() as string) as AuditReceipt[];
      expect(theirs).toHaveLength(perProcess);
      const seqs = [...mine, ...theirs].map((r) => r.seq).sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: 2 * perProcess }, (_, i) => i + 1));
      const records = await sink.tail({ limit: 1000 });
      expect(records).toHaveLength(2 * perProcess);
      // Both processes' records interleave in the one chain.
      const owners = records.map((r) => r.principal);
      expect(owners.indexOf('child')).toBeLessThan(owners.lastIndexOf('parent'));
      expect(owners.indexOf('parent')).toBeLessThan(owners.lastIndexOf('child'));
      for (let i = 1; i < records.length; i++) expect(records[i]?.prev).toBe(records[i - 1]?.digest);
      for (const record of records) expect(record.digest).toBe(specFrameDigest(record));
      expect(await sink.verify()).toMatchObject({ ok: true, records: 2 * perProcess });
    } finally {
      if (child.exitCode === null) process.kill(-(child.pid as number), 'SIGKILL');
      await sink.close();
    }
  }, 90_000);

  it('two sinks in one process on one database also share one chain', async () => {
    const [a, b] = await Promise.all([PgAuditSink.open(db.url), PgAuditSink.open(db.url)]);
    const receipts = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).append(sample(i))));
    expect(receipts.map((r) => r.seq).sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect((await b.verify()).ok).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });

  it('refuses a keyed chain without its key or with another, and a plain chain with a key', async () => {
    await writeChain(1, { hmacKey: KEY });
    await expect(PgAuditSink.open(db.url)).rejects.toThrow(/keyed with HMAC-SHA-256 \(key id [0-9a-f]{16}\)/);
    await expect(PgAuditSink.open(db.url, { hmacKey: 'some-other-key-0123456789' })).rejects.toThrow(/is not the audit chain's key/);
    const keyed = await PgAuditSink.open(db.url, { hmacKey: KEY });
    expect((await keyed.tail({ limit: 1 }))[0]?.digest).toBe(specFrameDigest((await keyed.tail({ limit: 1 }))[0]!, KEY));
    await keyed.close();
    await db.drop();
    db = await createTestDatabase(inject('toolgatePostgresUrl'));
    await writeChain(1);
    await expect(PgAuditSink.open(db.url, { hmacKey: KEY })).rejects.toBeInstanceOf(AuditUnavailableError);
  });

  it('fails the appends of a lost connection, reports it in health, and recovers on the next append', async () => {
    const sink = await PgAuditSink.open(db.url, { poolSize: 1 });
    await sink.append(sample(1));
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    const name = new URL(db.url).pathname.slice(1);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    await admin.end();
    const failed = await sink.append(sample(2)).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    if (failed) {
      expect(failed).toBeInstanceOf(AuditUnavailableError);
      expect(sink.health().ok).toBe(false);
    }
    const receipt = await sink.append(sample(3));
    expect(receipt.seq).toBe(failed ? 2 : 3);
    expect(sink.health()).toEqual({ ok: true });
    expect((await sink.verify()).ok).toBe(true);
    await sink.close();
  });

  it('refuses a schema migrated by a newer server as the port says a sink cannot open (AuditUnavailableError), leaving it as it was', async () => {
    await writeChain(2);
    await asSuperuser(`INSERT INTO toolgate_audit_migrations (version, description) VALUES (999, 'from a newer server')`);
    const error = await PgAuditSink.open(db.url).then(
      () => new Error('opened a schema from a newer server'),
      (e: unknown) => e as Error,
    );
    // The composition root catches the port's class alone; this kind must be one of it.
    expect(error).toBeInstanceOf(AuditUnavailableError);
    expect(error.name).toBe('AuditSchemaTooNewError');
    expect(error.message).toMatch(/at version 999 but this server knows only up to \d+; upgrade this server/);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM toolgate_audit_frames');
      expect(Number(rows[0]?.n)).toBe(2);
    } finally {
      await client.end();
    }
  });

  it('says clearly when the database cannot be reached', async () => {
    const url = new URL(db.url);
    url.port = '1';
    const error = await PgAuditSink.open(url.toString()).then(
      () => new Error('opened an unreachable database'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(AuditUnavailableError);
    expect(error.message).toMatch(/cannot be reached/);
    expect(error.message).not.toContain(url.password);
  });
});
