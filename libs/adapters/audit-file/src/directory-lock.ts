import { constants } from 'node:fs';
import { lstat, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AuditUnavailableError } from '@toolgate/contracts';

/** The lock file (an empty SQLite database, used only for its OS lock). */
export const LOCK_FILE = 'audit.lock';
/** Who holds the lock, for the message a second writer gets. Informational only. */
export const LOCK_OWNER_FILE = 'audit.lock.owner';

/** Exclusive ownership of an audit directory; released on `release()` or when the process dies. */
export interface DirectoryLock {
  release(): Promise<void>;
}

/**
 * Takes the single-writer lock of `dir`. The lock is a POSIX advisory lock (`fcntl`) that SQLite
 * takes on `audit.lock`; the kernel drops it when the holder exits for any reason, SIGKILL
 * included, so a stale lock cannot exist and there is no pid to check or take over. SQLite also
 * tracks its locks per file inside a process, so a second sink in the same process is refused
 * too. Node offers no `flock`/`fcntl` of its own (see ADR 0011).
 */
export async function acquireDirectoryLock(dir: string, dirLabel: string): Promise<DirectoryLock> {
  const path = join(dir, LOCK_FILE);
  try {
    const stat = await lstat(path);
    if (!stat.isFile()) throw new AuditUnavailableError(`${dirLabel}/${LOCK_FILE} is not a regular file; refusing to use it`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  let db: Database.Database | undefined;
  try {
    // Created 0600 like every file of the audit directory (SQLite would make it 0644).
    await (await open(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600)).close();
    // timeout 0: a held lock is refused at once instead of waited for.
    db = new Database(path, { timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = MEMORY');
    // Held until the connection closes: nothing is ever written to the database.
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db?.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      const owner = await readFile(join(dir, LOCK_OWNER_FILE), 'utf8').catch(() => '');
      const pid = /pid=(\d+)/.exec(owner)?.[1];
      throw new AuditUnavailableError(
        `the audit directory ${dirLabel} is in use by another writer${pid ? ` (pid ${pid})` : ''}; only one process may write it`,
      );
    }
    throw new AuditUnavailableError(`the audit directory lock ${dirLabel}/${LOCK_FILE} cannot be taken (${(error as Error).message})`);
  }
  const held = db;
  await writeOwner(join(dir, LOCK_OWNER_FILE));
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      await rm(join(dir, LOCK_OWNER_FILE), { force: true }).catch(() => undefined);
      held.close();
    },
  };
}

/** Best effort, and never through a symbolic link planted under the owner file's name. */
async function writeOwner(path: string): Promise<void> {
  try {
    const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
    try {
      await handle.writeFile(`pid=${process.pid} since=${new Date().toISOString()}\n`);
    } finally {
      await handle.close();
    }
  } catch {
    // The owner note only improves a second writer's error message.
  }
}
