import { createHash } from 'node:crypto';
import { realpathSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Log } from '../logger.js';
import { parsePrincipalsFile, type StaticPrincipalDirectory } from '@toolgate/adapter-principals-file';

/** How long a burst of file events (an editor's write, rename and chmod) is let settle before one re-read. */
export const PRINCIPALS_RELOAD_SETTLE_MS = 200;

export interface PrincipalsReloaderOptions {
  /** Reads the file's text as at start (bounded, regular files only); its errors name the setting. */
  readonly read: () => Promise<string>;
  /** The directory serving now, whose data a valid new file replaces in one step. */
  readonly directory: StaticPrincipalDirectory;
  readonly log: Log;
  /** The file, watched through its directory so a file replaced by rename (as editors save) is seen. */
  readonly path: string;
  /** How the setting is named in messages, e.g. `TOOLGATE_PRINCIPALS_FILE=…`. */
  readonly what: string;
  readonly settleMs?: number;
  /** The file holds only roles and tenants (TOOLGATE_PRINCIPALS=oidc): parsed as such. */
  readonly policyOnly?: boolean;
}

/**
 * Re-reads the principals file on SIGHUP and when the file changes (issue 13, ADR 0073). A new
 * file is parsed whole before anything changes; a valid one replaces the directory's data in
 * one assignment, so a call sees the old principals or the new, never a mix, and a principal the
 * new file removes is refused from its next call. An invalid one is refused with its fault
 * named and the old principals keep serving. Re-reads run one at a time; a change during one
 * is read once more after it.
 */
export class PrincipalsReloader {
  readonly #options: PrincipalsReloaderOptions;
  readonly #watchers: FSWatcher[] = [];
  /** Each watched directory and the names in it whose change counts. */
  readonly #watched = new Map<string, Set<string>>();
  /** SHA-256 of the text serving now, once a re-read has served one: an unchanged file is not parsed again. */
  #serving: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<boolean> | undefined;
  #again: string | undefined;
  #closed = false;

  constructor(options: PrincipalsReloaderOptions) {
    this.#options = options;
  }

  /**
   * Watches the file's directory for changes to the file and, when the file is a symbolic link,
   * the directory of the file it points to (edited in place there, it changes no name here).
   * Kubernetes swaps a ConfigMap's `..data` link, so that name counts too. A directory that
   * cannot be watched is logged; SIGHUP still reloads.
   */
  watch(): this {
    const { path } = this.#options;
    this.#watchFor(dirname(path), [basename(path), '..data']);
    this.#watchTarget();
    return this;
  }

  /** Watches the directory of the file the path points to now (again after each re-read, as a link may have been re-pointed). */
  #watchTarget(): void {
    if (this.#closed) return;
    try {
      const real = realpathSync(this.#options.path);
      if (real !== this.#options.path) this.#watchFor(dirname(real), [basename(real)]);
    } catch {
      // Not there now: its own directory is watched, and a re-read says what is wrong.
    }
  }

  /** Adds `names` to what counts in `directory`, watching it if it is not watched yet. */
  #watchFor(directory: string, names: readonly string[]): void {
    const watched = this.#watched.get(directory);
    if (watched) {
      for (const name of names) watched.add(name);
      return;
    }
    const { log, what } = this.#options;
    const counted = new Set(names);
    try {
      const watcher = watch(directory, { persistent: false }, (_event, changed) => {
        // Some platforms name no file; a re-read of an unchanged file costs a hash.
        if (changed === null || counted.has(changed)) this.#schedule('the file changed');
      });
      watcher.on('error', (error: Error) => {
        log('warn', `${what}: no longer watched for changes (${error.message}); SIGHUP still reloads it`);
        watcher.close();
        this.#watched.delete(directory);
      });
      this.#watchers.push(watcher);
      this.#watched.set(directory, counted);
    } catch (error) {
      log('warn', `${what}: cannot be watched for changes (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); SIGHUP still reloads it`);
    }
  }

  /**
   * Re-reads the file now (or after the re-read under way). Resolves true when the new file
   * serves, false when it was refused; never rejects.
   */
  reload(trigger: string): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    if (this.#running) {
      this.#again = trigger;
      return this.#running.then(() => this.#running ?? true);
    }
    this.#running = this.#readOnce(trigger).finally(() => {
      this.#running = undefined;
      const again = this.#again;
      this.#again = undefined;
      if (again !== undefined && !this.#closed) void this.reload(again);
    });
    return this.#running;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers.splice(0)) watcher.close();
    this.#watched.clear();
  }

  #schedule(trigger: string): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.reload(trigger), this.#options.settleMs ?? PRINCIPALS_RELOAD_SETTLE_MS);
    this.#timer.unref();
  }

  async #readOnce(trigger: string): Promise<boolean> {
    const { read, directory, log, what } = this.#options;
    this.#watchTarget();
    try {
      const text = await read();
      if (this.#closed) return false;
      const digest = createHash('sha256').update(text, 'utf8').digest('hex');
      if (digest === this.#serving) {
        log('info', `${what}: re-read (${trigger}): unchanged`);
        return true;
      }
      const { data, warnings } = parsePrincipalsFile(text, { policyOnly: this.#options.policyOnly === true });
      for (const warning of warnings) log('warn', `principals file: ${warning}`);
      directory.replace(data);
      this.#serving = digest;
      log('info', `${what}: reloaded (${trigger}): ${data.principals.length} principal(s), ${Object.keys(data.roles).length} role(s), ${Object.keys(data.tenants).length} tenant(s)`);
      return true;
    } catch (error) {
      log('warn', `${what}: reload refused (${trigger}): ${(error as Error).message}; the principals read before keep serving`);
      return false;
    }
  }
}
