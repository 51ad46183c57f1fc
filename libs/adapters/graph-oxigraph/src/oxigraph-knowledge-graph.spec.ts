import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError, type GraphTerm, type QueryAnswer, type QueryLimits, type Triple } from '@toolgate/contracts';
import { timeLessCpuWait } from '@toolgate/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { GraphFileError, OxigraphKnowledgeGraph } from './oxigraph-knowledge-graph.js';
import { tenantGraphIri } from './terms.js';

const LIMITS: QueryLimits = { maxRows: 100, maxBytes: 64 * 1024, timeoutMs: 5_000 };
const dir = mkdtempSync(join(tmpdir(), 'toolgate-graph-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const open: OxigraphKnowledgeGraph[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((g) => g.close()));
});
async function openGraph(path?: string): Promise<OxigraphKnowledgeGraph> {
  const graph = await OxigraphKnowledgeGraph.open(path ? { path } : {});
  open.push(graph);
  return graph;
}

const iri = (value: string): GraphTerm => ({ type: 'iri', value });
const lit = (value: string): GraphTerm => ({ type: 'literal', value });
const says = (subject: string, text: string): Triple => ({ subject: iri(subject), predicate: iri('urn:ex:says'), object: lit(text) });

function rows(answer: QueryAnswer): readonly Readonly<Record<string, string>>[] {
  if (answer.kind !== 'bindings') throw new Error(`expected bindings, got ${answer.kind}`);
  return answer.rows;
}

