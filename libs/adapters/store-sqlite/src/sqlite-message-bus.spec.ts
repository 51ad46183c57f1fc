import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from './sqlite-database.js';
import { sqliteSchemaVersion } from './sqlite-migrations.js';
import { openSqliteStores } from './sqlite-stores.js';
import { SqliteMessageBus } from './sqlite-message-bus.js';

const dir = mkdtempSync(join(tmpdir(), 'toolgate-sqlite-bus-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const openDb = (file: string): Database.Database => openSqliteDatabase(file);

describe('SqliteMessageBus persistence', () => {
  it('keeps messages and every reader cursor across a reopen', async () => {
    const file = join(dir, 'reopen.db');
    const first = openDb(file);
    const bus = new SqliteMessageBus(first);
    let at = 1_000;
    for (const [channel, body] of [['log', 'a'], ['task', 'b'], ['log', 'c'], ['task:worker-1', 'd']] as const) {
      await bus.publish({ id: `m-${body}`, tenant: 'acme', channel, sender: 'planner', body, publishedAt: at++ });
    }
    expect((await bus.readNew('acme', 'worker-1', { channels: ['task'], limit: 10 })).map((m) => m.body)).toEqual(['b']);
    expect((await bus.readNew('acme', 'worker-1', { limit: 1 })).map((m) => m.body)).toEqual(['a']);
    first.close();

    const second = openDb(file);
    const reopened = new SqliteMessageBus(second);
    const rest = await reopened.readNew('acme', 'worker-1', { limit: 10 });
    expect(rest.map((m) => m.body)).toEqual(['c', 'd']);
    expect(rest[0]).toMatchObject({ id: 'm-c', tenant: 'acme', channel: 'log', sender: 'planner', publishedAt: 1_002 });
    expect((await reopened.readNew('acme', 'reviewer', { limit: 10 })).map((m) => m.body)).toEqual(['a', 'b', 'c', 'd']);
    // Sequence numbers keep increasing after the reopen (AUTOINCREMENT never reuses one).
    const next = await reopened.publish({ id: 'm-e', tenant: 'acme', channel: 'log', sender: 'planner', body: 'e', publishedAt: at });
    expect(next.seq).toBeGreaterThan(rest[1]!.seq);
    second.close();
  });

  it('shares cursors between two connections to one file, as two server processes would', async () => {
    const file = join(dir, 'two-connections.db');
    const a = openDb(file);
    const b = openDb(file);
    const busA = new SqliteMessageBus(a);
    const busB = new SqliteMessageBus(b);
    for (let i = 0; i < 6; i++) {
      await (i % 2 ? busA : busB).publish({ id: `m${i}`, tenant: 't', channel: 'log', sender: 'p', body: `m${i}`, publishedAt: i });
    }
    const fromA = await busA.readNew('t', 'worker-1', { limit: 4 });
    const fromB = await busB.readNew('t', 'worker-1', { limit: 4 });
    expect([...fromA, ...fromB].map((m) => m.body)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    a.close();
    b.close();
  });

  it('shares the state stores\' database as its own migration component', async () => {
    const file = join(dir, 'shared-with-stores.db');
    const stores = openSqliteStores(file);
    const bus = new SqliteMessageBus(stores.db);
    expect(sqliteSchemaVersion(stores.db, 'message-bus')).toBe(1);
    await bus.publish({ id: 'm1', tenant: 't', channel: 'log', sender: 'p', body: 'hi', publishedAt: 1 });
    await stores.close();

    const again = openSqliteStores(file);
    // Migrating twice is a no-op, and the message is still there.
    const reopened = new SqliteMessageBus(again.db);
    expect((await reopened.readNew('t', 'r', { limit: 5 })).map((m) => m.body)).toEqual(['hi']);
    await again.close();
  });
});
