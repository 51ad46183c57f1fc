import type { QueryAnswer, QueryLimits } from '@toolgate/contracts';
import { FairQueue } from './fair-queue.js';
import { ReplicaWorker, closedError, type ReplicaSnapshot, type ReplicaUpdate } from './replica-worker.js';

export type { ReplicaSnapshot, ReplicaUpdate } from './replica-worker.js';

/** The sizes of the pool and its queues, as {@link QueryEngineOptions} sets them. */
export interface QueryPoolOptions {
  /** Heap cap of each worker thread; a query that needs more is stopped and reported (default 512). */
  readonly maxHeapMb?: number;
  /** Worker threads, each holding a replica of the graph (default 2). */
  readonly workers?: number;
  /** Queries of one tenant that may run at the same time (default 1). */
  readonly maxRunningPerTenant?: number;
  /** Queries of one tenant that may wait; one more is refused with `QUERY_RATE_LIMITED` (default 16). */
  readonly maxQueuedPerTenant?: number;
  /** Queries of all tenants that may wait; one more is refused with `QUERY_RATE_LIMITED` (default 256). */
  readonly maxQueued?: number;
}

export interface QueryEngineOptions extends QueryPoolOptions {
  /** What a freshly started worker is loaded with. */
  readonly snapshot: () => ReplicaSnapshot;
}

/** The pool's sizes with their defaults, or a RangeError naming the option out of range. */
export function poolSizes(options: QueryPoolOptions): { workers: number; maxHeapMb: number; maxRunningPerKey: number; maxQueuedPerKey: number; maxQueued: number } {
  const workers = bounded('workers', options.workers ?? 2, 64);
  return {
    workers,
    maxHeapMb: bounded('maxHeapMb', options.maxHeapMb ?? 512, 1_000_000),
    maxRunningPerKey: bounded('maxRunningPerTenant', options.maxRunningPerTenant ?? 1, workers),
    maxQueuedPerKey: bounded('maxQueuedPerTenant', options.maxQueuedPerTenant ?? 16, 100_000),
    maxQueued: bounded('maxQueued', options.maxQueued ?? 256, 1_000_000),
  };
}

interface PendingQuery {
  readonly graph: string;
  readonly sparql: string;
  readonly limits: QueryLimits;
  readonly resolve: (answer: QueryAnswer) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Runs SPARQL queries on a pool of worker threads (see {@link ReplicaWorker}), shared fairly
 * between tenants: each tenant's queries wait in its own bounded FIFO queue, the queues are
 * served round-robin (see {@link FairQueue}), and a tenant runs at most `maxRunningPerTenant`
 * queries at once. The bound this gives: while a tenant under its cap has a query waiting, no
 * worker idles and at most T − 1 queries of the other busy tenants start before it, so on N
 * workers it waits at most ⌈T / N⌉ time limits (each plus a worker restart), however many queries
 * the others queued.
 * With the defaults (two workers, one running query per tenant) and two busy tenants, neither
 * ever waits for the other's queries.
 *
 * A query that outlives its limit is stopped by terminating its own worker only; the queries on
 * the other workers keep running. Every write is forwarded to every live worker before the write
 * resolves, and a new worker loads the snapshot as it starts, so a query sees every
 * write that resolved before it was asked, on whichever worker it runs. The main thread never
 * evaluates a query.
 */
export class QueryEngine {
  readonly #workers: readonly ReplicaWorker[];
  readonly #queue: FairQueue<PendingQuery>;
  /** The tenant each worker last ran a query for. */
  readonly #lastTenant = new Map<ReplicaWorker, string>();
  #closed = false;

  constructor(options: QueryEngineOptions) {
    const { workers, maxHeapMb, ...bounds } = poolSizes(options);
    this.#workers = Array.from({ length: workers }, () => new ReplicaWorker({ snapshot: options.snapshot, maxHeapMb }));
    this.#queue = new FairQueue(bounds);
  }

  /** Forwards a write to every live worker (a worker started later loads the snapshot instead). */
  update(update: ReplicaUpdate): void {
    for (const worker of this.#workers) worker.update(update);
  }

  /**
   * Queues a query behind its tenant's earlier ones, or refuses it with `QUERY_RATE_LIMITED` when
   * the queue is full. Its time limit starts when a worker receives it, not while it waits.
   */
  query(graph: string, sparql: string, limits: QueryLimits): Promise<QueryAnswer> {
    if (this.#closed) return Promise.reject(closedError());
    return new Promise<QueryAnswer>((resolve, reject) => {
      // A full queue throws here, which rejects this promise and keeps nothing.
      this.#queue.enqueue(graph, { graph, sparql, limits, resolve, reject });
      this.#dispatch();
    });
  }

  /** Refuses every waiting query, fails the running ones and stops every worker. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const pending of this.#queue.drain()) pending.reject(closedError());
    await Promise.all(this.#workers.map((worker) => worker.close()));
  }

  /** Starts queued queries on idle workers until either runs out. */
  #dispatch(): void {
    if (this.#closed) return;
    while (this.#workers.some((worker) => !worker.busy)) {
      const next = this.#queue.next();
      if (!next) return;
      const { key, item } = next;
      const worker = this.#idleWorker(key);
      this.#lastTenant.set(worker, key);
      void worker
        .run(item.graph, item.sparql, item.limits)
        .then(item.resolve, item.reject)
        .finally(() => {
          this.#queue.done(key);
          this.#dispatch();
        });
    }
  }

  /**
   * An idle worker for a tenant's query: the one that last ran this tenant's, else a loaded one
   * no tenant has used, else one not started, else any. So a tenant whose runaway query was just
   * stopped waits for its own worker to restart instead of taking the loaded worker another
   * tenant is about to use again: the restart costs the tenant that caused it.
   */
  #idleWorker(tenant: string): ReplicaWorker {
    const idle = this.#workers.filter((worker) => !worker.busy);
    return (
      idle.find((worker) => this.#lastTenant.get(worker) === tenant) ??
      idle.find((worker) => worker.warm && !this.#lastTenant.has(worker)) ??
      idle.find((worker) => !worker.warm) ??
      idle[0]!
    );
  }
}

function bounded(name: string, value: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) throw new RangeError(`${name} must be an integer from 1 to ${max}`);
  return value;
}
