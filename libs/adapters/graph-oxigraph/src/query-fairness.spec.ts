import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ToolError, type GraphTerm, type QueryAnswer, type QueryLimits, type Triple } from '@toolgate/contracts';
import { threadSchedule, timeLessCpuWait } from '@toolgate/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { OxigraphKnowledgeGraph, type OxigraphKnowledgeGraphOptions } from './oxigraph-knowledge-graph.js';
import { QueryEngine } from './query-engine.js';
import { tenantGraphIri } from './terms.js';

const LIGHT: QueryLimits = { maxRows: 100, maxBytes: 64 * 1024, timeoutMs: 20_000 };
/** Five patterns over 60 triples: 60⁵ ≈ 7.8 × 10⁸ solutions, minutes of work, so it always hits its limit. */
const BOMB = 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }';
/** Three patterns over 100 triples: 10⁶ solutions, about half a second of real work that finishes. */
const HEAVY_BUT_FINITE = 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }';
const LIGHT_QUERY = 'SELECT ?o WHERE { <urn:ex:n1> ?p ?o }';
/** The main thread's event loop may fall behind its timers by at most this much during a run. */
const EVENT_LOOP_BOUND_MS = 100;

const dir = mkdtempSync(join(tmpdir(), 'toolgate-graph-fair-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const open: OxigraphKnowledgeGraph[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((g) => g.close()));
});
async function openGraph(options: OxigraphKnowledgeGraphOptions = {}): Promise<OxigraphKnowledgeGraph> {
  const graph = await OxigraphKnowledgeGraph.open(options);
  open.push(graph);
  return graph;
}

const iri = (value: string): GraphTerm => ({ type: 'iri', value });
const says = (subject: string, text: string): Triple => ({ subject: iri(subject), predicate: iri('urn:ex:says'), object: { type: 'literal', value: text } });
const generated = (n: number): Triple[] => Array.from({ length: n }, (_, i) => says(`urn:ex:n${i}`, `v${i}`));

function rows(answer: QueryAnswer): readonly Readonly<Record<string, string>>[] {
  if (answer.kind !== 'bindings') throw new Error(`expected bindings, got ${answer.kind}`);
  return answer.rows;
}

/**
 * How a query ended and when, relative to the moment it was asked: `ms` in wall time (for lower
 * bounds and order), `lessWaitMs` less the time the box kept this thread off a CPU meanwhile (for
 * upper bounds; the query's own evaluation on its worker is not taken out).
 */
interface Outcome {
  readonly ms: number;
  readonly lessWaitMs: number;
  readonly answer?: QueryAnswer;
  readonly error?: ToolError;
}
function timed(promise: Promise<QueryAnswer>): Promise<Outcome> {
  const start = performance.now();
  const waited = threadSchedule().waitedMs;
  const times = () => {
    const ms = performance.now() - start;
    return { ms, lessWaitMs: ms - (threadSchedule().waitedMs - waited) };
  };
  return promise.then(
    (answer) => ({ ...times(), answer }),
    (error: unknown) => {
      if (!(error instanceof ToolError)) throw error;
      return { ...times(), error };
    },
  );
}

/** This thread's CPU run and wait times: the box is shared, so its load is taken out of timings. */
const schedule = threadSchedule;

/**
 * Measures how late a 10 ms interval fires on the main thread, less the time the thread waited
 * for a CPU meanwhile: a query evaluated here, or any other work holding the loop, shows in full.
 */
function watchEventLoop(): { stop(): number } {
  let worst = 0;
  let expected = performance.now() + 10;
  let waited = schedule().waitedMs;
  const timer = setInterval(() => {
    const now = performance.now();
    const waitedNow = schedule().waitedMs;
    worst = Math.max(worst, now - expected - (waitedNow - waited));
    waited = waitedNow;
    expected = now + 10;
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return worst;
    },
  };
}

async function seed(graph: OxigraphKnowledgeGraph, ...tenants: string[]): Promise<void> {
  for (const tenant of tenants) await graph.add(tenant, generated(tenant === 'heavy' ? 60 : 100));
}

