import { ToolAbortedError } from '@toolgate/contracts';

/** How a call holds a workspace: `bash` calls share it; a `git` call has it alone. */
export type LockMode = 'shared' | 'exclusive';

interface Waiter {
  readonly mode: LockMode;
  readonly grant: () => void;
}

interface LockState {
  readers: number;
  writer: boolean;
  readonly queue: Waiter[];
}

/**
 * One readers–writer lock per workspace root, so that nothing else of the tenant runs a process
 * between the git tool's checks and git itself.
 *
 * The git tool proves the repository harmless (layout, argument targets, config) just before it
 * starts git. A second process call of the same tenant running at that moment could swap a
 * checked directory for a symlink (two approved git calls did: `checkout` of a tree with a
 * symlink raced `mv -f a out/x` and wrote outside the workspace) or rewrite `.git/config`. So a
 * git call waits until no other bash or git call of the workspace runs and holds it alone; bash
 * calls still run side by side. Waiters are served in arrival order (a waiting git call is not
 * overtaken by later bash calls), and a waiter whose call is aborted leaves the queue.
 *
 * In-process only: it orders the calls of one server process, which is where a workspace lives.
 */
export class WorkspaceLocks {
  readonly #locks = new Map<string, LockState>();

  /**
   * Resolves with the release function once the workspace is held in `mode`; rejects with
   * `ToolAbortedError` if `signal` aborts first (nothing is then held). `onWait` is called when
   * the call has to queue, so a caller charges waiting time to its deadline only when it waited.
   */
  acquire(root: string, mode: LockMode, signal?: AbortSignal, onWait?: () => void): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new ToolAbortedError('the call was aborted while waiting for its workspace'));
    let state = this.#locks.get(root);
    if (!state) {
      state = { readers: 0, writer: false, queue: [] };
      this.#locks.set(root, state);
    }
    const held = state;
    if (held.queue.length === 0 && compatible(held, mode)) return Promise.resolve(this.#take(root, held, mode));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const index = held.queue.indexOf(waiter);
        if (index !== -1) held.queue.splice(index, 1);
        reject(new ToolAbortedError('the call was aborted while waiting for its workspace'));
        // A writer that gave up may have been all that held readers back.
        this.#drain(root, held);
      };
      const waiter: Waiter = {
        mode,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#take(root, held, mode));
        },
      };
      held.queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      onWait?.();
    });
  }

  /** Workspaces with a holder or a waiter (for tests: an idle lock leaves nothing behind). */
  get active(): number {
    return this.#locks.size;
  }

  #take(root: string, state: LockState, mode: LockMode): () => void {
    if (mode === 'exclusive') state.writer = true;
    else state.readers++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (mode === 'exclusive') state.writer = false;
      else state.readers--;
      this.#drain(root, state);
    };
  }

  #drain(root: string, state: LockState): void {
    while (state.queue.length > 0 && compatible(state, state.queue[0]!.mode)) state.queue.shift()!.grant();
    if (state.queue.length === 0 && state.readers === 0 && !state.writer) this.#locks.delete(root);
  }
}

function compatible(state: LockState, mode: LockMode): boolean {
  return mode === 'shared' ? !state.writer : !state.writer && state.readers === 0;
}
