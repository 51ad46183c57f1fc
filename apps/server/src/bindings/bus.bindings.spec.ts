import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteDatabase } from '@toolgate/adapter-store-sqlite';
import { MessageBusToken } from '@toolgate/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../config.js';
import { ConfigToken, LogToken, StateStoresToken, type StateStores } from '../tokens.js';
import { Binder } from './binder.js';
import { bindBus } from './bus.bindings.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** This process's open descriptors on files under `dir`. */
function openUnder(dir: string): string[] {
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(dir));
}

/** A binder with the bus module over state that has no SQLite connection (as PostgreSQL state). */
function busOverPostgresState(dataDir: string): Binder {
  const binder = new Binder();
  binder.constant(ConfigToken, { dataDir, store: 'postgres' } as unknown as ServerConfig);
  binder.constant(LogToken, () => undefined);
  binder.constant(StateStoresToken, { close: async () => undefined } as unknown as StateStores);
  bindBus(binder);
  return binder;
}

describe('the bus in a file of its own', () => {
  it('closes bus.db again when the bus cannot open it, so a failed start leaves nothing open', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-bus-'));
    dirs.push(dataDir);
    // A bus.db migrated by a newer server: the bus refuses it.
    const newer = openSqliteDatabase(join(dataDir, 'bus.db'));
    newer.exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (component TEXT NOT NULL, version INTEGER NOT NULL, description TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (component, version));" +
        "INSERT INTO schema_migrations VALUES ('message-bus', 99, 'from a newer server', '2026-12-01T00:00:00Z');",
    );
    newer.close();

    const binder = busOverPostgresState(dataDir);
    await expect(binder.get(MessageBusToken)).rejects.toThrow(/schema version 99/);
    await binder.close(() => undefined);
    expect(openUnder(dataDir)).toEqual([]);
  });

  it('keeps bus.db open while the bus is in use and closes it with the container', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-bus-'));
    dirs.push(dataDir);
    const binder = busOverPostgresState(dataDir);
    await binder.get(MessageBusToken);
    expect(openUnder(dataDir).some((target) => target.endsWith('bus.db'))).toBe(true);
    await binder.close(() => undefined);
    expect(openUnder(dataDir)).toEqual([]);
  });
});
