import { createHash } from 'node:crypto';
import { redactSecrets, type Clock, type GatewayListener, type JsonObject, type KnowledgeGraph, type ToolFailure, type Triple } from '@toolgate/contracts';
import { PREFIXES, RDF_TYPE, TG, dateTime, iri, teamMember, text } from './vocabulary.js';

/** Failure messages that say a file, path or resource was not there. */
export const NOT_FOUND_PATTERN = /\bENOENT\b|\bnot found\b|\bno such file\b|\bdoes not exist\b/i;

/** Arguments that name what a tool was looking for, in the order they are preferred. */
const TARGET_ARGS = ['path', 'file', 'file_path', 'filePath', 'filename', 'dir', 'directory', 'cwd', 'url'];

const MAX_TEXT = 1000;

/**
 * A gateway listener that writes "not found" tool failures into the failing tenant's graph as
 * known failures, so the next agent can ask before repeating the same mistake:
 *
 * ```sparql
 * SELECT ?tool ?finding WHERE { ?f a tg:KnownFailure ; tg:about "docs/setup.md" ; tg:tool ?tool ; tg:finding ?finding }
 * ```
 *
 * The same tool, target and message always make the same `failure:<digest>` subject, so a
 * repeated failure adds one `tg:recordedAt` (and possibly a `tg:author`) instead of a new entry.
 * URLs are recorded without credentials, query or fragment; other arguments are never recorded.
 * Every recorded text is redacted with the audit's rules, whoever called the listener: teammates
 * read it back through `memory_query`, so a secret in a path or a message must not reach them.
 */
export function createKnownFailureRecorder(deps: { readonly graph: KnowledgeGraph; readonly clock: Clock }): GatewayListener {
  return {
    async onToolFailure(failure: ToolFailure): Promise<void> {
      if (!NOT_FOUND_PATTERN.test(failure.message)) return;
      const about = clip(targetOf(failure.args) ?? failure.tool);
      const message = clip(failure.message);
      const digest = createHash('sha256').update(`${failure.tool}\u0000${about}\u0000${message}`).digest('hex').slice(0, 32);
      const subject = iri(PREFIXES.failure + digest);
      const triples: Triple[] = [
        { subject, predicate: iri(RDF_TYPE), object: iri(TG.Observation) },
        { subject, predicate: iri(RDF_TYPE), object: iri(TG.KnownFailure) },
        { subject, predicate: iri(TG.tool), object: text(failure.tool) },
        { subject, predicate: iri(TG.about), object: text(about) },
        { subject, predicate: iri(TG.finding), object: text(message) },
        { subject, predicate: iri(TG.author), object: iri(teamMember(failure.principal.id)) },
        { subject, predicate: iri(TG.recordedAt), object: dateTime(deps.clock.now()) },
      ];
      await deps.graph.add(failure.principal.tenant, triples);
    },
  };
}

function targetOf(args: JsonObject): string | undefined {
  for (const name of TARGET_ARGS) {
    const value = args[name];
    if (typeof value !== 'string' || value.trim() === '') continue;
    return name === 'url' ? withoutSecrets(value) : value;
  }
  return undefined;
}

/** A URL as it may be shown to teammates: no userinfo, query or fragment (they carry tokens). */
function withoutSecrets(value: string): string | undefined {
  try {
    const url = new URL(value);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return undefined;
  }
}

/** Well-formed, bounded and without secrets, whatever a tool put in its message or arguments. */
function clip(value: string): string {
  // Redact before clipping, so a cut cannot split a secret into a shape no rule recognises.
  const clean = redactSecrets(value.replaceAll('\u0000', '').replace(/\p{Cs}/gu, '\uFFFD'));
  return clean.length > MAX_TEXT ? `${clean.slice(0, MAX_TEXT)}…` : clean;
}
