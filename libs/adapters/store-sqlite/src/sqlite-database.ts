import { closeSync, constants, fchmodSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';

/** How long a statement waits for another connection's write lock before failing. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * The state database could not be opened. Meant for the operator at start-up, so it names the
 * configured path; it is never shown to an agent.
 */
export class SqliteOpenError extends Error {
  override readonly name = 'SqliteOpenError';
  constructor(
    readonly path: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot open the state database '${path}': ${problem}`, options);
  }
}

/**
 * Opens (creating if needed) the SQLite file that holds approvals, budgets and settings, and
 * checks it before anything relies on it: a file that is not a SQLite database, or fails
 * SQLite's quick integrity check, is refused with a {@link SqliteOpenError} naming the problem.
 *
 * Settings: WAL (readers never block the writer), `synchronous = FULL` (a committed consume or
 * charge survives power loss, see ADR 0008), `busy_timeout` (a second process waits for the write
 * lock instead of failing at once), `foreign_keys = ON`. `:memory:` opens a private in-memory
 * database for tests.
 */
export function openSqliteDatabase(path: string): Database.Database {
  const inMemory = path === ':memory:';
  if (!inMemory) {
    try {
      mkdirSync(dirname(resolve(path)), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new SqliteOpenError(path, `its directory cannot be created (${codeOf(error) ?? 'unknown error'})`, { cause: error });
    }
    // Before SQLite opens it: SQLite creates files 0644 and gives -wal/-shm the database's mode.
    restrictToOwner(path, true);
    restrictToOwner(`${path}-wal`, false);
    restrictToOwner(`${path}-shm`, false);
  }
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw new SqliteOpenError(path, explain(error), { cause: error });
  }
  try {
    // SQLite reads the file header lazily: this is where a foreign or damaged file is noticed.
    // One reported error is enough to refuse the file and keeps the message readable.
    const check = db.pragma('quick_check(1)', { simple: true });
    if (check !== 'ok') {
      const first = String(check).split('\n').find((line) => line.trim() && !line.startsWith('***')) ?? String(check);
      throw new SqliteOpenError(path, `the database is corrupt (integrity check: ${first.trim().slice(0, 200)}); restore it from a backup or move it aside`);
    }
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (!inMemory && mode !== 'wal') throw new SqliteOpenError(path, `the database cannot use write-ahead logging (journal mode '${String(mode)}')`);
    db.pragma('synchronous = FULL');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('foreign_keys = ON');
  } catch (error) {
    db.close();
    if (error instanceof SqliteOpenError) throw error;
    throw new SqliteOpenError(path, explain(error), { cause: error });
  }
  return db;
}

/**
 * Makes the file readable and writable by its owner only (0600), creating it empty if `create`
 * (SQLite treats an empty file as a new database). Approvals, budgets, settings and messages are
 * tenants' data: no other local user may read them. An existing file is tightened too, so a data
 * dir from an older release stops being world-readable. Never through a symbolic link.
 */
function restrictToOwner(path: string, create: boolean): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK | (create ? constants.O_CREAT : 0), 0o600);
  } catch (error) {
    const code = codeOf(error);
    // Absent (a journal not written yet) or a directory: SQLite's own open names the latter.
    // O_NONBLOCK: a FIFO planted under the name cannot hang the start.
    if (code === 'ENOENT' || code === 'EISDIR') return;
    if (code === 'ELOOP') throw new SqliteOpenError(path, 'it is a symbolic link; refusing to follow it', { cause: error });
    throw new SqliteOpenError(path, `it cannot be opened to restrict it to its owner (${code ?? 'unknown error'})`, { cause: error });
  }
  try {
    fchmodSync(fd, 0o600);
  } catch (error) {
    throw new SqliteOpenError(path, `its permissions cannot be restricted to its owner (${codeOf(error) ?? 'unknown error'})`, { cause: error });
  } finally {
    closeSync(fd);
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The operator's next step, from SQLite's result code rather than its terse message. */
function explain(error: unknown): string {
  switch (codeOf(error)) {
    case 'SQLITE_NOTADB':
      return 'the file is not a SQLite database (or its header is damaged); move it aside or point the data directory elsewhere';
    case 'SQLITE_CORRUPT':
      return 'the database is corrupt; restore it from a backup or move it aside';
    case 'SQLITE_CANTOPEN':
      return 'the file cannot be opened; check that the path names a file (not a directory) and that its directory is writable';
    case 'SQLITE_READONLY':
      return 'the database is read-only; the server needs write access to the file and its directory';
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return 'another process keeps the database locked';
    case 'SQLITE_IOERR':
      return 'the disk reported an I/O error';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
