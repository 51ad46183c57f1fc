import { constants } from 'node:fs';
import { open, opendir, type FileHandle } from 'node:fs/promises';
import { ToolAbortedError } from '@toolgate/contracts';
import { sortYielding, TimeSlice } from './time-slice.js';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/**
 * Deepest level any walk descends to, whatever the caller asks. The walk holds one open handle
 * per level, so without a bound a directory chain planted 24,000 deep made one `glob` hold
 * nearly every descriptor the gateway may open; deeper entries are not visited and the walk
 * reports itself incomplete (`truncated`).
 */
export const MAX_WALK_DEPTH = 64;

/** Directories a walk never enters: git's internals are not workspace content. */
export const SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git']);

/** One entry met by a walk. */
export interface TreeEntry {
  /** Path relative to the walk's start, `/`-separated. */
  readonly path: string;
  readonly name: string;
  readonly type: 'file' | 'directory' | 'symlink' | 'other';
  /** The open directory that holds the entry: open the entry relative to it, never by path. */
  readonly parent: FileHandle;
  readonly depth: number;
}

export interface WalkOptions {
  /** Components below the start to descend to at most (1 = only the start's own entries). */
  readonly maxDepth: number;
  /** Entries to look at in total before stopping; the walk reports whether it stopped early. */
  readonly maxEntries: number;
  readonly signal?: AbortSignal;
}

/**
 * Walks a directory tree depth-first in name order, through open directory handles: each
 * subdirectory is opened relative to its parent's handle with `O_NOFOLLOW`, so a symlink is
 * reported as an entry but never followed, and a directory swapped for a symlink mid-walk is
 * skipped instead of entered. At most one handle per level is open.
 *
 * The walk shares the event loop: a directory's names are sorted in slices, and between visits
 * it yields whenever its slice is spent, so a directory of 200,000 entries (or a visitor that
 * matches each one) never holds the loop for more than a few milliseconds.
 *
 * The visitor returns `false` to stop. Resolves to `true` if the walk covered everything.
 */
export async function walkTree(
  start: FileHandle,
  options: WalkOptions,
  visit: (entry: TreeEntry) => Promise<boolean | void> | boolean | void,
): Promise<boolean> {
  let seen = 0;
  let complete = true;
  const slice = new TimeSlice();

  const walk = async (dir: FileHandle, prefix: string, depth: number): Promise<boolean> => {
    const names: { name: string; type: TreeEntry['type'] }[] = [];
    const listing = await opendir(`/proc/self/fd/${dir.fd}`);
    try {
      for await (const dirent of listing) {
        if (seen + names.length >= options.maxEntries) {
          complete = false;
          break;
        }
        const type = dirent.isFile() ? 'file' : dirent.isDirectory() ? 'directory' : dirent.isSymbolicLink() ? 'symlink' : 'other';
        names.push({ name: dirent.name, type });
      }
    } finally {
      await listing.close().catch(() => undefined);
    }
    await sortYielding(names, (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0), slice);
    for (const { name, type } of names) {
      if (options.signal?.aborted) throw new ToolAbortedError('the call was aborted');
      if (slice.due()) await slice.yield();
      seen++;
      const path = prefix === '' ? name : `${prefix}/${name}`;
      if ((await visit({ path, name, type, parent: dir, depth })) === false) return false;
      if (type !== 'directory' || depth >= options.maxDepth || SKIPPED_DIRECTORIES.has(name)) continue;
      if (depth >= MAX_WALK_DEPTH) {
        complete = false;
        continue;
      }
      let child: FileHandle;
      try {
        child = await open(`/proc/self/fd/${dir.fd}/${name}`, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch {
        // Removed, or replaced by a symlink since it was listed: not entered.
        continue;
      }
      try {
        if (!(await walk(child, path, depth + 1))) return false;
      } finally {
        await child.close();
      }
    }
    return true;
  };

  const finished = await walk(start, '', 1);
  return finished && complete;
}
