import { Worker } from 'node:worker_threads';
import { ToolError, type QueryAnswer, type QueryLimits } from '@toolgate/contracts';

/** What a query worker is told about writes; see query-worker.mjs. */
export type ReplicaUpdate =
  | { readonly op: 'add'; readonly nquads: string }
  | { readonly op: 'replace-graph'; readonly graph: string; readonly nquads: string };

interface QueryReply {
  readonly id: number;
  readonly ok: boolean;
  readonly answer?: QueryAnswer;
  readonly reason?: string;
  readonly message?: string;
  /** The engine trapped (e.g. ran out of stack): the thread's memory is unusable, so it must go. */
  readonly retire?: boolean;
}

interface InFlight {
  readonly id: number;
  readonly resolve: (answer: QueryAnswer) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * What a freshly started thread is loaded with: the whole dataset as N-Quads text, or the path of
 * the graph's file for the thread to read itself, so that the main thread does not serialize the
 * whole graph at every restart. A file must hold every write that resolved, and whatever else it
 * holds must be corrected by a later update.
 */
export type ReplicaSnapshot = { readonly nquads: string } | { readonly path: string };

export interface ReplicaWorkerOptions {
  /** Taken when a thread starts, in the same synchronous step that makes it current. */
  readonly snapshot: () => ReplicaSnapshot;
  /** Heap cap of the thread; a query that needs more is stopped and reported. */
  readonly maxHeapMb: number;
}

export const closedError = (): ToolError => new ToolError('the knowledge graph is closed', 'QUERY_FAILED');

/**
 * One worker thread holding a replica of the graph, running one query at a time.
 *
 * Oxigraph's query call is synchronous and cannot be interrupted, so a query that outlives its
 * time limit is stopped by terminating the thread; the next query starts a new thread, loaded
 * from the main thread's copy. Writes are forwarded to a live thread in order, and a new thread is
 * loaded from the snapshot in the same synchronous step that makes it current, so a query always
 * sees every write that was forwarded before it was run.
 */
export class ReplicaWorker {
  readonly #options: ReplicaWorkerOptions;
  #thread: Worker | undefined;
  #inFlight: InFlight | undefined;
  #nextId = 1;
  #closed = false;

  constructor(options: ReplicaWorkerOptions) {
    this.#options = options;
  }

  /** A query is running here. */
  get busy(): boolean {
    return this.#inFlight !== undefined;
  }

  /** A thread is started (perhaps still loading), so a query here pays no thread start. */
  get warm(): boolean {
    return this.#thread !== undefined;
  }

  /** Forwards a write to the thread, if one is running (a new one loads the snapshot instead). */
  update(update: ReplicaUpdate): void {
    this.#thread?.postMessage(update);
  }

  /** Runs one query; its time limit starts now. Only one query may run at a time. */
  run(graph: string, sparql: string, limits: QueryLimits): Promise<QueryAnswer> {
    if (this.#closed) return Promise.reject(closedError());
    if (this.#inFlight) return Promise.reject(new Error('a query is already running on this worker'));
    let thread: Worker;
    try {
      thread = this.#ensureThread();
    } catch {
      // Never a synchronous throw: the caller's bookkeeping waits for this promise to settle.
      return Promise.reject(new ToolError('the query engine failed to start; try again', 'QUERY_FAILED'));
    }
    const id = this.#nextId++;
    return new Promise<QueryAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#fail(
          new ToolError(`the query was stopped after ${limits.timeoutMs} ms: narrow its patterns or add a LIMIT`, 'QUERY_TIMEOUT'),
        );
        this.#discard(thread);
        // The thread was healthy, only the query too costly: load its successor now, while no
        // query waits for it. (After a crash the next query starts one, so a thread that cannot
        // start is not restarted in a loop.)
        if (!this.#closed) this.#prestart();
      }, limits.timeoutMs);
      this.#inFlight = { id, resolve, reject, timer };
      thread.postMessage({ op: 'query', id, graph, sparql, maxRows: limits.maxRows, maxBytes: limits.maxBytes });
    });
  }

  /** Fails a running query as closed and stops the thread. */
  async close(): Promise<void> {
    this.#closed = true;
    const thread = this.#thread;
    this.#thread = undefined;
    this.#fail(closedError());
    await thread?.terminate();
  }

  #prestart(): void {
    try {
      this.#ensureThread();
    } catch {
      // The next query tries again and reports the failure to its caller.
    }
  }

  #ensureThread(): Worker {
    if (this.#thread) return this.#thread;
    // Taken first: if the snapshot cannot be made, no thread is left behind unowned.
    const snapshot = this.#options.snapshot();
    const thread = new Worker(new URL('./query-worker.mjs', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: this.#options.maxHeapMb },
      stdout: false,
      stderr: false,
    });
    // An idle thread must not keep the process alive; a pending query's timer does while one runs.
    thread.unref();
    thread.on('message', (reply: QueryReply) => {
      // Discarded before the answer is passed on, so the next query cannot reach the broken engine.
      if (reply.retire) this.#discard(thread);
      this.#settle(reply);
    });
    thread.on('error', (error: Error & { code?: string }) => {
      // A thread already replaced (e.g. stopped at a time limit) has no query of its own left.
      if (this.#thread !== thread) return;
      const outOfMemory = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.#fail(
        new ToolError(
          outOfMemory ? 'the query needed too much memory: narrow its patterns or add a LIMIT' : 'the query engine failed; try again',
          'QUERY_FAILED',
        ),
      );
      this.#discard(thread);
    });
    thread.on('exit', () => {
      if (this.#thread !== thread) return;
      this.#thread = undefined;
      this.#fail(new ToolError('the query engine stopped; try again', 'QUERY_FAILED'));
    });
    thread.postMessage({ op: 'reset', ...snapshot });
    this.#thread = thread;
    return thread;
  }

  #settle(reply: QueryReply): void {
    const current = this.#inFlight;
    if (!current || current.id !== reply.id) return;
    this.#inFlight = undefined;
    clearTimeout(current.timer);
    if (reply.ok && reply.answer) current.resolve(reply.answer);
    else current.reject(new ToolError(reply.message ?? 'the query failed', reply.reason ?? 'QUERY_FAILED'));
  }

  #fail(error: Error): void {
    const current = this.#inFlight;
    if (!current) return;
    this.#inFlight = undefined;
    clearTimeout(current.timer);
    current.reject(error);
  }

  #discard(thread: Worker): void {
    if (this.#thread === thread) this.#thread = undefined;
    void thread.terminate();
  }
}
