import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TRPC_BATCH } from '../src/http/http-server.js';
import { startHarness, type Harness } from './e2e-harness.js';

/** The tRPC endpoint as non-TypeScript clients see it (docs/api.md, "tRPC wire format"). */
describe('tRPC over HTTP', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('runs a mutation: POST /trpc/tools.invoke with the input as the body', async () => {
    const { status, body } = await h.call('/trpc/tools.invoke', { method: 'POST', token: 'demo', json: { tool: 'calculator', args: { expression: '2+3*4' } } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ result: { data: { ok: true, output: { result: 14 } } } });
  });

  it('runs a query: GET /trpc/tools.list, and health without a token', async () => {
    const list = await h.call('/trpc/tools.list', { token: 'demo' });
    expect(list.body.result.data.map((t: { name: string }) => t.name)).toContain('calculator');
    const health = await h.call('/trpc/health');
    expect(health.body).toMatchObject({ result: { data: { ok: true } } });
  });

  it('answers 401 without a token and 404 for an unknown procedure', async () => {
    const anonymous = await h.call('/trpc/tools.list');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.data.code).toBe('UNAUTHORIZED');
    const unknown = await h.call('/trpc/tools.frobnicate', { token: 'demo' });
    expect(unknown.status).toBe(404);
  });

  it('answers 400 with the field for invalid input, and 413 for a body over the cap', async () => {
    const bad = await h.call('/trpc/tools.invoke', { method: 'POST', token: 'demo', json: { tool: 'calculator', args: {}, sudo: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/sudo/);
    expect(JSON.stringify(bad.body)).not.toMatch(/stack|\/work\//);
    const huge = await h.call('/trpc/tools.invoke', {
      method: 'POST',
      token: 'demo',
      json: { tool: 'calculator', args: { expression: '1'.repeat(2 * 1024 * 1024) } },
    });
    expect(huge.status).toBe(413);
  });

  it('runs a small batch, and refuses a batch past the cap before any call runs (one request, many tool calls)', async () => {
    const batch = (n: number) => {
      const body = Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), { tool: 'calculator', args: { expression: `${i}+1` } }]));
      return h.call(`/trpc/${Array.from({ length: n }, () => 'tools.invoke').join(',')}?batch=1`, { method: 'POST', token: 'demo', json: body });
    };
    const small = await batch(2);
    expect(small.status).toBe(200);
    expect(small.body.map((r: { result: { data: { output: { result: number } } } }) => r.result.data.output.result)).toEqual([1, 2]);

    const before = (await h.call('/api/v1/audit/tail?limit=200', { token: 'demo' })).body;
    const big = await batch(MAX_TRPC_BATCH + 1);
    expect(big.status).toBe(400);
    expect(JSON.stringify(big.body)).toMatch(/batch/i);
    const after = (await h.call('/api/v1/audit/tail?limit=200', { token: 'demo' })).body;
    // Nothing of the refused batch was audited: no call of it reached the gateway.
    expect(JSON.stringify(after)).toBe(JSON.stringify(before));
  });
});
