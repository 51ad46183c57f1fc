import { Worker } from 'node:worker_threads';
import { ToolError, type QueryAnswer } from '@toolgate/contracts';

/** What the query worker is told about writes; see query-worker.mjs. */
export type ReplicaUpdate =
  | { readonly op: 'add'; readonly nquads: string }
  | { readonly op: 'replace-graph'; readonly graph: string; readonly nquads: string };

interface QueryReply {
  readonly id: number;
  readonly ok: boolean;
  readonly answer?: QueryAnswer;
  readonly reason?: string;
  readonly message?: string;
}

interface InFlight {
  readonly id: number;
  readonly resolve: (answer: QueryAnswer) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export interface QueryEngineOptions {
  /** The whole dataset as N-Quads: what a freshly started worker is loaded with. */
  readonly snapshot: () => string;
  /** Heap cap of the worker thread; a query that needs more is stopped and reported. */
  readonly maxHeapMb?: number;
}

/**
 * Runs SPARQL queries in a worker thread holding a replica of the graph, one query at a time.
 *
 * Oxigraph's query call is synchronous and cannot be interrupted, so a query that outlives its
 * time limit is stopped by terminating the worker; the next query starts a new worker, loaded
 * from the main thread's copy. Writes are forwarded to a live worker in order, and a new worker
 * is loaded from the snapshot in the same synchronous step that makes it current, so a query
 * always sees every write that resolved before it was asked.
 */
export class QueryEngine {
  readonly #snapshot: () => string;
  readonly #maxHeapMb: number;
  #worker: Worker | undefined;
  #inFlight: InFlight | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  #closed = false;

  constructor(options: QueryEngineOptions) {
    this.#snapshot = options.snapshot;
    this.#maxHeapMb = options.maxHeapMb ?? 512;
  }

  /** Forwards a write to the worker, if one is running (a new one loads the snapshot instead). */
  update(update: ReplicaUpdate): void {
    this.#worker?.postMessage(update);
  }

  /** Queries run one after another; each one's time limit starts when the worker receives it. */
  query(graph: string, sparql: string, limits: { maxRows: number; maxBytes: number; timeoutMs: number }): Promise<QueryAnswer> {
    const run = this.#queue.then(() => this.#run(graph, sparql, limits));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    this.#fail(new ToolError('the knowledge graph is closed', 'QUERY_FAILED'));
    await worker?.terminate();
  }

  #run(graph: string, sparql: string, limits: { maxRows: number; maxBytes: number; timeoutMs: number }): Promise<QueryAnswer> {
    if (this.#closed) return Promise.reject(new ToolError('the knowledge graph is closed', 'QUERY_FAILED'));
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise<QueryAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#fail(
          new ToolError(
            `the query was stopped after ${limits.timeoutMs} ms: narrow its patterns or add a LIMIT`,
            'QUERY_TIMEOUT',
          ),
        );
        this.#discard(worker);
      }, limits.timeoutMs);
      this.#inFlight = { id, resolve, reject, timer };
      worker.postMessage({ op: 'query', id, graph, sparql, maxRows: limits.maxRows, maxBytes: limits.maxBytes });
    });
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL('./query-worker.mjs', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: this.#maxHeapMb },
      stdout: false,
      stderr: false,
    });
    // An idle worker must not keep the process alive; a pending query's timer does while one runs.
    worker.unref();
    worker.on('message', (reply: QueryReply) => this.#settle(reply));
    worker.on('error', (error: Error & { code?: string }) => {
      // A worker already replaced (e.g. stopped at a time limit) has no query of its own left.
      if (this.#worker !== worker) return;
      const outOfMemory = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.#fail(
        new ToolError(
          outOfMemory ? 'the query needed too much memory: narrow its patterns or add a LIMIT' : 'the query engine failed; try again',
          'QUERY_FAILED',
        ),
      );
      this.#discard(worker);
    });
    worker.on('exit', () => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#fail(new ToolError('the query engine stopped; try again', 'QUERY_FAILED'));
    });
    worker.postMessage({ op: 'reset', nquads: this.#snapshot() });
    this.#worker = worker;
    return worker;
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

  #discard(worker: Worker): void {
    if (this.#worker === worker) this.#worker = undefined;
    void worker.terminate();
  }
}
