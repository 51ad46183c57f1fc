import { createHash } from 'node:crypto';
import {
  BuiltInRoles,
  flattenText,
  redactSecrets,
  type Clock,
  type GatewayListener,
  type JsonObject,
  type KnowledgeGraph,
  type Principal,
  type PrincipalDirectory,
  type Provenance,
  type ToolFailure,
  type Triple,
} from '@toolgate/contracts';
import { memoryWriteManifest } from './memory.tools.js';
import { PREFIXES, RDF_TYPE, TG, dateTime, iri, teamMember, text } from './vocabulary.js';

/** Failure messages that say a file, path or resource was not there. */
export const NOT_FOUND_PATTERN = /\bENOENT\b|\bnot found\b|\bno such file\b|\bdoes not exist\b/i;

/** Arguments that name what a tool was looking for, in the order they are preferred. */
const TARGET_ARGS = ['path', 'file', 'file_path', 'filePath', 'filename', 'dir', 'directory', 'cwd', 'url'];

const MAX_TEXT = 1000;

const BUILT_IN_ROLES: readonly string[] = Object.values(BuiltInRoles);

/** What the recorder needs to know besides the graph: who may write memory, and whose tool failed. */
export interface KnownFailureRecorderDeps {
  readonly graph: KnowledgeGraph;
  readonly clock: Clock;
  /** Answers whether the failing principal may write the shared memory itself. */
  readonly directory: PrincipalDirectory;
  /**
   * The provenance of a registered tool by name, undefined when it is not registered (any more).
   * Only `first-party` failures are recorded: an MCP server's error text is the server's words.
   */
  readonly provenanceOf: (tool: string) => Provenance | undefined;
}

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
 * It is also flattened to one visible line (`flattenText`), so a path cannot pose as a note.
 *
 * A failure is stored with its caller as `tg:author`, so it is recorded only when that caller
 * could have written the same text with `memory_write` (the tool allowed for it and a standing
 * grant covering its permissions): a principal without memory rights must not gain them through
 * a crafted path. And only failures of first-party tools are recorded: an MCP server's error text
 * is the server's words, which stored under the caller's name would reach teammates as theirs.
 */
export function createKnownFailureRecorder(deps: KnownFailureRecorderDeps): GatewayListener {
  return {
    async onToolFailure(failure: ToolFailure): Promise<void> {
      if (!NOT_FOUND_PATTERN.test(failure.message)) return;
      if (deps.provenanceOf(failure.tool) !== 'first-party') return;
      if (!mayWriteMemory(deps.directory, failure.principal)) return;
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

/**
 * The allow and permissions gates' answer for `memory_write`, asked of the directory (tools do not
 * import the gateway): the tenant allows it, one of the principal's roles grants it, and the
 * standing grants of its roles (not the built-in ones, which hold no permissions) and of its
 * tenant cover every permission the tool needs. An unknown tenant or role gives nothing.
 */
function mayWriteMemory(directory: PrincipalDirectory, principal: Principal): boolean {
  const tool = memoryWriteManifest.name;
  const tenant = directory.tenant(principal.tenant);
  if (!tenant || !(tenant.tools.includes('*') || tenant.tools.includes(tool))) return false;
  const roleAllows = principal.roles.some((role) => {
    const tools = directory.roleTools(role);
    return tools !== undefined && (tools.includes('*') || tools.includes(tool));
  });
  if (!roleAllows) return false;
  const standing = [...principal.roles.filter((role) => !BUILT_IN_ROLES.includes(role)).flatMap((role) => directory.roleGrants(role) ?? []), ...tenant.grants];
  return memoryWriteManifest.permissions.every((p) => standing.some((g) => g.type === p.type && (g.scope === '*' || g.scope === p.scope)));
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

/** One visible line, bounded and without secrets, whatever a tool put in its message or arguments. */
function clip(value: string): string {
  // Redact before clipping, so a cut cannot split a secret into a shape no rule recognises; and
  // both before flattening (a control inside a secret becomes a space that would end it early)
  // and after (removing a zero-width character can join `pass\u200Bword=` into a key name).
  return flattenText(redactSecrets(flattenText(redactSecrets(value), Number.POSITIVE_INFINITY)), MAX_TEXT);
}
