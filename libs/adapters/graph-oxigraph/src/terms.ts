import type { GraphTerm, Triple } from '@toolgate/contracts';
import { literal, namedNode, quad, type Literal, type NamedNode, type Quad } from 'oxigraph';

/** Every tenant's named graph is `urn:toolgate:tenant:<percent-encoded tenant>`. */
export const TENANT_GRAPH_PREFIX = 'urn:toolgate:tenant:';

/** The IRI of a tenant's named graph. Percent-encoding keeps any tenant name a valid IRI. */
export function tenantGraphIri(tenant: string): string {
  if (typeof tenant !== 'string' || tenant.length === 0) throw new TypeError('tenant must be a non-empty string');
  return TENANT_GRAPH_PREFIX + encodeURIComponent(tenant);
}

/** A surrogate code unit without its pair: the engine would silently store U+FFFD instead. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Converts a triple to a quad in `graph`, refusing anything that would not read back the same. */
export function toQuad(triple: Triple, graph: NamedNode): Quad {
  const subject = triple.subject;
  if (subject.type !== 'iri') throw new TypeError('a triple subject must be an IRI');
  if (triple.predicate.type !== 'iri') throw new TypeError('a triple predicate must be an IRI');
  return quad(toIri(subject.value, 'subject'), toIri(triple.predicate.value, 'predicate'), toObject(triple.object), graph);
}

function toObject(term: GraphTerm): NamedNode | Literal {
  if (term.type === 'iri') return toIri(term.value, 'object');
  if (typeof term.value !== 'string' || LONE_SURROGATE.test(term.value)) {
    throw new TypeError('a literal must be well-formed Unicode text');
  }
  if (term.language !== undefined) {
    try {
      return literal(term.value, term.language);
    } catch {
      throw new TypeError(`'${term.language}' is not a valid language tag`);
    }
  }
  return term.datatype === undefined ? literal(term.value) : literal(term.value, toIri(term.datatype, 'datatype'));
}

function toIri(value: string, role: string): NamedNode {
  if (typeof value !== 'string' || LONE_SURROGATE.test(value)) throw new TypeError(`the ${role} IRI must be a string`);
  try {
    return namedNode(value);
  } catch (error) {
    // The engine names the offending character; the IRI itself may be long, so it is cut.
    const why = error instanceof Error ? error.message : String(error);
    throw new TypeError(`the ${role} '${value.slice(0, 80)}' is not an absolute IRI (${why})`);
  }
}
