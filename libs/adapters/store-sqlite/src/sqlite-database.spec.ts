import { mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteDatabase, SqliteOpenError } from './sqlite-database.js';
import { openSqliteStores } from './sqlite-stores.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-sqlite-open-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openError(path: string): SqliteOpenError {
  try {
    openSqliteDatabase(path).close();
  } catch (error) {
    expect(error).toBeInstanceOf(SqliteOpenError);
    return error as SqliteOpenError;
  }
  throw new Error(`expected opening ${path} to fail`);
}

describe('openSqliteDatabase', () => {
  it('creates missing parent directories and the file', () => {
    const path = join(tempDir(), 'a', 'b', 'state.db');
    const db = openSqliteDatabase(path);
    db.close();
    expect(statSync(path).isFile()).toBe(true);
  });

  it('uses WAL, FULL synchronous commits, a busy timeout and foreign keys', () => {
    const db = openSqliteDatabase(join(tempDir(), 'state.db'));
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      // 2 = FULL: a committed consume or charge survives power loss (ADR 0008).
      expect(db.pragma('synchronous', { simple: true })).toBe(2);
      expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });

  it('refuses a file that is not a SQLite database, naming the path and the problem', () => {
    const path = join(tempDir(), 'state.db');
    writeFileSync(path, 'this is a text file an operator pointed the server at by mistake\n'.repeat(10));
    const error = openError(path);
    expect(error.message).toContain(path);
    expect(error.message).toMatch(/not a SQLite database/);
    expect(error.problem).not.toContain(path);
  });

  it('refuses a database whose pages are damaged', async () => {
    const path = join(tempDir(), 'state.db');
    const stores = openSqliteStores(path);
    for (let i = 0; i < 100; i++) {
      await stores.approvals.create({
        id: `a${i}`,
        tenant: 't',
        requester: 'r',
        tool: 'x',
        version: '1',
        args: { pad: 'x'.repeat(2000) },
        payloadDigest: 'd',
        createdAt: i,
        expiresAt: 10_000,
      });
    }
    stores.db.pragma('wal_checkpoint(TRUNCATE)');
    await stores.close();
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 4096 * 3);
    closeSync(fd);
    const error = openError(path);
    expect(error.message).toMatch(/is corrupt/);
    expect(error.message).not.toContain('\n');
  });

  it('refuses a directory where the file should be', () => {
    const path = join(tempDir(), 'state.db');
    mkdirSync(path);
    expect(openError(path).message).toMatch(/cannot be opened.*not a directory/);
  });

  it('refuses a path whose parent is a file', () => {
    const parent = join(tempDir(), 'not-a-dir');
    writeFileSync(parent, '');
    expect(openError(join(parent, 'state.db')).message).toMatch(/directory cannot be created \((EEXIST|ENOTDIR)\)/);
  });

  it('opens an empty existing file as a new database', async () => {
    const path = join(tempDir(), 'state.db');
    writeFileSync(path, '');
    const stores = openSqliteStores(path);
    expect(stores.db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'approvals'").get()).toEqual({ n: 1 });
    await stores.close();
  });
});
