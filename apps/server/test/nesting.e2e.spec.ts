import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

/** JSON text of `levels` nested arrays or objects, built as text (no recursion anywhere). */
const deepJson = (levels: number, shape: 'array' | 'object') =>
  shape === 'array' ? `${'['.repeat(levels)}1${']'.repeat(levels)}` : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** Stack exhaustion by nesting, through the real HTTP server: REST, tRPC mutations and queries. */
describe('stack exhaustion by deeply nested arguments over HTTP', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  const body = (levels: number, shape: 'array' | 'object') => `{"tool":"calculator","version":"1.0.0","args":{"expression":"1","data":${deepJson(levels, shape)}}}`;
  const post = (path: string, text: string) =>
    h.call(path, { method: 'POST', token: 'demo', headers: { 'content-type': 'application/json' }, body: text });

  it.each([
    ['array', 200_000],
    ['object', 100_000],
    ['array', 5_000],
  ] as const)('answers REST invoke, explain and approval requests of %s nesting %i deep with 400', async (shape, levels) => {
    for (const path of ['/api/v1/tools/invoke', '/api/v1/tools/explain', '/api/v1/approvals']) {
      const res = await post(path, body(levels, shape));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', message: 'invalid request: args: arguments are nested deeper than 32 levels' });
    }
  });

  it('answers the tRPC mutation and query with 400 and the same words', async () => {
    const mutation = await post('/trpc/tools.invoke', body(200_000, 'array'));
    expect(mutation.status).toBe(400);
    expect(mutation.body.error.message).toBe('invalid request: args: arguments are nested deeper than 32 levels');
    const input = encodeURIComponent(`{"tool":"calculator","args":{"data":${deepJson(2_000, 'array')}}}`);
    const query = await h.call(`/trpc/tools.explain?input=${input}`, { token: 'demo' });
    expect(query.status).toBe(400);
    expect(query.body.error.message).toBe('invalid request: args: arguments are nested deeper than 32 levels');
  });

  it('keeps answering /healthz within 100 ms while hostile requests are in flight', async () => {
    const hostile = Array.from({ length: 4 }, () => post('/api/v1/tools/invoke', body(200_000, 'array')));
    const started = performance.now();
    expect((await h.call('/healthz')).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(100);
    for (const res of await Promise.all(hostile)) expect(res.status).toBe(400);
    const fine = await post('/api/v1/tools/invoke', '{"tool":"calculator","version":"1.0.0","args":{"expression":"2+2"}}');
    expect(fine.body).toMatchObject({ ok: true, output: { result: 4 } });
  });
});