async function refusal(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

describe('OxigraphKnowledgeGraph', () => {
  describe('round trips', () => {
    it('answers SELECT with the variables in order and ASK with a boolean', async () => {
      const graph = await openGraph();
      await graph.add('acme', [
        says('urn:ex:alice', 'hello'),
        { subject: iri('urn:ex:alice'), predicate: iri('urn:ex:age'), object: { type: 'literal', value: '42', datatype: 'http://www.w3.org/2001/XMLSchema#integer' } },
        { subject: iri('urn:ex:alice'), predicate: iri('urn:ex:greeting'), object: { type: 'literal', value: 'bonjour', language: 'fr' } },
        { subject: iri('urn:ex:alice'), predicate: iri('urn:ex:knows'), object: iri('urn:ex:bob') },
      ]);

      const answer = await graph.query(
        'acme',
        'PREFIX ex: <urn:ex:> SELECT ?who ?age ?friend WHERE { ?who ex:age ?age ; ex:knows ?friend . FILTER(?age > 40) }',
        LIMITS,
      );
      expect(answer).toEqual({
        kind: 'bindings',
        variables: ['who', 'age', 'friend'],
        rows: [{ who: 'urn:ex:alice', age: '42', friend: 'urn:ex:bob' }],
        truncated: false,
      });
      expect(rows(await graph.query('acme', 'SELECT ?g WHERE { <urn:ex:alice> <urn:ex:greeting> ?g FILTER(lang(?g) = "fr") }', LIMITS))).toEqual([
        { g: 'bonjour' },
      ]);
      expect(await graph.query('acme', 'ASK { <urn:ex:alice> <urn:ex:says> "hello" }', LIMITS)).toEqual({ kind: 'boolean', value: true });
      expect(await graph.query('acme', 'ask { <urn:ex:alice> <urn:ex:says> "bye" }', LIMITS)).toEqual({ kind: 'boolean', value: false });
    });

    it('leaves unbound variables out of a row and answers an empty graph with no rows', async () => {
      const graph = await openGraph();
      await graph.add('acme', [says('urn:ex:a', 'x')]);
      expect(rows(await graph.query('acme', 'SELECT ?s ?missing WHERE { ?s ?p ?o OPTIONAL { ?s <urn:ex:nope> ?missing } }', LIMITS))).toEqual([
        { s: 'urn:ex:a' },
      ]);
      expect(await graph.query('empty-tenant', 'SELECT ?s WHERE { ?s ?p ?o }', LIMITS)).toEqual({
        kind: 'bindings',
        variables: ['s'],
        rows: [],
        truncated: false,
      });
    });

    it('sees a write as soon as add resolves', async () => {
      const graph = await openGraph();
      for (let i = 0; i < 5; i++) {
        await graph.add('acme', [says(`urn:ex:n${i}`, `v${i}`)]);
        expect(rows(await graph.query('acme', 'SELECT ?s WHERE { ?s ?p ?o }', LIMITS))).toHaveLength(i + 1);
      }
    });

    it('stores hostile text as data: a literal cannot inject SPARQL or N-Quads', async () => {
      const graph = await openGraph(join(dir, 'inject.nq'));
      const hostile = '"} ; DROP ALL ; INSERT DATA { <urn:x> <urn:y> <urn:z> } #\n<urn:a> <urn:b> <urn:c> <urn:toolgate:tenant:other> .\n\\"\'\'\'';
      await graph.add('acme', [says('urn:ex:mallory', hostile)]);
      const answer = rows(await graph.query('acme', 'SELECT ?s ?p ?o WHERE { ?s ?p ?o }', LIMITS));
      expect(answer).toEqual([{ s: 'urn:ex:mallory', p: 'urn:ex:says', o: hostile }]);
      await graph.close();

      const reopened = await openGraph(join(dir, 'inject.nq'));
      expect(reopened.opened.quads).toBe(1);
      expect(rows(await reopened.query('acme', 'SELECT ?o WHERE { ?s ?p ?o }', LIMITS))).toEqual([{ o: hostile }]);
      expect(rows(await reopened.query('other', 'SELECT ?s WHERE { ?s ?p ?o }', LIMITS))).toEqual([]);
    });

    it('refuses triples that would not read back the same', async () => {
      const graph = await openGraph();
      await expect(graph.add('acme', [{ subject: lit('x'), predicate: iri('urn:p'), object: lit('y') }])).rejects.toThrow(/subject must be an IRI/);
      await expect(graph.add('acme', [{ subject: iri('not an iri'), predicate: iri('urn:p'), object: lit('y') }])).rejects.toThrow(/not an absolute IRI/);
      await expect(graph.add('acme', [{ subject: iri('urn:a>b'), predicate: iri('urn:p'), object: lit('y') }])).rejects.toThrow(/not an absolute IRI/);
      await expect(graph.add('acme', [says('urn:ex:a', 'lone \ud800')])).rejects.toThrow(/well-formed/);
      await expect(graph.add('acme', [{ subject: iri('urn:a'), predicate: iri('urn:p'), object: { type: 'literal', value: 'x', language: 'not a tag!' } }])).rejects.toThrow(/language tag/);
      // Nothing of a refused batch was kept.
      expect(rows(await graph.query('acme', 'SELECT * WHERE { ?s ?p ?o }', LIMITS))).toEqual([]);
    });
  });

  describe('tenant isolation', () => {
    const red = tenantGraphIri('red');
    const hostileQueries: [string, boolean][] = [
      ['SELECT ?s ?p ?o WHERE { ?s ?p ?o }', true],
      ['SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }', true],
      [`SELECT ?s ?p ?o FROM <${red}> WHERE { ?s ?p ?o }`, true],
      [`SELECT ?g ?s ?p ?o FROM NAMED <${red}> WHERE { GRAPH ?g { ?s ?p ?o } }`, true],
      ['SELECT ?s ?p ?o FROM <urn:x:default> WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }', true],
      [`SELECT ?s ?p ?o WHERE { GRAPH <${red}> { ?s ?p ?o } }`, false],
      [`SELECT ?s ?p ?o FROM NAMED <${red}> WHERE { GRAPH <${red}> { ?s ?p ?o } }`, false],
    ];

    it.each(hostileQueries)('never shows blue what red wrote: %s', async (query, seesOwn) => {
      const graph = await openGraph();
      await graph.add('red', [says('urn:ex:red', 'red secret')]);
      await graph.add('blue', [says('urn:ex:blue', 'blue note')]);
      const seen = JSON.stringify(rows(await graph.query('blue', query, LIMITS)));
      expect(seen).not.toContain('red');
      if (seesOwn) expect(seen).toContain('blue note');
      else expect(seen).toBe('[]');
    });

    it('keeps ASK from probing another tenant', async () => {
      const graph = await openGraph();
      await graph.add('red', [says('urn:ex:red', 'red secret')]);
      const probe = `ASK { GRAPH ?g { ?s ?p "red secret" } }`;
      expect(await graph.query('blue', probe, LIMITS)).toEqual({ kind: 'boolean', value: false });
      expect(await graph.query('blue', `ASK FROM <${tenantGraphIri('red')}> { ?s ?p "red secret" }`, LIMITS)).toEqual({ kind: 'boolean', value: false });
      expect(await graph.query('red', probe, LIMITS)).toEqual({ kind: 'boolean', value: true });
    });

    it('names each tenant graph unambiguously, whatever the tenant name', async () => {
      const graph = await openGraph();
      const tenants = ['acme', 'acme-labs', 'a/b', 'a%2Fb', 'x y', 'Ünïcode'];
      for (const tenant of tenants) await graph.add(tenant, [says('urn:ex:s', tenant)]);
      for (const tenant of tenants) {
        expect(rows(await graph.query(tenant, 'SELECT ?g ?o WHERE { GRAPH ?g { ?s ?p ?o } }', LIMITS))).toEqual([
          { g: tenantGraphIri(tenant), o: tenant },
        ]);
      }
    });
  });

  describe('refused and invalid queries', () => {
    const refused: [string, RegExp][] = [
      ['INSERT DATA { <urn:a> <urn:b> <urn:c> }', /SPARQL Update \(INSERT\) is refused/],
      ['DELETE WHERE { ?s ?p ?o }', /SPARQL Update \(DELETE\) is refused/],
      ['PREFIX ex: <urn:ex:> WITH <urn:g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }', /SPARQL Update \(WITH\) is refused/],
      ['CLEAR ALL', /SPARQL Update \(CLEAR\) is refused/],
      ['DROP GRAPH <urn:toolgate:tenant:red>', /SPARQL Update \(DROP\) is refused/],
      ['LOAD <http://127.0.0.1:1/data.ttl>', /LOAD is refused/],
      ['SELECT * WHERE { ?s ?p ?o } ; LOAD <http://127.0.0.1:1/x>', /LOAD is refused/],
      ['SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }', /SERVICE is refused/],
      ['select * where { service silent <http://127.0.0.1:1/sparql> { ?s ?p ?o } }', /SERVICE is refused/],
      ['SELECT * WHERE { ?s ?p ?o OPTIONAL { SeRvIcE ?endpoint { ?s ?q ?r } } }', /SERVICE is refused/],
      ['SELECT * WHERE { \\u0053ERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }', /SERVICE is refused/],
      ['CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }', /CONSTRUCT is refused: only SELECT and ASK/],
      ['DESCRIBE <urn:ex:a>', /DESCRIBE is refused/],
    ];

    it.each(refused)('refuses %s', async (query, message) => {
      const graph = await openGraph();
      await graph.add('acme', [says('urn:ex:a', 'kept')]);
      const error = await refusal(graph.query('acme', query, LIMITS));
      expect(error.reason).toBe('QUERY_REFUSED');
      expect(error.message).toMatch(message);
      expect(rows(await graph.query('acme', 'SELECT ?o WHERE { ?s ?p ?o }', LIMITS))).toEqual([{ o: 'kept' }]);
    });

    it('is not fooled by keywords inside strings, IRIs, comments, variables or prefixed names', async () => {
      const graph = await openGraph();
      await graph.add('acme', [says('urn:ex:drop', 'SERVICE LOAD INSERT')]);
      const query = [
        'PREFIX service: <urn:ex:>  # a comment saying SERVICE and DROP ALL',
        'SELECT ?service ?load WHERE {',
        '  ?service service:says ?load .',
        '  FILTER(?load = "SERVICE LOAD INSERT" || ?load = \'\'\'DELETE "quoted" \'\'\')',
        '  FILTER(?service != <urn:ex:insert>)',
        '}',
      ].join('\n');
      expect(rows(await graph.query('acme', query, LIMITS))).toEqual([{ service: 'urn:ex:drop', load: 'SERVICE LOAD INSERT' }]);
    });

    it('reports a syntax error with its position, without the engine internals', async () => {
      const graph = await openGraph();
      const error = await refusal(graph.query('acme', 'SELECT ?s WHERE { ?s ?p ', LIMITS));
      expect(error.reason).toBe('QUERY_INVALID');
      expect(error.message).toMatch(/^invalid SPARQL: error at 1:\d+/);
      expect(error.message).not.toContain('\n');
      expect(error.message.length).toBeLessThan(400);
    });

    it('refuses empty, non-query and oversized text clearly', async () => {
      const graph = await openGraph();
      expect((await refusal(graph.query('acme', '  \n', LIMITS))).message).toMatch(/empty/);
      expect((await refusal(graph.query('acme', 'HELLO { ?s ?p ?o }', LIMITS))).message).toMatch(/expected SELECT or ASK, found 'HELLO'/);
      expect((await refusal(graph.query('acme', 'SELECT ?s WHERE { ?s ?p "unterminated }', LIMITS))).message).toMatch(/string literal is not closed/);
      const long = `SELECT ?s WHERE { ?s ?p ?o } # ${'x'.repeat(20_000)}`;
      const error = await refusal(graph.query('acme', long, LIMITS));
      expect(error.reason).toBe('QUERY_REFUSED');
      expect(error.message).toMatch(/at most 20000 are accepted/);
    });

    it('rejects limits outside their ranges', async () => {
      const graph = await openGraph();
      await expect(graph.query('acme', 'ASK {}', { ...LIMITS, maxRows: 0 })).rejects.toThrow(RangeError);
      await expect(graph.query('acme', 'ASK {}', { ...LIMITS, timeoutMs: 1.5 })).rejects.toThrow(RangeError);
    });
  });

  describe('bounds', () => {
    it('cuts rows at maxRows and says so', async () => {
      const graph = await openGraph();
      await graph.add('acme', Array.from({ length: 30 }, (_, i) => says(`urn:ex:n${String(i).padStart(2, '0')}`, `v${i}`)));
      const answer = await graph.query('acme', 'SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s', { ...LIMITS, maxRows: 10 });
      expect(answer).toMatchObject({ kind: 'bindings', truncated: true });
      expect(rows(answer).map((r) => r.s)).toEqual(Array.from({ length: 10 }, (_, i) => `urn:ex:n${String(i).padStart(2, '0')}`));
      const all = await graph.query('acme', 'SELECT ?s WHERE { ?s ?p ?o }', { ...LIMITS, maxRows: 30 });
      expect(all).toMatchObject({ truncated: false });
      expect(rows(all)).toHaveLength(30);
    });

    it('cuts rows at maxBytes of serialized rows and says so', async () => {
      const graph = await openGraph();
      const big = 'é'.repeat(1_000); // 2 000 UTF-8 bytes
      await graph.add('acme', Array.from({ length: 20 }, (_, i) => says(`urn:ex:n${i}`, big)));
      const maxBytes = 10_000;
      const answer = await graph.query('acme', 'SELECT ?o ?s WHERE { ?s ?p ?o }', { ...LIMITS, maxBytes });
      expect(answer).toMatchObject({ truncated: true });
      expect(rows(answer).length).toBe(4);
      expect(Buffer.byteLength(JSON.stringify(rows(answer)))).toBeLessThanOrEqual(maxBytes);
      const single = await graph.query('acme', 'SELECT ?o WHERE { ?s ?p ?o } LIMIT 1', { ...LIMITS, maxBytes: 100 });
      expect(single).toMatchObject({ rows: [], truncated: true });
    });

    it('stops a cross-join bomb at the time limit, then answers the next query with every write kept', async () => {
      const graph = await openGraph();
      await graph.add('acme', Array.from({ length: 60 }, (_, i) => says(`urn:ex:n${i}`, `v${i}`)));
      const bomb = 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }';
      const { value: error, ms } = await timeLessCpuWait(async () => {
        const stopped = refusal(graph.query('acme', bomb, { ...LIMITS, timeoutMs: 300 }));
        // A write made while the bomb runs must survive the worker being replaced.
        await graph.add('acme', [says('urn:ex:late', 'written during the bomb')]);
        return stopped;
      });
      expect(error.reason).toBe('QUERY_TIMEOUT');
      expect(error.message).toMatch(/stopped after 300 ms/);
      expect(ms).toBeLessThan(3_000);

      expect(rows(await graph.query('acme', 'SELECT ?o WHERE { <urn:ex:late> ?p ?o }', LIMITS))).toEqual([{ o: 'written during the bomb' }]);
      expect(rows(await graph.query('acme', 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }', LIMITS))).toEqual([{ n: '61' }]);
    });

    it('bounds a bomb that materializes its rows, and queues the queries behind it', async () => {
      const graph = await openGraph();
      await graph.add('acme', Array.from({ length: 60 }, (_, i) => says(`urn:ex:n${i}`, `v${i}`)));
      const bomb = graph.query('acme', 'SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }', { ...LIMITS, timeoutMs: 300 });
      const behind = graph.query('acme', 'ASK { <urn:ex:n1> ?p "v1" }', LIMITS);
      expect((await refusal(bomb)).reason).toBe('QUERY_TIMEOUT');
      expect(await behind).toEqual({ kind: 'boolean', value: true });
    });
  });

  describe('replace', () => {
    it('swaps the triples under a subject prefix in one tenant only', async () => {
      const graph = await openGraph();
      await graph.add('acme', [says('urn:toolgate:team:old', 'gone'), says('urn:toolgate:team:kept', 'old'), says('urn:ex:note', 'stays')]);
      await graph.add('other', [says('urn:toolgate:team:old', 'other tenant')]);
      await graph.replace('acme', 'urn:toolgate:team:', [says('urn:toolgate:team:kept', 'new')]);
      expect(rows(await graph.query('acme', 'SELECT ?s ?o WHERE { ?s ?p ?o } ORDER BY ?s', LIMITS))).toEqual([
        { s: 'urn:ex:note', o: 'stays' },
        { s: 'urn:toolgate:team:kept', o: 'new' },
      ]);
      expect(rows(await graph.query('other', 'SELECT ?o WHERE { ?s ?p ?o }', LIMITS))).toEqual([{ o: 'other tenant' }]);
    });
  });

  describe('persistence', () => {
    it('reloads adds and replaces after a reopen', async () => {
      const path = join(dir, 'reopen', 'knowledge-graph.nq');
      const graph = await openGraph(path);
      await Promise.all(Array.from({ length: 20 }, (_, i) => graph.add('acme', [says(`urn:ex:n${i}`, `v${i}`)])));
      await graph.add('beta', [says('urn:toolgate:team:x', 'old roster')]);
      await graph.replace('beta', 'urn:toolgate:team:', [says('urn:toolgate:team:y', 'new roster')]);
      await graph.add('beta', [says('urn:ex:after', 'appended after the rewrite')]);
      await graph.close();

      const reopened = await openGraph(path);
      expect(reopened.opened).toEqual({ quads: 22, droppedBytes: 0 });
      expect(rows(await reopened.query('acme', 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }', LIMITS))).toEqual([{ n: '20' }]);
      expect(rows(await reopened.query('beta', 'SELECT ?o WHERE { ?s ?p ?o } ORDER BY ?o', LIMITS))).toEqual([
        { o: 'appended after the rewrite' },
        { o: 'new roster' },
      ]);
    });

    it('drops a final line torn by a crash and keeps everything before it', async () => {
      const path = join(dir, 'torn.nq');
      const graph = await openGraph(path);
      await graph.add('acme', [says('urn:ex:a', 'kept')]);
      await graph.close();
      appendFileSync(path, `<urn:ex:b> <urn:ex:says> "half a li`);

      const reopened = await openGraph(path);
      expect(reopened.opened.quads).toBe(1);
      expect(reopened.opened.droppedBytes).toBeGreaterThan(0);
      expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
      await reopened.add('acme', [says('urn:ex:c', 'after recovery')]);
      expect(rows(await reopened.query('acme', 'SELECT ?o WHERE { ?s ?p ?o } ORDER BY ?o', LIMITS))).toEqual([{ o: 'after recovery' }, { o: 'kept' }]);
    });

    it('says so through onRecovered when it drops a torn final line, and only then', async () => {
      const path = join(dir, 'torn-reported.nq');
      const graph = await openGraph(path);
      await graph.add('acme', [says('urn:ex:a', 'kept')]);
      await graph.close();
      const heard: unknown[] = [];
      const clean = await OxigraphKnowledgeGraph.open({ path, onRecovered: (r) => heard.push(r) });
      await clean.close();
      expect(heard).toEqual([]);
      // Torn at several places: mid-term, mid-literal, just before the final ' .'.
      for (const torn of ['<urn:ex:b', `<urn:ex:b> <urn:ex:says> "half a li`, `<urn:ex:b> <urn:ex:says> "whole" <${tenantGraphIri('acme')}>`]) {
        appendFileSync(path, torn);
        const reopened = await OxigraphKnowledgeGraph.open({ path, onRecovered: (r) => heard.push(r) });
        await reopened.close();
        expect(heard.pop()).toEqual({ path, droppedBytes: Buffer.byteLength(torn) });
        expect(heard).toEqual([]);
      }
    });

    it('refuses to open a file damaged anywhere else, or holding quads outside tenant graphs', async () => {
      const damaged = join(dir, 'damaged.nq');
      writeFileSync(damaged, `<urn:a> <urn:b> "ok" <${tenantGraphIri('t')}> .\n<urn:a> <urn:b "broken" <urn:g> .\n`);
      await expect(OxigraphKnowledgeGraph.open({ path: damaged })).rejects.toThrow(GraphFileError);
      await expect(OxigraphKnowledgeGraph.open({ path: damaged })).rejects.toThrow(/damaged.*move it aside/);

      const stray = join(dir, 'stray.nq');
      writeFileSync(stray, '<urn:a> <urn:b> "in the default graph" .\n');
      await expect(OxigraphKnowledgeGraph.open({ path: stray })).rejects.toThrow(/outside every tenant graph/);
    });
  });
});
