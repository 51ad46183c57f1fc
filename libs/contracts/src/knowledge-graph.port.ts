import { token, type Token } from './token.js';

/** An RDF term in a triple written by the gateway's tools. */
export type GraphTerm =
  | { readonly type: 'iri'; readonly value: string }
  | { readonly type: 'literal'; readonly value: string; readonly datatype?: string; readonly language?: string };

export interface Triple {
  readonly subject: GraphTerm;
  readonly predicate: GraphTerm;
  readonly object: GraphTerm;
}

/** Bounds of one query. */
export interface QueryLimits {
  readonly maxRows: number;
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

export type QueryAnswer =
  | { readonly kind: 'boolean'; readonly value: boolean }
  | {
      readonly kind: 'bindings';
      readonly variables: readonly string[];
      readonly rows: readonly Readonly<Record<string, string>>[];
      readonly truncated: boolean;
    };

/**
 * A tenant-scoped RDF store: each tenant writes and reads only its own named graph. Only SPARQL
 * SELECT and ASK are answered; updates, LOAD and SERVICE are refused.
 */
export interface KnowledgeGraph {
  add(tenant: string, triples: readonly Triple[]): Promise<void>;
  query(tenant: string, sparql: string, limits: QueryLimits): Promise<QueryAnswer>;
}
export const KnowledgeGraphToken: Token<KnowledgeGraph> = token('KnowledgeGraph');
