import { ToolError, type QueryLimits } from '@toolgate/contracts';
import { timeOnThread } from '@toolgate/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { OxigraphKnowledgeGraph } from './oxigraph-knowledge-graph.js';
import { checkQuery, MAX_QUERY_NESTING, sparqlKeywords, sparqlNesting } from './sparql-guard.js';

describe('sparqlKeywords', () => {
  it('keeps bare keywords and drops everything that only spells one', () => {
    const query = [
      'BASE <http://example.org/drop/> PREFIX insert: <urn:service:>',
      "SELECT ?load $delete WHERE { ?load insert:x 'SERVICE' , \"LOAD\" , '''a ''quoted'' CLEAR''' , \"\"\"x\"\"\"\"",
      '  . ?s <urn:CREATE> _:copy . # MOVE ADD',
      '  FILTER(?load < 3 && ?delete <= 4) }',
    ].join('\n');
    expect(sparqlKeywords(query)).toEqual(['BASE', 'PREFIX', 'SELECT', 'WHERE', 'FILTER']);
  });

  it('treats an escaped backslash or quote inside a string as part of it', () => {
    expect(sparqlKeywords('SELECT ("a\\"b" AS ?x) ("c\\\\" AS ?y) WHERE {}')).toEqual(['SELECT', 'AS', 'AS', 'WHERE']);
  });

  it('decodes codepoint escapes in bare words', () => {
    expect(sparqlKeywords('\\u0053ELECT * { \\U00000053ERVICE <urn:x> {} }')).toEqual(['SELECT', 'SERVICE']);
  });
});

