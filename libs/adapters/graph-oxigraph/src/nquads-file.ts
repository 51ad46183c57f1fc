import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Tenants' memories are readable by the server's user alone, like the rest of the data dir. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/**
 * The graph's file could not be opened or is damaged. Meant for the operator at start-up, so it
 * names the path; it is never shown to an agent.
 */
export class GraphFileError extends Error {
  override readonly name = 'GraphFileError';
  constructor(
    readonly path: string,
    problem: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot open the knowledge graph file '${path}': ${problem}`, options);
  }
}

/** What was on disk when the file was opened. */
export interface LoadedFile {
  readonly file: NQuadsFile;
  /** The complete lines (every quad written before a crash). */
  readonly text: string;
  /** Bytes of a final line cut short by a crash mid-append, dropped on open. */
  readonly droppedBytes: number;
}

/**
 * The graph as an N-Quads file, one quad per line. Adds append their lines and fsync before they
 * are acknowledged (cheap: no rewrite per write). A replace rewrites the whole file through a
 * temporary file, fsync and rename, so a crash leaves either the old or the new file. A crash in
 * the middle of an append can only leave a final line without its newline, which was never
 * acknowledged: it is dropped on the next open. The file and its temporary copies are created
 * mode 0600, and an existing file is narrowed to 0600 when it is opened.
 */
export class NQuadsFile {
  #handle: FileHandle;

  private constructor(
    readonly path: string,
    handle: FileHandle,
  ) {
    this.#handle = handle;
  }

  static async open(path: string): Promise<LoadedFile> {
    try {
      await mkdir(dirname(path), { recursive: true, mode: DIR_MODE });
    } catch (error) {
      throw new GraphFileError(path, 'its directory cannot be created', { cause: error });
    }
    try {
      // A file written by an earlier version may be world-readable: tighten it before reading.
      await chmod(path, FILE_MODE);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT') throw new GraphFileError(path, 'its permissions cannot be set', { cause: error });
    }
    let text = '';
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOENT') throw new GraphFileError(path, 'it cannot be read', { cause: error });
    }
    const complete = text.length === 0 || text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
    const droppedBytes = Buffer.byteLength(text) - Buffer.byteLength(complete);
    const file = new NQuadsFile(path, await openForAppend(path));
    if (droppedBytes > 0) await file.rewrite(complete);
    return { file, text: complete, droppedBytes };
  }

  /** Appends complete N-Quads lines; resolves once they are on disk. */
  async append(nquads: string): Promise<void> {
    if (nquads.length === 0) return;
    await this.#handle.appendFile(nquads, 'utf8');
    await this.#handle.datasync();
  }

  /** Replaces the whole file atomically; resolves once the new file is durable. */
  async rewrite(nquads: string): Promise<void> {
    // A fresh name opened exclusively: never an older file (or a link) that kept a wider mode.
    const temp = join(dirname(this.path), `.${basename(this.path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const out = await open(temp, 'wx', FILE_MODE);
    try {
      try {
        await out.writeFile(nquads, 'utf8');
        await out.sync();
      } finally {
        await out.close();
      }
      await rename(temp, this.path);
    } catch (error) {
      // A failed rewrite leaves the old file in place and no stray copy of the graph beside it.
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await syncDirectory(dirname(this.path));
    const previous = this.#handle;
    this.#handle = await openForAppend(this.path);
    await previous.close();
  }

  async close(): Promise<void> {
    await this.#handle.close();
  }
}

async function openForAppend(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'a', FILE_MODE);
  } catch (error) {
    throw new GraphFileError(path, 'it cannot be opened for writing', { cause: error });
  }
}

/** Makes a rename durable: the directory entry is only on disk once the directory is synced. */
async function syncDirectory(path: string): Promise<void> {
  const dir = await open(path, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
