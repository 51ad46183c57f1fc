import { randomUUID } from 'node:crypto';
import {
  ToolError,
  type Clock,
  type JsonObject,
  type KnowledgeGraph,
  type QueryLimits,
  type ToolContext,
  type ToolDefinition,
  type ToolManifest,
  type Triple,
} from '@toolgate/contracts';
import { PREFIXES, QUERY_PROLOGUE, RDF_TYPE, TG, dateTime, iri, teamMember, text } from './vocabulary.js';

export const MAX_ABOUT_CHARS = 300;
export const MAX_FINDING_CHARS = 4000;
export const MAX_QUERY_CHARS = 10_000;

/** Bounds of one `memory_query` call unless the composition root sets others. */
export const DEFAULT_QUERY_LIMITS: QueryLimits = { maxRows: 200, maxBytes: 64 * 1024, timeoutMs: 3_000 };

export interface MemoryToolDeps {
  readonly graph: KnowledgeGraph;
  readonly clock: Clock;
  readonly limits?: Partial<QueryLimits>;
  /** Id of each observation (default: a random UUID). */
  readonly newId?: () => string;
}

export const memoryWriteManifest: ToolManifest = {
  name: 'memory_write',
  version: '1.0.0',
  description:
    "Records a finding in your team's shared memory (a knowledge graph), with you as author and the current time. " +
    'Teammates find it with memory_query, e.g. SELECT ?finding WHERE { ?o tg:about "src/app.ts" ; tg:finding ?finding }.',
  provenance: 'first-party',
  risk: 'low',
  permissions: [{ type: 'memory', scope: 'write' }],
  input: {
    type: 'object',
    properties: {
      about: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_ABOUT_CHARS,
        description: "What the finding is about: a file path, a URL, a principal ('team:worker-1'), a topic.",
      },
      finding: { type: 'string', minLength: 1, maxLength: MAX_FINDING_CHARS, description: 'What you found, in plain text.' },
    },
    required: ['about', 'finding'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      about: { type: 'string' },
      author: { type: 'string' },
      recordedAt: { type: 'string' },
    },
    required: ['id', 'about', 'author', 'recordedAt'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 5000,
};

export const memoryQueryManifest: ToolManifest = {
  name: 'memory_query',
  version: '1.0.0',
  description:
    "Answers a SPARQL 1.1 SELECT or ASK query over your team's shared memory. Prefixes tg:, team:, obs:, failure:, rdf:, rdfs: and xsd: " +
    'are declared for you. Observations: ?o a tg:Observation ; tg:about ?about ; tg:finding ?finding ; tg:author ?who ; tg:recordedAt ?when. ' +
    'Team: ?m a tg:TeamMember ; tg:principal ?id ; tg:role ?role ; tg:canUse ?tool. Known failures: ?f a tg:KnownFailure ; tg:tool ?tool ; tg:about ?path. ' +
    'Updates, LOAD, SERVICE, CONSTRUCT and DESCRIBE are refused; results are capped.',
  provenance: 'first-party',
  risk: 'low',
  permissions: [{ type: 'memory', scope: 'read' }],
  input: {
    type: 'object',
    properties: {
      sparql: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'A SPARQL SELECT or ASK query.' },
    },
    required: ['sparql'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      kind: { enum: ['boolean', 'bindings'] },
      value: { type: 'boolean' },
      variables: { type: 'array', items: { type: 'string' } },
      rows: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } },
      truncated: { type: 'boolean' },
    },
    required: ['kind'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  // Queries run one at a time; this leaves room to wait behind one that uses its whole time limit.
  timeoutMs: 15_000,
  maxOutputBytes: 256 * 1024,
};

/**
 * `memory_write` and `memory_query`: the team's shared memory as an RDF graph per tenant. The
 * tenant and the author come from the authenticated principal; a finding is stored as literal
 * data, never spliced into SPARQL, so no text can change what a query or a write does.
 */
export function createMemoryTools(deps: MemoryToolDeps): ToolDefinition[] {
  const newId = deps.newId ?? randomUUID;
  const limits: QueryLimits = { ...DEFAULT_QUERY_LIMITS, ...deps.limits };

  const write = async (args: JsonObject, ctx: ToolContext) => {
    const about = plainText('about', args['about'], MAX_ABOUT_CHARS);
    const finding = plainText('finding', args['finding'], MAX_FINDING_CHARS);
    const at = deps.clock.now();
    const id = PREFIXES.obs + newId();
    const author = teamMember(ctx.principal.id);
    const triples: Triple[] = [
      { subject: iri(id), predicate: iri(RDF_TYPE), object: iri(TG.Observation) },
      { subject: iri(id), predicate: iri(TG.about), object: text(about) },
      { subject: iri(id), predicate: iri(TG.finding), object: text(finding) },
      { subject: iri(id), predicate: iri(TG.author), object: iri(author) },
      { subject: iri(id), predicate: iri(TG.recordedAt), object: dateTime(at) },
    ];
    await deps.graph.add(ctx.principal.tenant, triples);
    return { id, about, author, recordedAt: new Date(at).toISOString() };
  };

  const query = async (args: JsonObject, ctx: ToolContext) => {
    const sparql = args['sparql'];
    if (typeof sparql !== 'string' || sparql.trim() === '') {
      throw new ToolError('the query is empty: write a SPARQL SELECT or ASK query', 'QUERY_INVALID');
    }
    if (sparql.length > MAX_QUERY_CHARS) {
      throw new ToolError(`the query is ${sparql.length} characters long; at most ${MAX_QUERY_CHARS} are accepted`, 'QUERY_REFUSED');
    }
    try {
      // The prologue is one line of its own, so positions in errors shift by exactly one line.
      const answer = await deps.graph.query(ctx.principal.tenant, `${QUERY_PROLOGUE}\n${sparql}`, limits);
      const output: JsonObject =
        answer.kind === 'boolean'
          ? { kind: answer.kind, value: answer.value }
          : { kind: answer.kind, variables: [...answer.variables], rows: answer.rows.map((row) => ({ ...row })), truncated: answer.truncated };
      return output;
    } catch (error) {
      if (error instanceof ToolError) throw new ToolError(unshiftPosition(error.message), error.reason);
      throw error;
    }
  };

  return [
    { manifest: memoryWriteManifest, handler: { invoke: write } },
    { manifest: memoryQueryManifest, handler: { invoke: query } },
  ];
}

/** `error at 2:5` in the prologued query is `error at 1:5` in the caller's text. */
function unshiftPosition(message: string): string {
  return message.replace(/\berror at (\d+):(\d+)/, (whole, line: string, column: string) => {
    const n = Number(line);
    return n > 1 ? `error at ${n - 1}:${column}` : whole;
  });
}

/** A surrogate code unit without its pair: it could not be stored as given. */
const LONE_SURROGATE = /\p{Cs}/u;

function plainText(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ToolError(`'${field}' is empty: give it some text`, 'INVALID_ARGUMENT');
  if (value.length > max) throw new ToolError(`'${field}' is ${value.length} characters long; at most ${max} are accepted`, 'INVALID_ARGUMENT');
  if (value.includes('\u0000') || LONE_SURROGATE.test(value)) {
    throw new ToolError(`'${field}' must be plain text (no NUL characters or broken Unicode)`, 'INVALID_ARGUMENT');
  }
  return value;
}
