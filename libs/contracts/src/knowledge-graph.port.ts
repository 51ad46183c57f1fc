import { token, type Token } from './token.js';

/** An RDF term in a triple written by the gateway's tools. IRIs must be absolute. */
export type GraphTerm =
  | { readonly type: 'iri'; readonly value: string }
  | { readonly type: 'literal'; readonly value: string; readonly datatype?: string; readonly language?: string };

/** One statement of a tenant's graph. */
export interface Triple {
  /** What the statement is about (an IRI). */
  readonly subject: GraphTerm;
  /** The relation (an IRI). */
  readonly predicate: GraphTerm;
  /** The value: an IRI or a literal. */
  readonly object: GraphTerm;
}

/** Bounds of one query. */
export interface QueryLimits {
  /** Rows beyond this are cut and the answer is marked `truncated`. */
  readonly maxRows: number;
  /** Serialized rows beyond this many UTF-8 bytes are cut and the answer is marked `truncated`. */
  readonly maxBytes: number;
  /** A query still running after this long is stopped and refused with reason `QUERY_TIMEOUT`. */
  readonly timeoutMs: number;
}

/**
 * What a query answered. Row values are the terms' lexical values (IRIs without brackets,
 * literals without quotes or datatype; blank nodes as `_:label`); unbound variables are absent.
 */
export type QueryAnswer =
  | { readonly kind: 'boolean'; readonly value: boolean }
  | {
      readonly kind: 'bindings';
      readonly variables: readonly string[];
      readonly rows: readonly Readonly<Record<string, string>>[];
      readonly truncated: boolean;
    };

/**
 * A tenant-scoped RDF store: each tenant writes and reads only its own named graph, and no query
 * form (`GRAPH ?g`, `FROM`, `FROM NAMED`) reaches another tenant's data. Only SPARQL SELECT and ASK
 * are answered; updates, LOAD, SERVICE, CONSTRUCT and DESCRIBE are refused. Refusals and failures
 * are `ToolError`s with a caller-readable message and reason `QUERY_REFUSED`, `QUERY_INVALID`,
 * `QUERY_TIMEOUT` or `QUERY_FAILED`.
 */
export interface KnowledgeGraph {
  /** Adds triples to the tenant's graph; durable when the promise resolves. */
  add(tenant: string, triples: readonly Triple[]): Promise<void>;
  /**
   * Atomically removes every triple of the tenant whose subject IRI starts with `subjectPrefix`
   * and adds `triples`: for derived data that is rebuilt, such as the team roster at start.
   */
  replace(tenant: string, subjectPrefix: string, triples: readonly Triple[]): Promise<void>;
  /**
   * Answers a SPARQL SELECT or ASK over the tenant's graph only, within `limits`; anything else is
   * refused with a `ToolError` (see above).
   */
  query(tenant: string, sparql: string, limits: QueryLimits): Promise<QueryAnswer>;
}
/** The shared-memory graph; `apps/server` binds the Oxigraph adapter (a file in the data dir). */
export const KnowledgeGraphToken: Token<KnowledgeGraph> = token('KnowledgeGraph');
