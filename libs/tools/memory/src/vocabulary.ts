import type { GraphTerm } from '@toolgate/contracts';

/**
 * The shared-memory vocabulary. Every IRI is a URN under `urn:toolgate:`: the names are stable
 * and resolve nowhere, so nothing in a query ever reaches the network.
 */
export const PREFIXES = {
  /** Classes and properties of Toolgate's memory. */
  tg: 'urn:toolgate:vocab:',
  /** Team members: `team:<principal>` (percent-encoded id). The same IRIs are message actors. */
  team: 'urn:toolgate:team:',
  /** Observations written with `memory_write`. */
  obs: 'urn:toolgate:observation:',
  /** Known failures recorded from tool errors. */
  failure: 'urn:toolgate:failure:',
  rdf: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#',
  rdfs: 'http://www.w3.org/2000/01/rdf-schema#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
} as const;

/** The PREFIX lines `memory_query` declares for the caller (a query may redeclare any of them). */
export const QUERY_PROLOGUE = Object.entries(PREFIXES)
  .map(([name, iri]) => `PREFIX ${name}: <${iri}>`)
  .join(' ');

export const TG = {
  Observation: `${PREFIXES.tg}Observation`,
  KnownFailure: `${PREFIXES.tg}KnownFailure`,
  TeamMember: `${PREFIXES.tg}TeamMember`,
  about: `${PREFIXES.tg}about`,
  finding: `${PREFIXES.tg}finding`,
  author: `${PREFIXES.tg}author`,
  recordedAt: `${PREFIXES.tg}recordedAt`,
  tool: `${PREFIXES.tg}tool`,
  principal: `${PREFIXES.tg}principal`,
  role: `${PREFIXES.tg}role`,
  canUse: `${PREFIXES.tg}canUse`,
} as const;

export const RDF_TYPE = `${PREFIXES.rdf}type`;
export const RDFS_LABEL = `${PREFIXES.rdfs}label`;

/** The IRI of a principal of the team. */
export function teamMember(principal: string): string {
  return PREFIXES.team + encodeURIComponent(principal);
}

export const iri = (value: string): GraphTerm => ({ type: 'iri', value });
export const text = (value: string): GraphTerm => ({ type: 'literal', value });
export const dateTime = (epochMs: number): GraphTerm => ({
  type: 'literal',
  value: new Date(epochMs).toISOString(),
  datatype: `${PREFIXES.xsd}dateTime`,
});
