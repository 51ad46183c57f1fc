import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
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

describe('state files readable by other local users', () => {
  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it('creates the database, its -wal and its -shm 0600 while they are in use', async () => {
    const dir = tempDir();
    const path = join(dir, 'state.db');
    const stores = openSqliteStores(path);
    stores.db.exec('CREATE TABLE t (x)');
    stores.db.prepare('INSERT INTO t VALUES (?)').run('secret');
    for (const file of [path, `${path}-wal`, `${path}-shm`]) {
      expect(existsSync(file), file).toBe(true);
      expect(modeOf(file), file).toBe(0o600);
    }
    await stores.close();
    expect(modeOf(path)).toBe(0o600);
  });

  it('creates the message bus file (bus.db) 0600 too, through the same opener', () => {
    const path = join(tempDir(), 'bus.db');
    const db = openSqliteDatabase(path);
    db.exec('CREATE TABLE m (x)');
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    db.close();
  });

  it.each([0o644, 0o666, 0o604, 0o640, 0o777])('tightens an existing database of mode %o, and its journals', (mode) => {
    const path = join(tempDir(), 'state.db');
    // As an older release left it: the database and a journal SQLite will reuse, both loose.
    openSqliteDatabase(path).close();
    chmodSync(path, mode);
    writeFileSync(`${path}-shm`, '');
    chmodSync(`${path}-shm`, mode);
    const db = openSqliteDatabase(path);
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(`${path}-shm`)).toBe(0o600);
    db.exec('CREATE TABLE t (x)');
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    db.close();
  });

  it('refuses a symbolic link where the database should be, and leaves its target alone', () => {
    const dir = tempDir();
    const target = join(dir, 'elsewhere');
    writeFileSync(target, '');
    chmodSync(target, 0o644);
    symlinkSync(target, join(dir, 'state.db'));
    expect(openError(join(dir, 'state.db')).message).toBe(`cannot open the state database '${join(dir, 'state.db')}': it is a symbolic link; refusing to follow it`);
    expect(modeOf(target)).toBe(0o644);
    expect(lstatSync(join(dir, 'state.db')).isSymbolicLink()).toBe(true);
  });

  it('does not hang on a FIFO planted as a journal', () => {
    const path = join(tempDir(), 'state.db');
    execFileSync('mkfifo', [`${path}-shm`]);
    const started = Date.now();
    // Whatever SQLite makes of it, the open answers (with an error or a database) at once.
    try {
      openSqliteDatabase(path).close();
    } catch (error) {
      expect(error).toBeInstanceOf(SqliteOpenError);
    }
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
