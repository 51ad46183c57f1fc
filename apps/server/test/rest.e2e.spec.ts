import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

describe('REST API (embedded defaults, demo principal)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('lists tools for the demo principal', async () => {
    const { status, body } = await h.call('/api/v1/tools', { token: 'demo' });
    expect(status).toBe(200);
    expect(body.tools.map((t: { name: string }) => t.name)).toContain('calculator');
  });

  it('serves the seed invoke call: 2+3*4 = 14', async () => {
    const { status, body } = await h.call('/api/v1/tools/invoke', {
      method: 'POST',
      token: 'demo',
      json: { tool: 'calculator', version: '1.0.0', args: { expression: '2+3*4' } },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: true, output: { result: 14 } });
  });

  it('answers a denial with 200 and the gate that refused', async () => {
    const { status, body } = await h.call('/api/v1/tools/invoke', {
      method: 'POST',
      token: 'demo',
      json: { tool: 'calculator', version: '9.9.9', args: { expression: '1' } },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: false, denial: { gate: 'lookup', code: 'VERSION_MISMATCH' } });
  });

  it('answers GET /api/v1/me with the principal of the principals file (no issuer), its tools and no budget', async () => {
    const { status, body } = await h.call('/api/v1/me', { token: 'demo' });
    expect(status).toBe(200);
    expect(body.principal).toEqual({ id: 'demo', tenant: 'default', roles: ['worker', 'operator', 'approver'] });
    expect(body.visibleTools).toBeGreaterThan(3);
    expect(body.budget).toBeUndefined();
    expect((await h.call('/api/v1/me')).status).toBe(401);
  });

  it('refuses a missing or wrong token with 401', async () => {
    expect((await h.call('/api/v1/tools')).status).toBe(401);
    const wrong = await h.call('/api/v1/tools', { token: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toEqual({ code: 'UNAUTHORIZED', message: "invalid bearer token: the token is not a principal's" });
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer realm="toolgate", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource", error="invalid_token"/);
    const basic = await h.call('/api/v1/tools', { headers: { authorization: 'Basic ZGVtbzo=' } });
    expect(basic.status).toBe(401);
    expect(basic.body.error.message).toBe('invalid bearer token: the Authorization header is not "Bearer <token>"');
    const { body, headers } = await h.call('/api/v1/tools/invoke', { method: 'POST', json: {} });
    expect(body.error).toEqual({ code: 'UNAUTHORIZED', message: 'missing bearer token' });
    // No token, no error code (RFC 6750 §3.1): only where the metadata is.
    expect(headers.get('www-authenticate')).not.toContain('error=');
  });

  it('refuses malformed JSON with 400 and says so', async () => {
    const { status, body } = await h.call('/api/v1/tools/invoke', {
      method: 'POST',
      token: 'demo',
      headers: { 'content-type': 'application/json' },
      body: '{"tool": "calculator", ',
    });
    expect(status).toBe(400);
    expect(body.error.code).toBe('PARSE_ERROR');
    expect(body.error.message).toMatch(/^malformed JSON/);
  });

  it('refuses a body that is not JSON with 415', async () => {
    const { status, body } = await h.call('/api/v1/tools/invoke', {
      method: 'POST',
      token: 'demo',
      headers: { 'content-type': 'text/plain' },
      body: 'tool=calculator',
    });
    expect(status).toBe(415);
    expect(body.error.message).toMatch(/application\/json/);
  });

  it('refuses a huge body with 413 and keeps serving', async () => {
    const huge = JSON.stringify({ tool: 'calculator', args: { expression: '1'.repeat(2 * 1024 * 1024) } });
    const { status, body } = await h.call('/api/v1/tools/invoke', {
      method: 'POST',
      token: 'demo',
      headers: { 'content-type': 'application/json' },
      body: huge,
    });
    expect(status).toBe(413);
    expect(body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await h.call('/healthz')).status).toBe(200);
  });

  it.each([
    ['unknown fields', { tool: 'calculator', args: {}, sudo: true }, /Unrecognized key.*sudo/],
    ['args of the wrong shape', { tool: 'calculator', args: [1, 2] }, /args/],
    ['a tool name of the wrong type', { tool: 42, args: {} }, /tool/],
    ['a missing tool', { args: {} }, /tool/],
    ['deeply nested args', { tool: 'calculator', args: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) }, /nested deeper than 32/],
  ])('refuses %s with 400 and a specific message', async (_what, json, message) => {
    const { status, body } = await h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json });
    expect(status).toBe(400);
    expect(body.error.code).toBe('BAD_REQUEST');
    expect(body.error.message).toMatch(message);
  });

  it('reports unsupported methods and unknown routes', async () => {
    expect((await h.call('/api/v1/tools', { method: 'DELETE', token: 'demo' })).status).toBe(405);
    expect((await h.call('/api/v1/nope', { token: 'demo' })).status).toBe(404);
    expect((await h.call('/elsewhere')).status).toBe(404);
  });

  it('refuses a malformed percent-encoding in a path parameter with 400, not 500', async () => {
    for (const id of ['%E0%A4%A', '%', '%zz', '%C0%AF']) {
      const res = await h.call(`/api/v1/approvals/${id}/decide`, { method: 'POST', token: 'demo', json: { decision: 'approve' } });
      expect(res.status, id).toBe(400);
      expect(JSON.stringify(res.body)).not.toMatch(/internal|URI malformed/);
    }
  });

  it('invalid tool input is a denial naming the valid parameters', async () => {
    const { body } = await h.call('/api/v1/tools/invoke', {
      method: 'POST',
      token: 'demo',
      json: { tool: 'calculator', args: { expresion: '1+1', extra: 1 } },
    });
    expect(body.ok).toBe(false);
    expect(body.denial.code).toBe('INVALID_INPUT');
    expect(JSON.stringify(body.denial)).toContain('expression');
  });

  it('lets an operator allow an egress host over REST', async () => {
    const { status, body } = await h.call('/api/v1/settings/egress/allow', { method: 'POST', token: 'demo', json: { host: 'Example.COM.' } });
    expect(status).toBe(200);
    expect(body).toEqual({ enabled: true, allowAny: false, hosts: ['example.com'] });
    const bad = await h.call('/api/v1/settings/egress/allow', { method: 'POST', token: 'demo', json: { host: 'http://evil/x' } });
    expect(bad.status).toBe(400);
  });

  it('answers /healthz', async () => {
    const { status, body } = await h.call('/healthz');
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: true, reasons: [] });
  });
});
