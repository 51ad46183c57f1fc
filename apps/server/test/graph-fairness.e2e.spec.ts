import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthTimes, startHarness, type Harness } from './e2e-harness.js';

const HEAVY = 'heavy-token-0123456789';
const LIGHT = 'light-token-0123456789';
/** Six patterns over the tenant's roster (a few dozen triples): far more than memory_query's 3 s. */
const BOMB = 'SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r }';
/** memory_query's time limit (DEFAULT_QUERY_LIMITS). */
const QUERY_LIMIT_MS = 3_000;
/** A light query of B, once its worker runs, may take this long while A floods: half of one of A's limits. */
const B_BOUND_MS = QUERY_LIMIT_MS / 2;
/** How long `/healthz` may take to answer while the graph works, less the time the box kept the server off a CPU. */
const HEALTH_BOUND_MS = 100;

/** A response body as the harness gives it (arbitrary JSON, narrowed by each expect). */
type Body = Awaited<ReturnType<Harness['call']>>['body'];


/**
 * One tenant starves another, through the whole server: tenant "heavy" floods memory_query with
 * cross-join bombs while tenant "light" keeps querying. On a single query worker light would wait
 * behind every bomb (5 × 3 s); on the pool light never waits for one, and /healthz stays prompt.
 */
describe('knowledge graph fairness between tenants', () => {
  let h: Harness;
  beforeAll(async () => {
    const tenant = { tools: ['*'], grants: [{ type: 'memory', scope: '*' }] };
    h = await startHarness(
      {},
      {
        principals: {
          principals: [
            { id: 'hog', token: HEAVY, tenant: 'heavy', roles: ['worker'] },
            { id: 'reader', token: LIGHT, tenant: 'light', roles: ['worker'] },
          ],
          roles: { worker: ['*'] },
          tenants: { heavy: tenant, light: tenant },
        },
      },
    );
  });
  afterAll(async () => h?.stop());

  const query = (token: string, sparql: string) =>
    h.call('/api/v1/tools/invoke', { method: 'POST', token, json: { tool: 'memory_query', version: '1.0.0', args: { sparql } } });

  async function timedQuery(token: string, sparql: string): Promise<{ ms: number; body: Body }> {
    const start = performance.now();
    const { body } = await query(token, sparql);
    return { ms: performance.now() - start, body };
  }

  it("answers tenant B and /healthz promptly while tenant A's five bombs run out their limits", async () => {
    // Both tenants have queried before (their workers run), as on a server in use.
    const who = 'SELECT ?who WHERE { ?m tg:principal ?who }';
    expect((await query(LIGHT, who)).body).toMatchObject({ ok: true, output: { rows: [{ who: 'reader' }] } });
    expect((await query(HEAVY, who)).body).toMatchObject({ ok: true, output: { rows: [{ who: 'hog' }] } });

    const bombs = Array.from({ length: 5 }, () => timedQuery(HEAVY, BOMB));
    let drained = false;
    void Promise.all(bombs).then(() => (drained = true));

    const probe = healthTimes(h, () => drained, { intervalMs: 50, minSamples: 1 });

    const light: { ms: number; body: Body }[] = [];
    while (!drained) {
      light.push(await timedQuery(LIGHT, who));
      await new Promise((r) => setTimeout(r, 250));
    }
    const heavy = await Promise.all(bombs);
    const health = await probe;

    // Light was answered throughout A's run (≥ 5 × 3 s), each time within the bound.
    expect(light.length).toBeGreaterThanOrEqual(10);
    for (const answer of light) {
      expect(answer.body).toMatchObject({ ok: true, output: { rows: [{ who: 'reader' }] } });
      expect(answer.ms).toBeLessThan(B_BOUND_MS);
    }
    // Each bomb ended with a clear refusal: stopped at the graph's limit, or at the tool's deadline
    // for the last ones, which waited behind the tenant's own earlier bombs.
    for (const bomb of heavy) {
      expect(bomb.body.ok).toBe(false);
      const { code, message, data } = bomb.body.denial;
      if (code === 'EXECUTION_FAILED') {
        expect(data.reason).toBe('QUERY_TIMEOUT');
        expect(message).toMatch(/stopped after 3000 ms: narrow its patterns or add a LIMIT/);
      } else {
        expect(code).toBe('TIMEOUT');
      }
    }
    expect(heavy.filter((b) => b.body.denial.code === 'EXECUTION_FAILED').length).toBeGreaterThanOrEqual(4);
    expect(health.length).toBeGreaterThanOrEqual(50);
    expect(Math.max(...health)).toBeLessThan(HEALTH_BOUND_MS);
  }, 60_000);

  it('refuses a flood past the tenant queue bound specifically, and keeps serving the other tenant', async () => {
    // A bomb of the last test may still be running after its call timed out: let it end first.
    expect((await query(HEAVY, 'ASK { ?m tg:principal "hog" }')).body).toMatchObject({ ok: true, output: { value: true } });
    // One running and sixteen waiting per tenant; the gateway passes the graph's reason on.
    const flood = Array.from({ length: 24 }, () => timedQuery(HEAVY, BOMB));
    const light = await timedQuery(LIGHT, 'ASK { ?m tg:principal "reader" }');
    expect(light.body).toMatchObject({ ok: true, output: { kind: 'boolean', value: true } });
    expect(light.ms).toBeLessThan(B_BOUND_MS);

    const outcomes = await Promise.all(flood);
    const refused = outcomes.filter((f) => f.body.denial?.data?.reason === 'QUERY_RATE_LIMITED');
    expect(refused).toHaveLength(24 - 17);
    for (const f of refused) {
      expect(f.body.denial).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED' });
      expect(f.body.denial.message).toBe('too many queries are waiting: this tenant already has 16 queued; wait for their answers before sending more');
      // A refusal is immediate: it never waited for a worker.
      expect(f.ms).toBeLessThan(QUERY_LIMIT_MS);
    }
    // The accepted ones ended as bombs do: stopped at the limit, or at the tool's deadline.
    for (const f of outcomes.filter((o) => !refused.includes(o))) expect(['EXECUTION_FAILED', 'TIMEOUT']).toContain(f.body.denial.code);
  }, 60_000);
});
