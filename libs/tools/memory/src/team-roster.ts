import type { KnowledgeGraph, PrincipalDirectory, Triple } from '@toolgate/contracts';
import { PREFIXES, RDF_TYPE, RDFS_LABEL, TG, iri, teamMember, text } from './vocabulary.js';

/** What was written for one tenant. */
export interface RosterSummary {
  readonly tenant: string;
  readonly members: number;
}

/**
 * Writes each tenant's team into its graph, replacing the roster written at the previous start:
 * one `team:<principal>` subject per principal with its id, roles, and the tools it can call
 * (the role map resolved, `*` expanded to what the tenant allows, limited to registered tools),
 * so agents can ask the graph who can do what before delegating.
 *
 * ```sparql
 * SELECT ?who WHERE { ?m tg:canUse "shell" ; tg:principal ?who }
 * ```
 */
export async function seedTeamRoster(
  graph: KnowledgeGraph,
  directory: PrincipalDirectory,
  allToolNames: readonly string[],
): Promise<RosterSummary[]> {
  const summaries: RosterSummary[] = [];
  for (const tenant of directory.tenants()) {
    const policy = directory.tenant(tenant);
    const registered = new Set(allToolNames);
    const allowed = !policy ? new Set<string>() : policy.tools.includes('*') ? registered : new Set(policy.tools.filter((t) => registered.has(t)));

    const principals = directory.principals(tenant);
    const triples: Triple[] = [];
    for (const principal of principals) {
      const member = iri(teamMember(principal.id));
      triples.push(
        { subject: member, predicate: iri(RDF_TYPE), object: iri(TG.TeamMember) },
        { subject: member, predicate: iri(TG.principal), object: text(principal.id) },
        { subject: member, predicate: iri(RDFS_LABEL), object: text(principal.id) },
      );
      const tools = new Set<string>();
      for (const role of principal.roles) {
        triples.push({ subject: member, predicate: iri(TG.role), object: text(role) });
        // An unknown role grants nothing; `*` grants whatever the tenant allows.
        for (const tool of directory.roleTools(role) ?? []) {
          if (tool === '*') allowed.forEach((t) => tools.add(t));
          else if (allowed.has(tool)) tools.add(tool);
        }
      }
      for (const tool of [...tools].sort()) triples.push({ subject: member, predicate: iri(TG.canUse), object: text(tool) });
    }
    await graph.replace(tenant, PREFIXES.team, triples);
    summaries.push({ tenant, members: principals.length });
  }
  return summaries;
}