describe('checkQuery', () => {
  it('names the form of a query after its prologue', () => {
    expect(checkQuery('PREFIX ex: <urn:ex:> BASE <urn:b/> select * {}', 1000)).toBe('select');
    expect(checkQuery('# leading comment\nASK {}', 1000)).toBe('ask');
  });

  it('refuses with a ToolError carrying a stable reason', () => {
    const thrown = (query: string): unknown => {
      try {
        checkQuery(query, 1000);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const update = thrown('INSERT DATA {}');
    expect(update).toBeInstanceOf(ToolError);
    expect(update).toMatchObject({ reason: 'QUERY_REFUSED' });
    expect(thrown('SELECT * { SERVICE <urn:x> {} }')).toMatchObject({ reason: 'QUERY_REFUSED', message: expect.stringMatching(/SERVICE is refused/) });
    expect(thrown('SELECT')).toBeUndefined(); // grammar errors are the engine's to report
    expect(thrown('SELEKT * {}')).toMatchObject({ reason: 'QUERY_INVALID' });
  });
});

/** What `checkQuery` throws for a query, or undefined when it lets the query through. */
function refusalOf(query: string, maxChars = 10_000): ToolError | undefined {
  try {
    checkQuery(query, maxChars);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  return undefined;
}

const TOO_DEEP = new RegExp(`^the query nests deeper than ${MAX_QUERY_NESTING} groups, parentheses or brackets \\(\\d+ levels\\)`);
const repeat = (text: string, n: number) => text.repeat(n);

describe('stack exhaustion by nesting', () => {
  // Each spelling nests `n` levels; the engine's stack gave out near 700 groups, 800 OPTIONALs or
  // 2,000 parentheses, and a query of 10,000 characters holds up to 4,990 nested groups.
  const SPELLINGS: [string, (n: number) => string][] = [
    ['nested groups', (n) => `SELECT * WHERE ${repeat('{', n)}${repeat('}', n)}`],
    ['nested OPTIONALs', (n) => `SELECT * WHERE {${repeat('OPTIONAL {', n)}${repeat('}', n)}}`],
    ['nested UNIONs', (n) => `SELECT * WHERE ${repeat('{ {} UNION ', n)}{}${repeat(' }', n)}`],
    ['nested MINUS groups', (n) => `SELECT * WHERE ${repeat('{ ?s ?p ?o MINUS ', n)}{}${repeat(' }', n)}`],
    ['nested sub-SELECTs', (n) => `SELECT * WHERE ${repeat('{ SELECT * WHERE ', n)}{}${repeat(' }', n)}`],
    ['nested GRAPH groups', (n) => `SELECT * WHERE ${repeat('{ GRAPH ?g ', n)}{}${repeat(' }', n)}`],
    ['parentheses in FILTER', (n) => `SELECT * WHERE { FILTER(${repeat('(', n)}1${repeat(')', n)}) }`],
    ['negations in FILTER', (n) => `ASK { FILTER(${repeat('!(', n)}true${repeat(')', n)}) }`],
    ['function calls', (n) => `SELECT * WHERE { BIND(${repeat('STR(', n)}1${repeat(')', n)} AS ?x) }`],
    ['nested EXISTS', (n) => `ASK { FILTER(${repeat('EXISTS { FILTER(', n)}true${repeat(') }', n)}) }`],
    ['blank-node property lists', (n) => `SELECT * WHERE { ${repeat('[ <urn:p> ', n)}1${repeat(' ]', n)} }`],
    ['nested collections', (n) => `SELECT * WHERE { ?s <urn:p> ${repeat('(', n)}1${repeat(')', n)} }`],
    ['a less-than whose operand the scan could take for an IRI', (n) => `ASK { FILTER(1<${repeat('(', n)}1${repeat(')', n)}>0) }`],
    ['groups, parentheses and brackets mixed', (n) => `ASK ${Array.from({ length: n }, (_, i) => ['{ FILTER(', '(', '{'][i % 3]).join('')}true${repeat(')', n)}`],
  ];

  it.each(SPELLINGS.flatMap(([name, build]) => [900, 4_000, MAX_QUERY_NESTING + 1].map((n) => [name, n, build] as const)))(
    'refuses %s %i deep with QUERY_REFUSED, before the engine sees it',
    (_name, n, build) => {
      const query = build(n).slice(0, 10_000);
      const refusal = refusalOf(query);
      expect(refusal).toMatchObject({ reason: 'QUERY_REFUSED', message: expect.stringMatching(TOO_DEEP) });
      expect(refusal?.message).not.toMatch(/memory|stack|wasm|out of bounds/i);
    },
  );

  it.each(SPELLINGS.filter(([name]) => !name.includes('mixed')))('lets %s at the limit through', (_name, build) => {
    // 30 levels of any spelling (at most two brackets each, plus its own) stay within the limit.
    const query = build(30);
    expect(sparqlNesting(query)).toBeLessThanOrEqual(MAX_QUERY_NESTING);
    expect(refusalOf(query)?.message ?? '').not.toMatch(TOO_DEEP);
  });

  it.each([
    ['a short string', `SELECT * WHERE { ?s ?p "${repeat('{(', 300)}" }`],
    ['a single-quoted string with escaped quotes', `SELECT * WHERE { ?s ?p '\\'${repeat('{', 300)}\\'' }`],
    ['a long string over several lines', `SELECT * WHERE { ?s ?p """${repeat('{\n"(', 300)}""" }`],
    ['a long single-quoted string', `SELECT * WHERE { ?s ?p '''${repeat("[{'", 300)}''' }`],
    ['a comment', `SELECT * WHERE { # ${repeat('{([', 300)}\n ?s ?p ?o }`],
    ['IRIs', `SELECT * WHERE { <http://[::1]/${repeat('(x)', 300)}> <urn:a_(b)> ?o . ?s <urn:${repeat(')', 300)}> ?o }`],
    ['balanced parentheses in many IRIs', `SELECT * WHERE { ${repeat('<http://en.wikipedia.org/wiki/A_(b)> <urn:p> <urn:c_[d]> . ', 100)} }`],
    ['escaped local names', `PREFIX ex: <urn:ex:> SELECT * WHERE { ${repeat('ex:a\\(\\( ', 200)} ?p ?o }`],
  ])('does not count brackets inside %s', (_where, query) => {
    expect(sparqlNesting(query)).toBeLessThanOrEqual(2);
    expect(refusalOf(query)).toBeUndefined();
  });

  it('counts an opener left open inside <…>, which a less-than reading would close outside it', () => {
    expect(sparqlNesting(`ASK { FILTER(1<${repeat('(', 100)}1>0${repeat(')', 100)}) }`)).toBe(102);
  });

  it('is not lowered by closers an IRI holds, nor by closers the engine would read as an IRI', () => {
    // The engine reads `<urn:)))…>` as one IRI; were its closers counted, 40 + 40 groups would pass as 40.
    const closersInIri = `SELECT * WHERE ${repeat('{', 40)} ?s <urn:${repeat(')', 80)}> ?o ${repeat('{', 40)}${repeat('}', 80)}`;
    expect(sparqlNesting(closersInIri)).toBe(80);
    expect(refusalOf(closersInIri)).toMatchObject({ reason: 'QUERY_REFUSED', message: expect.stringMatching(TOO_DEEP) });
    // Read as less-than and greater-than, `<((…>` opens real parentheses that close outside it.
    const operators = `ASK { FILTER(1<${repeat('(', 40)}1>0${repeat(')', 40)}) ${repeat('{', 40)}${repeat('}', 40)} }`;
    expect(sparqlNesting(operators)).toBeGreaterThanOrEqual(41);
    expect(refusalOf(`ASK { FILTER(${repeat('(', 30)}1<${repeat('(', 40)}1>0${repeat(')', 70)}) }`)).toMatchObject({ message: expect.stringMatching(TOO_DEEP) });
  });

  it('scans in linear time, whatever the query is made of', () => {
    for (const query of [repeat('{', 10_000), repeat('<a', 5_000), repeat('<(', 5_000), `SELECT * { ${repeat('"{" ', 2_400)} }`, repeat('# {\n', 2_500)]) {
      expect(timeOnThread(() => sparqlNesting(query)).ms).toBeLessThan(50);
    }
  });

  describe('through the engine', () => {
    const LIMITS: QueryLimits = { maxRows: 100, maxBytes: 64 * 1024, timeoutMs: 5_000 };
    let graph: OxigraphKnowledgeGraph | undefined;
    afterAll(async () => graph?.close());
    const ready = async (): Promise<OxigraphKnowledgeGraph> => {
      if (graph) return graph;
      graph = await OxigraphKnowledgeGraph.open({});
      await graph.add('acme', [
        { subject: { type: 'iri', value: 'urn:ex:alice' }, predicate: { type: 'iri', value: 'urn:ex:knows' }, object: { type: 'iri', value: 'urn:ex:bob' } },
        { subject: { type: 'iri', value: 'urn:ex:bob' }, predicate: { type: 'iri', value: 'urn:ex:says' }, object: { type: 'literal', value: 'hi {(' } },
      ]);
      return graph;
    };
    const errorOf = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (e: unknown) => e as ToolError,
      );

    it('still answers an ordinary nested query (OPTIONAL, UNION, sub-SELECT, FILTER)', async () => {
      const g = await ready();
      const query = `PREFIX ex: <urn:ex:>
        SELECT ?who ?said WHERE {
          { SELECT ?who WHERE { { ?who ex:knows ?x } UNION { ?x ex:knows ?who } } }
          OPTIONAL { ?who ex:says ?said FILTER(((STRLEN(?said) > 0)) && CONTAINS(?said, "{(")) }
        } ORDER BY ?who`;
      expect(await g.query('acme', query, LIMITS)).toMatchObject({ rows: [{ who: 'urn:ex:alice' }, { who: 'urn:ex:bob', said: 'hi {(' }] });
    });

    it('refuses the red team\'s queries with a clear reason, and keeps answering', async () => {
      const g = await ready();
      for (const query of [
        `SELECT * WHERE {${repeat('OPTIONAL {', 900)}${repeat('}', 900)}}`,
        `SELECT * WHERE ${repeat('{', 4_990)}${repeat('}', 4_990)}`,
        `SELECT * WHERE ${repeat('{', 3_000)}${repeat('}', 3_000)}`,
      ]) {
        expect(await errorOf(g.query('acme', query, LIMITS))).toMatchObject({ reason: 'QUERY_REFUSED', message: expect.stringMatching(TOO_DEEP) });
      }
      expect(await g.query('acme', 'ASK { <urn:ex:alice> <urn:ex:knows> <urn:ex:bob> }', LIMITS)).toEqual({ kind: 'boolean', value: true });
    });

    it('answers a query that exhausts the engine another way with a generic message, and a fresh engine takes the next query', async () => {
      const g = await ready();
      // Not nesting but a flat chain of 3,000 operators, which the engine also folds recursively.
      const chain = `ASK { FILTER(1${repeat('||1', 3_000)}) }`;
      const error = await errorOf(g.query('acme', chain, LIMITS));
      expect(error).toMatchObject({ reason: 'QUERY_FAILED', message: expect.stringMatching(/too complex for the engine/) });
      expect(error?.message).not.toMatch(/memory access|out of bounds|call stack|RuntimeError/i);
      // Without a fresh engine every later query failed the same way.
      expect(await g.query('acme', 'ASK { <urn:ex:alice> <urn:ex:knows> <urn:ex:bob> }', LIMITS)).toEqual({ kind: 'boolean', value: true });
    });
  });
});
