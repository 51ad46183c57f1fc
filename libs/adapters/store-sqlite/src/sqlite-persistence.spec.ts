import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { NewApproval } from '@toolgate/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStores } from './sqlite-stores.js';

const WORKER = fileURLToPath(new URL('../test/contention-worker.ts', import.meta.url));
const NOW = Date.UTC(2030, 0, 1, 12);
const HOURLY = { calls: 5, windowSeconds: 3600 };

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));
function dbPath(): string {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-sqlite-persist-'));
  return join(dir, 'data', 'state.db');
}

const approval = (id: string): NewApproval => ({
  id,
  tenant: 'tenant',
  requester: 'alice',
  tool: 'shell.exec',
  version: '1.0.0',
  args: { command: "echo 'hi'" },
  payloadDigest: 'sha256:digest',
  createdAt: NOW - 1000,
  expiresAt: NOW + 3_600_000,
});

describe('SQLite state survives a restart', () => {
  it('keeps approvals, decisions, consumption, budgets and settings across close and reopen', async () => {
    const path = dbPath();
    const first = openSqliteStores(path);
    await first.approvals.create(approval('a1'));
    await first.approvals.create(approval('a2'));
    await first.approvals.decide('tenant', 'a1', { approve: true, by: 'bob', reason: 'ok', selfApproved: false, at: NOW - 500 });
    await first.budgets.charge('tenant', 'alice', HOURLY, NOW);
    await first.budgets.charge('tenant', 'alice', HOURLY, NOW);
    await first.settings.allowEgressHost('tenant', 'example.com', { enabled: false, allowAny: false, hosts: [] });
    await first.close();

    const second = openSqliteStores(path);
    expect(await second.approvals.get('tenant', 'a1')).toMatchObject({ status: 'approved', decidedBy: 'bob', reason: 'ok', args: { command: "echo 'hi'" } });
    expect((await second.approvals.list('tenant', { limit: 10 })).map((r) => r.id)).toEqual(['a2', 'a1']);
    expect(await second.budgets.remaining('tenant', 'alice', HOURLY, NOW)).toBe(3);
    expect(await second.settings.getEgress('tenant')).toEqual({ enabled: true, allowAny: false, hosts: ['example.com'] });
    expect(await second.approvals.consume('tenant', 'a1', 'sha256:digest', NOW)).toMatchObject({ ok: true });
    await second.close();

    // A consumed approval stays consumed: restarting the server cannot make it usable again.
    const third = openSqliteStores(path);
    expect(await third.approvals.consume('tenant', 'a1', 'sha256:digest', NOW)).toMatchObject({ ok: false, problem: 'consumed' });
    const versions = third.db.prepare('SELECT count(*) AS n FROM schema_migrations').get();
    expect(versions).toEqual({ n: 4 });
    await third.close();
  });
});

describe('two connections to one file (two server processes)', () => {
  it('see each other’s writes at once and share one budget and one use of an approval', async () => {
    const path = dbPath();
    const a = openSqliteStores(path);
    const b = openSqliteStores(path);
    try {
      await a.approvals.create(approval('shared'));
      await b.approvals.decide('tenant', 'shared', { approve: true, by: 'bob', selfApproved: false, at: NOW - 1 });
      expect((await a.approvals.get('tenant', 'shared'))?.status).toBe('approved');
      expect(await a.approvals.consume('tenant', 'shared', 'sha256:digest', NOW)).toMatchObject({ ok: true });
      expect(await b.approvals.consume('tenant', 'shared', 'sha256:digest', NOW)).toMatchObject({ ok: false, problem: 'consumed' });

      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).budgets.charge('tenant', 'alice', HOURLY, NOW)),
      );
      expect(results.filter(Boolean)).toHaveLength(HOURLY.calls);
      expect(await b.budgets.remaining('tenant', 'alice', HOURLY, NOW)).toBe(0);

      await a.settings.allowEgressHost('tenant', 'one.example', { enabled: false, allowAny: false, hosts: [] });
      await b.settings.allowEgressHost('tenant', 'two.example', { enabled: false, allowAny: false, hosts: [] });
      expect((await a.settings.getEgress('tenant'))?.hosts).toEqual(['one.example', 'two.example']);
    } finally {
      await a.close();
      await b.close();
    }
  });

  /** Starts `workers` processes, waits until each has opened the file, then releases them together. */
  async function contend(path: string, workers: number, args: string[]): Promise<{ charged: number; consumed: number }[]> {
    const children = Array.from({ length: workers }, () =>
      spawn(process.execPath, ['--import', 'tsx', WORKER, path, ...args], { stdio: ['pipe', 'pipe', 'inherit'], timeout: 45_000 }),
    );
    const lines = children.map((child) => {
      const iterator = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      return async () => {
        const next = await iterator.next();
        return next.done ? 'exited' : next.value;
      };
    });
    expect(await Promise.all(lines.map((nextLine) => nextLine()))).toEqual(children.map(() => 'ready'));
    for (const child of children) child.stdin.end('go\n');
    const results = await Promise.all(lines.map((nextLine) => nextLine()));
    return results.map((line) => JSON.parse(line) as { charged: number; consumed: number });
  }

  it('never overspends a budget nor uses an approval twice when four processes contend', async () => {
    const path = dbPath();
    const stores = openSqliteStores(path);
    await stores.approvals.create(approval('race'));
    await stores.approvals.decide('tenant', 'race', { approve: true, by: 'bob', selfApproved: false, at: NOW - 1 });
    await stores.close();

    const calls = 60;
    const results = await contend(path, 4, ['40', String(calls), '10', 'race']);
    expect(results.reduce((sum, r) => sum + r.charged, 0)).toBe(calls);
    expect(results.reduce((sum, r) => sum + r.consumed, 0)).toBe(1);
    // Contention really happened: more than one process got some of the budget.
    expect(results.filter((r) => r.charged > 0).length).toBeGreaterThan(1);

    const after = openSqliteStores(path);
    expect(await after.budgets.remaining('tenant', 'alice', { calls, windowSeconds: 3600 }, NOW)).toBe(0);
    expect((await after.approvals.get('tenant', 'race'))?.status).toBe('consumed');
    await after.close();
  }, 60_000);
});

describe('budget housekeeping', () => {
  it('keeps at most the current and previous window of a principal', async () => {
    const stores = openSqliteStores(dbPath());
    try {
      const policy = { calls: 5, windowSeconds: 60 };
      for (let window = 0; window < 6; window++) await stores.budgets.charge('tenant', 'pruned', policy, NOW + window * 60_000);
      const rows = stores.db.prepare('SELECT window_start FROM budgets WHERE principal = ? ORDER BY window_start').all('pruned');
      expect(rows).toEqual([{ window_start: NOW + 4 * 60_000 }, { window_start: NOW + 5 * 60_000 }]);
    } finally {
      await stores.close();
    }
  });
});
