import type { KnowledgeGraph, QueryAnswer, QueryLimits, Triple } from '@toolgate/contracts';
import { Store, namedNode, type NamedNode, type Quad } from 'oxigraph';
import { GraphFileError, NQuadsFile } from './nquads-file.js';
import { QueryEngine, poolSizes, type QueryPoolOptions, type ReplicaSnapshot } from './query-engine.js';
import { checkQuery } from './sparql-guard.js';
import { TENANT_GRAPH_PREFIX, tenantGraphIri, toQuad } from './terms.js';

const NQUADS = 'application/n-quads';

export interface OxigraphKnowledgeGraphOptions {
  /** The N-Quads file the graph lives in (e.g. `<data dir>/knowledge-graph.nq`); in memory only when absent. */
  readonly path?: string;
  /** Longest query text accepted, in characters (default 20 000). */
  readonly maxQueryChars?: number;
  /** Heap cap of each query worker in MiB (default 512). */
  readonly maxQueryHeapMb?: number;
  /** Query worker threads, each holding a replica of the whole graph (default 2). */
  readonly queryWorkers?: number;
  /** Queries of one tenant that may run at the same time (default 1); the rest wait their turn. */
  readonly maxRunningQueriesPerTenant?: number;
  /** Queries of one tenant that may wait; one more is refused with reason `QUERY_RATE_LIMITED` (default 16). */
  readonly maxQueuedQueriesPerTenant?: number;
  /** Queries of all tenants that may wait; one more is refused with reason `QUERY_RATE_LIMITED` (default 256). */
  readonly maxQueuedQueries?: number;
  /**
   * Called once at open when a final line torn by a crash was dropped, so the operator hears of
   * it (the server logs it); the bytes were never acknowledged, everything before them is kept.
   */
  readonly onRecovered?: (recovery: GraphRecovery) => void;
}

/** A torn final line dropped at open. */
export interface GraphRecovery {
  readonly path: string;
  readonly droppedBytes: number;
}

/** What opening found on disk, for the start-up log. */
export interface GraphOpenReport {
  readonly quads: number;
  /** Bytes of a torn final line (a crash mid-append, never acknowledged) that were dropped. */
  readonly droppedBytes: number;
}

/**
 * The knowledge graph on Oxigraph, a real SPARQL 1.1 engine (compiled to WebAssembly).
 *
 * Writes go to an in-memory store in this thread and to the N-Quads file (see {@link NQuadsFile});
 * queries run on a pool of worker threads over per-tenant replicas, shared fairly between tenants
 * (see {@link QueryEngine}), so each one can be stopped at its time limit, sees only its tenant's
 * graph, and one tenant's heavy queries cannot hold up another's. Mutations are serialized.
 * One process owns the file: this adapter is the embedded default, not a shared database.
 */
export class OxigraphKnowledgeGraph implements KnowledgeGraph {
  readonly #store: Store;
  readonly #file: NQuadsFile | undefined;
  readonly #engine: QueryEngine;
  readonly #maxQueryChars: number;
  /** The end of the chain of mutations; each one waits for the one before. */
  #writes: Promise<unknown> = Promise.resolve();
  /** A write failed: the file may not match memory until it is rewritten. */
  #fileSuspect = false;

  /** What was loaded when the graph was opened. */
  readonly opened: GraphOpenReport;

  private constructor(store: Store, file: NQuadsFile | undefined, options: OxigraphKnowledgeGraphOptions, opened: GraphOpenReport) {
    this.#store = store;
    this.#file = file;
    this.#maxQueryChars = options.maxQueryChars ?? 20_000;
    this.#engine = new QueryEngine({ snapshot: () => this.#snapshot(), ...poolOptions(options) });
    this.opened = opened;
  }
  /**
   * Opens the graph, loading the file if it exists. A torn final line is dropped (and reported in
   * `opened`); any other damage, or a quad outside a tenant graph, refuses to open with a
   * {@link GraphFileError} naming the file.
   */
  static async open(options: OxigraphKnowledgeGraphOptions = {}): Promise<OxigraphKnowledgeGraph> {
    // Checked before the file is touched, so bad options leave nothing open or created.
    poolSizes(poolOptions(options));
    const store = new Store();
    if (!options.path) return new OxigraphKnowledgeGraph(store, undefined, options, { quads: 0, droppedBytes: 0 });

    const { file, text, droppedBytes } = await NQuadsFile.open(options.path);
    try {
      store.load(text, { format: NQUADS });
      const stray = store.match().find((q) => q.graph.termType !== 'NamedNode' || !q.graph.value.startsWith(TENANT_GRAPH_PREFIX));
      if (stray) throw new Error(`a quad is outside every tenant graph: ${stray.toString().slice(0, 200)}`);
    } catch (error) {
      await file.close();
      const why = error instanceof Error ? error.message.split('\n', 1)[0] : String(error);
      throw new GraphFileError(options.path, `it is damaged (${why}); restore it from a backup or move it aside`, { cause: error });
    }
    if (droppedBytes > 0) options.onRecovered?.({ path: options.path, droppedBytes });
    return new OxigraphKnowledgeGraph(store, file, options, { quads: store.size, droppedBytes });
  }

