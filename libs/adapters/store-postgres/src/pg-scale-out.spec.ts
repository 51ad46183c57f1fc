import { createServer } from 'node:net';
import type { NewApproval } from '@toolgate/contracts';
import { createTestDatabase, type TestDatabase } from '@toolgate/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { PgSchemaTooNewError } from './pg-migrations.js';
import { PgStoreConnectError, PgStores } from './pg-stores.js';

const NOW = Date.UTC(2030, 0, 1, 12);
const approval = (id: string): NewApproval => ({
  id,
  tenant: 'tenant',
  requester: 'alice',
  tool: 'shell.exec',
  version: '1.0.0',
  args: { command: 'ls' },
  payloadDigest: 'sha256:digest',
  createdAt: NOW - 1000,
  expiresAt: NOW + 3_600_000,
});

let db: TestDatabase;
const opened: PgStores[] = [];
async function open(url = db.url): Promise<PgStores> {
  const stores = await PgStores.open(url, { poolSize: 8 });
  opened.push(stores);
  return stores;
}
async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  db = await createTestDatabase(inject('toolgatePostgresUrl'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((stores) => stores.close()));
});
afterAll(async () => {
  await db?.drop();
});

describe('several server processes on one database', () => {
  it('migrate once when they all start at the same moment', async () => {
    await Promise.all(Array.from({ length: 6 }, () => open()));
    const rows = await sql<{ component: string; version: number }>('SELECT component, version FROM state_schema_migrations ORDER BY component');
    expect(rows).toEqual([
      { component: 'approvals', version: 1 },
      { component: 'budgets', version: 1 },
      { component: 'pins', version: 1 },
      { component: 'settings', version: 1 },
    ]);
  });

  it('let exactly one of two pools consume each approval, however the attempts interleave', async () => {
    const [a, b] = [await open(), await open()];
    for (let round = 0; round < 10; round++) {
      const id = `race-${round}`;
      await a.approvals.create(approval(id));
      await b.approvals.decide('tenant', id, { approve: true, by: 'bob', selfApproved: false, at: NOW - 1 });
      const outcomes = await Promise.all(
        Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? a : b).approvals.consume('tenant', id, 'sha256:digest', NOW)),
      );
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok && o.problem === 'consumed')).toHaveLength(15);
    }
  });

  it('let exactly one of two pools decide an approval', async () => {
    const [a, b] = [await open(), await open()];
    await a.approvals.create(approval('decide-race'));
    const outcomes = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        (i % 2 === 0 ? a : b).approvals.decide('tenant', 'decide-race', { approve: i % 3 !== 0, by: `approver-${i}`, selfApproved: false, at: NOW - 1 }),
      ),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
  });

  it('never overspend a budget charged through two pools at once', async () => {
    const [a, b] = [await open(), await open()];
    const policy = { calls: 25, windowSeconds: 3600 };
    const results = await Promise.all(
      Array.from({ length: 80 }, (_, i) => (i % 2 === 0 ? a : b).budgets.charge('tenant', 'alice', policy, NOW + i)),
    );
    expect(results.filter(Boolean)).toHaveLength(25);
    const [row] = await sql<{ used: number }>('SELECT used FROM budgets WHERE tenant = $1 AND principal = $2', ['tenant', 'alice']);
    expect(row?.used).toBe(25);
  });

  it('lose no egress host allowed through two pools at once', async () => {
    const [a, b] = [await open(), await open()];
    const hosts = Array.from({ length: 40 }, (_, i) => `h${i}.example`);
    await Promise.all(
      hosts.map((host, i) => (i % 2 === 0 ? a : b).settings.allowEgressHost('tenant', host, { enabled: false, allowAny: false, hosts: [] })),
    );
    expect([...((await a.settings.getEgress('tenant'))?.hosts ?? [])].sort()).toEqual([...hosts].sort());
  });

  it('keep state when every process restarts', async () => {
    const first = await open();
    await first.approvals.create(approval('restart'));
    await first.budgets.charge('tenant', 'restart-user', { calls: 3, windowSeconds: 60 }, NOW);
    await first.close();
    const second = await open();
    expect((await second.approvals.get('tenant', 'restart'))?.status).toBe('pending');
    expect(await second.budgets.remaining('tenant', 'restart-user', { calls: 3, windowSeconds: 60 }, NOW)).toBe(2);
  });
});

describe('budget housekeeping', () => {
  it('keeps at most the current and previous window of a principal', async () => {
    const stores = await open();
    const policy = { calls: 5, windowSeconds: 60 };
    for (let window = 0; window < 6; window++) await stores.budgets.charge('tenant', 'pruned', policy, NOW + window * 60_000);
    const rows = await sql<{ window_start: string }>('SELECT window_start FROM budgets WHERE principal = $1 ORDER BY window_start', ['pruned']);
    expect(rows.map((r) => Number(r.window_start))).toEqual([NOW + 4 * 60_000, NOW + 5 * 60_000]);
  });
});

describe('start-up failures name the problem, never the password', () => {
  async function refusal(url: string): Promise<Error> {
    const error = await PgStores.open(url, { connectTimeoutMs: 5_000 }).then(
      (stores) => {
        opened.push(stores);
        throw new Error('expected the open to fail');
      },
      (e: unknown) => e as Error,
    );
    expect(error.message).not.toContain('s3cret-pw');
    return error;
  }

  it('reports a refused connection', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const error = await refusal(`postgres://user:s3cret-pw@127.0.0.1:${port}/toolgate`);
    expect(error).toBeInstanceOf(PgStoreConnectError);
    expect(error.message).toBe(`cannot connect to the PostgreSQL state database at 127.0.0.1:${port}/toolgate: connection refused (is PostgreSQL running and listening there?)`);
  });

  it('reports wrong credentials', async () => {
    const url = new URL(db.url);
    url.password = 's3cret-pw';
    const error = await refusal(url.toString());
    expect(error).toBeInstanceOf(PgStoreConnectError);
    expect(error.message).toMatch(/authentication failed/);
  });

  it('reports a missing database', async () => {
    const url = new URL(db.url);
    url.pathname = '/no_such_database_here';
    const error = await refusal(url.toString());
    expect(error.message).toMatch(/no_such_database_here: the database does not exist/);
  });

  it('reports an unparseable URL', async () => {
    expect((await refusal('not a url with s3cret-pw')).message).toMatch(/not valid/);
  });

  it('refuses a database migrated by a newer server', async () => {
    await open();
    await sql("INSERT INTO state_schema_migrations (component, version, description) VALUES ('budgets', 99, 'from the future')");
    try {
      const error = await refusal(db.url);
      expect(error).toBeInstanceOf(PgSchemaTooNewError);
      expect(error.message).toMatch(/version 99 for 'budgets', but this server knows only up to 1/);
    } finally {
      await sql("DELETE FROM state_schema_migrations WHERE version = 99");
    }
  });
});
