import { createTestDatabase, type TestDatabase } from '@toolgate/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

const invoke = { tool: 'calculator', version: '1.0.0', args: { expression: '6*7' } };

describe('scale-out configuration: two server processes sharing PostgreSQL', () => {
  let db: TestDatabase;
  let a: Harness;
  let b: Harness;
  const principals = {
    principals: [{ id: 'alice', token: 'alice-token-0123456789', tenant: 'acme', roles: ['worker', 'operator'], budget: { calls: 5, windowSeconds: 3600 } }],
    roles: { worker: ['*'] },
    tenants: { acme: { tools: ['*'], selfApproval: false } },
  };

  beforeAll(async () => {
    db = await createTestDatabase(inject('toolgatePostgresUrl'));
    const env = { TOOLGATE_STORE: 'postgres', TOOLGATE_AUDIT: 'postgres', DATABASE_URL: db.url };
    a = await startHarness(env, { principals });
    b = await startHarness(env, { principals });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  it('shares one budget across both servers', async () => {
    const token = 'alice-token-0123456789';
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).call('/api/v1/tools/invoke', { method: 'POST', token, json: invoke })),
    );
    const bodies = results.map((r) => r.body);
    expect(bodies.filter((x) => x.ok)).toHaveLength(5);
    expect(bodies.filter((x) => !x.ok).every((x) => x.denial.code === 'BUDGET_EXHAUSTED')).toBe(true);
  });

  it('writes one gap-free audit chain from both servers', async () => {
    const token = 'alice-token-0123456789';
    const verify = await a.call('/api/v1/audit/verify', { token });
    expect(verify.body).toMatchObject({ ok: true });
    const tail = await b.call('/api/v1/audit?limit=100', { token });
    const seqs = tail.body.map((r: { seq: number }) => r.seq);
    expect(seqs).toEqual(seqs.map((_: number, i: number) => seqs[0] + i));
    expect(tail.body.filter((r: { event: string }) => r.event === 'succeeded')).toHaveLength(5);
  });

  it('shares tenant settings across both servers', async () => {
    const token = 'alice-token-0123456789';
    await a.call('/api/v1/settings/egress/allow', { method: 'POST', token, json: { host: 'example.net' } });
    const { body } = await b.call('/api/v1/settings/egress', { token });
    expect(body).toEqual({ enabled: true, allowAny: false, hosts: ['example.net'] });
  });
});