  async add(tenant: string, triples: readonly Triple[]): Promise<void> {
    const graph = namedNode(tenantGraphIri(tenant));
    const quads = triples.map((t) => toQuad(t, graph));
    return this.#serialize(async () => {
      const fresh = quads.filter((q) => !this.#store.has(q));
      if (fresh.length === 0) return;
      const nquads = new Store(fresh).dump({ format: NQUADS });
      // Durable first: memory and the query replica change only once the file holds the quads.
      await this.#durable((file) => file.append(nquads), graph);
      for (const q of fresh) this.#store.add(q);
      this.#engine.update({ op: 'add', nquads });
    });
  }

  async replace(tenant: string, subjectPrefix: string, triples: readonly Triple[]): Promise<void> {
    if (typeof subjectPrefix !== 'string' || subjectPrefix.length === 0) throw new TypeError('subjectPrefix must be a non-empty string');
    const graph = namedNode(tenantGraphIri(tenant));
    const quads = triples.map((t) => toQuad(t, graph));
    return this.#serialize(async () => {
      const removed = this.#store
        .match(null, null, null, graph)
        .filter((q) => q.subject.termType === 'NamedNode' && q.subject.value.startsWith(subjectPrefix));
      for (const q of removed) this.#store.delete(q);
      const added: Quad[] = [];
      for (const q of quads) {
        if (this.#store.has(q)) continue;
        this.#store.add(q);
        added.push(q);
      }
      try {
        await this.#durable((file) => file.rewrite(this.#store.dump({ format: NQUADS })));
      } catch (error) {
        // Memory must keep matching the file, which still holds the old triples.
        for (const q of added) this.#store.delete(q);
        for (const q of removed) this.#store.add(q);
        this.#resync(graph);
        throw error;
      }
      this.#resync(graph);
    });
  }

  async query(tenant: string, sparql: string, limits: QueryLimits): Promise<QueryAnswer> {
    checkLimits(limits);
    const graph = tenantGraphIri(tenant);
    checkQuery(sparql, this.#maxQueryChars);
    return this.#engine.query(graph, sparql, limits);
  }

  /** Waits for pending writes, refuses waiting queries, stops every query worker and closes the file. */
  async close(): Promise<void> {
    await this.#writes.catch(() => undefined);
    await this.#engine.close();
    await this.#file?.close();
  }

  /**
   * Runs one file write. A failed append may have left part of a line behind, so after any
   * failure the next write first rewrites the file from memory, which never holds unwritten quads.
   * A worker that read the file meanwhile may hold what the failed write left there, so the
   * tenant's graph in every worker is set back to memory's.
   */
  async #durable(write: (file: NQuadsFile) => Promise<void>, graph?: NamedNode): Promise<void> {
    const file = this.#file;
    if (!file) return;
    try {
      if (this.#fileSuspect) {
        await file.rewrite(this.#store.dump({ format: NQUADS }));
        this.#fileSuspect = false;
      }
      await write(file);
    } catch (error) {
      this.#fileSuspect = true;
      if (graph) this.#resync(graph);
      throw error;
    }
  }

  /** Sets one tenant's graph in every query worker to what memory holds. */
  #resync(graph: NamedNode): void {
    this.#engine.update({
      op: 'replace-graph',
      graph: graph.value,
      nquads: new Store(this.#store.match(null, null, null, graph)).dump({ format: NQUADS }),
    });
  }

  /**
   * What a starting query worker loads: the file, which it reads in its own thread, while the
   * file holds exactly what memory does (every resolved write, torn or failed ones rewritten
   * away); else, in memory only or after a failed write, memory serialized here.
   */
  #snapshot(): ReplicaSnapshot {
    if (this.#file && !this.#fileSuspect) return { path: this.#file.path };
    return { nquads: this.#store.dump({ format: NQUADS }) };
  }

  #serialize(write: () => Promise<void>): Promise<void> {
    const next = this.#writes.then(write);
    this.#writes = next.catch(() => undefined);
    return next;
  }
}

function poolOptions(options: OxigraphKnowledgeGraphOptions): QueryPoolOptions {
  return {
    ...(options.maxQueryHeapMb ? { maxHeapMb: options.maxQueryHeapMb } : {}),
    ...(options.queryWorkers !== undefined ? { workers: options.queryWorkers } : {}),
    ...(options.maxRunningQueriesPerTenant !== undefined ? { maxRunningPerTenant: options.maxRunningQueriesPerTenant } : {}),
    ...(options.maxQueuedQueriesPerTenant !== undefined ? { maxQueuedPerTenant: options.maxQueuedQueriesPerTenant } : {}),
    ...(options.maxQueuedQueries !== undefined ? { maxQueued: options.maxQueuedQueries } : {}),
  };
}

function checkLimits(limits: QueryLimits): void {
  const positive = (name: string, value: number, max: number): void => {
    if (!Number.isSafeInteger(value) || value < 1 || value > max) throw new RangeError(`${name} must be an integer from 1 to ${max}`);
  };
  positive('maxRows', limits.maxRows, 1_000_000);
  positive('maxBytes', limits.maxBytes, 256 * 1024 * 1024);
  positive('timeoutMs', limits.timeoutMs, 10 * 60_000);
}

export { GraphFileError };