describe('query fairness between tenants', () => {
  it('has an event-loop probe that sees the loop held', async () => {
    const probe = watchEventLoop();
    await new Promise((r) => setTimeout(r, 30));
    // 150 ms of synchronous work on this thread, as a query evaluated here would be (counted in
    // CPU time where the kernel reports it, since a loaded box stretches it in wall time).
    const start = { wall: performance.now(), ...schedule() };
    const busy = () => (start.ranMs > 0 ? schedule().ranMs - start.ranMs : performance.now() - start.wall);
    while (busy() < 150) {
      // Holding the event loop.
    }
    await new Promise((r) => setTimeout(r, 30));
    expect(probe.stop()).toBeGreaterThanOrEqual(EVENT_LOOP_BOUND_MS);
  });

  describe('one tenant starves another', () => {
    it("answers tenant B within one of A's limits while A's five cross-join bombs run out theirs", async () => {
      const graph = await openGraph();
      await seed(graph, 'heavy', 'light');
      // memory_query's own limit. B's first query also starts B's worker: its bound covers that.
      const limitMs = 3_000;
      const probe = watchEventLoop();
      const bombs = Array.from({ length: 5 }, () => timed(graph.query('heavy', BOMB, { ...LIGHT, timeoutMs: limitMs })));
      const light = await timed(graph.query('light', LIGHT_QUERY, LIGHT));
      // A second query, once B's worker is warm, pays no start-up either.
      const again = await timed(graph.query('light', 'ASK { <urn:ex:n99> ?p "v99" }', LIGHT));
      const outcomes = await Promise.all(bombs);
      const lateMs = probe.stop();

      // On one worker B would have waited for all five bombs: 5 × 3 s.
      expect(light.answer && rows(light.answer)).toEqual([{ o: 'v1' }]);
      expect(light.lessWaitMs).toBeLessThan(limitMs);
      expect(again.answer).toEqual({ kind: 'boolean', value: true });
      expect(again.lessWaitMs).toBeLessThan(limitMs / 2);
      for (const outcome of outcomes) {
        expect(outcome.error?.reason).toBe('QUERY_TIMEOUT');
        expect(outcome.error?.message).toBe(`the query was stopped after ${limitMs} ms: narrow its patterns or add a LIMIT`);
      }
      // A's bombs ran one after another, each to its full limit.
      const ends = outcomes.map((o) => o.ms).sort((x, y) => x - y);
      expect(ends[4]).toBeGreaterThanOrEqual(5 * limitMs);
      expect(lateMs).toBeLessThan(EVENT_LOOP_BOUND_MS);
    }, 30_000);

    it("keeps answering B within the bound, query after query, while A's twenty bombs drain", async () => {
      const graph = await openGraph({ maxQueuedQueriesPerTenant: 32 });
      await seed(graph, 'heavy', 'light');
      const limitMs = 500;
      // B's worker is started first, so this bounds only what A's queries could add: less than one of them.
      const boundMs = limitMs;
      expect(rows(await graph.query('light', LIGHT_QUERY, LIGHT))).toEqual([{ o: 'v1' }]);
      const probe = watchEventLoop();
      const bombs = Array.from({ length: 20 }, () => timed(graph.query('heavy', BOMB, { ...LIGHT, timeoutMs: limitMs })));
      let drained = false;
      void Promise.all(bombs).then(() => (drained = true));

      const answers: Outcome[] = [];
      // Sample B across the whole drain (≥ 20 × 0.5 s on one worker): not only at the start.
      while (!drained) {
        const i = answers.length % 100;
        answers.push(await timed(graph.query('light', `SELECT ?o WHERE { <urn:ex:n${i}> ?p ?o }`, LIGHT)));
        await new Promise((r) => setTimeout(r, 100));
      }
      const outcomes = await Promise.all(bombs);
      const lateMs = probe.stop();

      expect(answers.length).toBeGreaterThanOrEqual(20);
      answers.forEach((outcome, i) => {
        expect(outcome.answer && rows(outcome.answer)).toEqual([{ o: `v${i % 100}` }]);
        expect(outcome.lessWaitMs).toBeLessThan(boundMs);
      });
      // On one worker the first B query would have waited ≥ 20 × 0.5 s = 10 s.
      for (const outcome of outcomes) expect(outcome.error?.reason).toBe('QUERY_TIMEOUT');
      expect(lateMs).toBeLessThan(EVENT_LOOP_BOUND_MS);
    }, 60_000);

    it("lets A's heavy queries that finish still answer, each in turn, beside B's", async () => {
      const graph = await openGraph();
      await seed(graph, 'finite', 'light');
      const heavy = Array.from({ length: 3 }, () => timed(graph.query('finite', HEAVY_BUT_FINITE, LIGHT)));
      const light = await timed(graph.query('light', LIGHT_QUERY, LIGHT));
      expect(light.answer && rows(light.answer)).toEqual([{ o: 'v1' }]);
      for (const outcome of await Promise.all(heavy)) {
        expect(outcome.answer && rows(outcome.answer)).toEqual([{ n: String(100 ** 3) }]);
      }
    }, 30_000);

    it('bounds the wait by round-robin when there is a single worker: B waits for at most one of A’s queries', async () => {
      const graph = await openGraph({ queryWorkers: 1 });
      await seed(graph, 'heavy', 'light');
      const limitMs = 500;
      const order: string[] = [];
      const bombs = Array.from({ length: 5 }, (_, i) =>
        graph.query('heavy', BOMB, { ...LIGHT, timeoutMs: limitMs }).catch((error: ToolError) => order.push(`a${i}:${error.reason}`)),
      );
      const light = graph.query('light', LIGHT_QUERY, LIGHT).then((answer) => order.push(`b:${JSON.stringify(rows(answer))}`));
      await Promise.all([...bombs, light]);
      expect(order).toEqual(['a0:QUERY_TIMEOUT', 'b:[{"o":"v1"}]', 'a1:QUERY_TIMEOUT', 'a2:QUERY_TIMEOUT', 'a3:QUERY_TIMEOUT', 'a4:QUERY_TIMEOUT']);
    }, 30_000);

    it('rotates three tenants over two workers: the third waits for one query at most', async () => {
      const graph = await openGraph();
      await seed(graph, 'heavy', 'light');
      await graph.add('other', generated(60));
      const limitMs = 600;
      const order: string[] = [];
      const fire = (tenant: string, n: number) =>
        Array.from({ length: n }, (_, i) =>
          graph.query(tenant, BOMB, { ...LIGHT, timeoutMs: limitMs }).catch((error: ToolError) => order.push(`${tenant}${i}:${error.reason}`)),
        );
      const a = fire('heavy', 4);
      const c = fire('other', 4);
      const light = timed(graph.query('light', LIGHT_QUERY, LIGHT));
      await Promise.all([...a, ...c]);
      const b = await light;
      expect(b.answer && rows(b.answer)).toEqual([{ o: 'v1' }]);
      // ⌈3 tenants / 2 workers⌉ = 2 turns: one running bomb, then B, plus worker starts.
      expect(b.lessWaitMs).toBeLessThan(2 * limitMs + 1_000);
      expect(order).toHaveLength(8);
    }, 30_000);
  });

  describe('a runaway query', () => {
    it("is stopped by terminating its own worker: the other tenant's running query still answers", async () => {
      const graph = await openGraph();
      await seed(graph, 'heavy', 'light');
      const finite = timed(graph.query('light', HEAVY_BUT_FINITE, LIGHT));
      const bomb = timed(graph.query('heavy', BOMB, { ...LIGHT, timeoutMs: 200 }));
      const [b, a] = await Promise.all([finite, bomb]);
      expect(a.error?.reason).toBe('QUERY_TIMEOUT');
      expect(b.answer && rows(b.answer)).toEqual([{ n: String(100 ** 3) }]);
      // The bomb's worker was terminated while B's query was still being evaluated on the other.
      expect(b.ms).toBeGreaterThan(a.ms);
    }, 30_000);

    it('sees every write that resolved before it was asked, on whichever worker answers', async () => {
      const graph = await openGraph();
      await seed(graph, 'heavy');
      // Keep one worker busy while writes arrive; the other and its replacement answer meanwhile.
      const busy = graph.query('heavy', BOMB, { ...LIGHT, timeoutMs: 700 }).catch((e: unknown) => e);
      for (let i = 0; i < 12; i++) {
        await graph.add('x', [says(`urn:ex:x${i}`, `x${i}`)]);
        await graph.add('y', [says(`urn:ex:y${i}`, `y${i}`)]);
        // Asked together, the two run on both workers; which gets which alternates.
        const pair = i % 2 === 0 ? ['x', 'y'] : ['y', 'x'];
        const counts = await Promise.all(pair.map((t) => graph.query(t, 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }', LIGHT)));
        for (const answer of counts) expect(rows(answer)).toEqual([{ n: String(i + 1) }]);
      }
      expect(((await busy) as ToolError).reason).toBe('QUERY_TIMEOUT');
      await graph.replace('x', 'urn:ex:x', [says('urn:ex:x-new', 'replaced')]);
      const [x, y] = await Promise.all([graph.query('x', 'SELECT ?o WHERE { ?s ?p ?o }', LIGHT), graph.query('y', 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }', LIGHT)]);
      expect(rows(x)).toEqual([{ o: 'replaced' }]);
      expect(rows(y)).toEqual([{ n: '12' }]);
    }, 30_000);

    it('restarts a stopped worker from the file, read in the worker, with every write kept', async () => {
      // Serializing a graph here costs ~7 ms per 1 000 quads, per restart; the worker reads the
      // file instead. (Loading is slow in the worker too, ~0.5 s per 1 000 quads, hence the size.)
      const path = join(dir, 'large', 'knowledge-graph.nq');
      const big = tenantGraphIri('big');
      const lines = Array.from({ length: 10_000 }, (_, i) => `<urn:ex:o${i}> <urn:ex:says> "finding number ${i} about src/app.ts" <${big}> .\n`);
      mkdirSync(join(dir, 'large'), { recursive: true });
      writeFileSync(path, lines.join(''));
      const graph = await openGraph({ path });
      await graph.add('heavy', generated(60));
      const count = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
      expect(rows(await graph.query('big', count, LIGHT))).toEqual([{ n: '10000' }]);

      const probe = watchEventLoop();
      for (let i = 0; i < 2; i++) {
        const bomb = timed(graph.query('heavy', BOMB, { ...LIGHT, timeoutMs: 300 }));
        await graph.add('big', [says(`urn:ex:during${i}`, `written while bomb ${i} ran`)]);
        expect((await bomb).error?.reason).toBe('QUERY_TIMEOUT');
        // The restarted worker read the file, then the writes that followed it.
        expect(rows(await graph.query('heavy', count, LIGHT))).toEqual([{ n: '60' }]);
      }
      const lateMs = probe.stop();
      expect(rows(await graph.query('big', count, LIGHT))).toEqual([{ n: '10002' }]);
      expect(rows(await graph.query('big', 'SELECT ?o WHERE { <urn:ex:during1> ?p ?o }', LIGHT))).toEqual([{ o: 'written while bomb 1 ran' }]);
      expect(lateMs).toBeLessThan(EVENT_LOOP_BOUND_MS);
    }, 60_000);
  });

  describe('queue flooding', () => {
    it('refuses the queries past a tenant bound at once with QUERY_RATE_LIMITED, and serves the rest and the others', async () => {
      const graph = await openGraph();
      await seed(graph, 'heavy', 'light');
      const probe = watchEventLoop();
      // Default bounds: one running and sixteen waiting per tenant; the 23 after those are refused.
      let flood: Promise<Outcome>[] = [];
      let giveUp: ReturnType<typeof setTimeout> | undefined;
      // The refusals' time less this thread's CPU wait; the race only stops a wait for refusals that never come.
      const { value: refusedInTime, ms: refusedWithin } = await timeLessCpuWait(() => {
        flood = Array.from({ length: 40 }, () => timed(graph.query('heavy', BOMB, { ...LIGHT, timeoutMs: 200 })));
        return Promise.race([Promise.all(flood.slice(17)).then(() => true), new Promise<boolean>((r) => (giveUp = setTimeout(() => r(false), 5_000)))]);
      });
      clearTimeout(giveUp);
      expect(refusedInTime).toBe(true);
      expect(refusedWithin).toBeLessThan(150);
      for (const refused of await Promise.all(flood.slice(17))) {
        expect(refused.error?.reason).toBe('QUERY_RATE_LIMITED');
        expect(refused.error?.message).toBe('too many queries are waiting: this tenant already has 16 queued; wait for their answers before sending more');
      }
      const light = await timed(graph.query('light', LIGHT_QUERY, LIGHT));
      expect(light.answer && rows(light.answer)).toEqual([{ o: 'v1' }]);
      expect(light.lessWaitMs).toBeLessThan(1_000);

      for (const accepted of await Promise.all(flood.slice(0, 17))) expect(accepted.error?.reason).toBe('QUERY_TIMEOUT');
      // The refusals left nothing behind: the tenant is served again once its queue drained.
      expect(rows(await graph.query('heavy', LIGHT_QUERY, LIGHT))).toEqual([{ o: 'v1' }]);
      expect(probe.stop()).toBeLessThan(EVENT_LOOP_BOUND_MS);
    }, 30_000);

    it('refuses past the bound of all tenants together, and names no tenant', async () => {
      const graph = await openGraph({ maxQueuedQueries: 4, queryWorkers: 1 });
      await seed(graph, 'heavy');
      const tenants = ['t1', 't2', 't3', 't4', 't5', 't6'];
      for (const t of tenants) await graph.add(t, generated(60));
      const limits = { ...LIGHT, timeoutMs: 200 };
      const running = timed(graph.query('heavy', BOMB, limits));
      const waiting = tenants.map((t) => timed(graph.query(t, BOMB, limits)));
      const outcomes = await Promise.all([running, ...waiting]);
      expect(outcomes.slice(0, 5).map((o) => o.error?.reason)).toEqual(Array(5).fill('QUERY_TIMEOUT'));
      for (const refused of outcomes.slice(5)) {
        expect(refused.error?.reason).toBe('QUERY_RATE_LIMITED');
        expect(refused.error?.message).toBe('the knowledge graph has 4 queries waiting; try again in a few seconds');
      }
    }, 30_000);
  });

  describe('lifecycle', () => {
    it('refuses waiting queries and stops running ones at close, without waiting for their limits', async () => {
      const graph = await OxigraphKnowledgeGraph.open();
      await seed(graph, 'heavy', 'light');
      const queries = [
        ...Array.from({ length: 5 }, () => timed(graph.query('heavy', BOMB, LIGHT))),
        timed(graph.query('light', BOMB, LIGHT)),
      ];
      await new Promise((r) => setTimeout(r, 300));
      const { ms: closedWithin } = await timeLessCpuWait(() => graph.close());
      expect(closedWithin).toBeLessThan(2_000);
      for (const outcome of await Promise.all(queries)) {
        expect(outcome.error?.reason).toBe('QUERY_FAILED');
        expect(outcome.error?.message).toBe('the knowledge graph is closed');
      }
      await expect(graph.query('light', LIGHT_QUERY, LIGHT)).rejects.toThrow('the knowledge graph is closed');
    }, 30_000);

    it('fails a query clearly when its worker cannot be loaded, and serves the tenant again after', async () => {
      let broken = true;
      const engine = new QueryEngine({
        snapshot: () => {
          if (broken) throw new Error('cannot serialize /var/lib/toolgate/knowledge-graph.nq');
          return { nquads: `<urn:ex:a> <urn:ex:says> "loaded" <${tenantGraphIri('acme')}> .\n` };
        },
      });
      try {
        const failed = await timed(engine.query(tenantGraphIri('acme'), LIGHT_QUERY, LIGHT));
        expect(failed.error?.reason).toBe('QUERY_FAILED');
        expect(failed.error?.message).toBe('the query engine failed to start; try again');
        broken = false;
        // The failed query released its tenant's turn: nothing is stuck behind it.
        expect(rows(await engine.query(tenantGraphIri('acme'), 'SELECT ?o WHERE { ?s ?p ?o }', LIGHT))).toEqual([{ o: 'loaded' }]);
      } finally {
        await engine.close();
      }
    });

    it('refuses pool options outside their ranges before opening anything', async () => {
      const path = join(dir, 'never-opened', 'knowledge-graph.nq');
      const bad: [OxigraphKnowledgeGraphOptions, RegExp][] = [
        [{ queryWorkers: 0 }, /workers must be an integer from 1 to 64/],
        [{ queryWorkers: 1.5 }, /workers must be an integer from 1 to 64/],
        [{ queryWorkers: 65 }, /workers must be an integer from 1 to 64/],
        [{ queryWorkers: Number.NaN }, /workers must be an integer/],
        [{ queryWorkers: 2, maxRunningQueriesPerTenant: 3 }, /maxRunningPerTenant must be an integer from 1 to 2/],
        [{ maxQueuedQueriesPerTenant: 0 }, /maxQueuedPerTenant must be an integer/],
        [{ maxQueuedQueries: -1 }, /maxQueued must be an integer/],
      ];
      for (const [options, message] of bad) {
        await expect(OxigraphKnowledgeGraph.open({ ...options, path })).rejects.toThrow(message);
      }
      expect(existsSync(join(dir, 'never-opened'))).toBe(false);
    });
  });
});
