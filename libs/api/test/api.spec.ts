import type { Principal } from '@toolgate/contracts';
import { MAX_ARGS_DEPTH } from '@toolgate/gateway';
import { RecordingAuditSink } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { TRPCError } from '@trpc/server';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAppRouter, createCallerFactory, createContextInner, createRestHandler, InsufficientScopeError } from '../src/index.js';
import { realGateway } from './real-gateway.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker'] };
const operator: Principal = { id: 'o', tenant: 'acme', roles: ['worker', 'operator'] };

describe('the tRPC router over a real gateway', () => {
  let router: ReturnType<typeof createAppRouter>;
  let audit: RecordingAuditSink;
  beforeEach(() => {
    audit = new RecordingAuditSink();
    const gateway = realGateway({ tools: [calculatorTool], principals: [worker, operator], roles: { worker: ['*'] }, audit, tmpPrefix: 'toolgate-api-' });
    router = createAppRouter({ gateway, health: () => ({ ok: true, version: 'test', reasons: [], sources: [] }) });
  });
  const caller = (principal?: Principal) => createCallerFactory(router)(createContextInner(principal ? { principal } : {}));

  it('invokes a tool and maps `approved` onto a self-approval request', async () => {
    const result = await caller(worker).tools.invoke({ tool: 'calculator', args: { expression: '2+3*4' } });
    expect(result).toMatchObject({ ok: true, output: { result: 14 } });
    expect(audit.records.map((r) => r.event)).toEqual(['authorized', 'succeeded']);
  });

  it('refuses callers without a principal', async () => {
    await expect(caller().tools.list()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(caller().health()).resolves.toMatchObject({ ok: true });
  });

  it('holds a token with scopes to them before any input is parsed, and one without scopes checked to none', async () => {
    const reader: Principal = { ...worker, scopes: ['tools:read'] };
    await expect(caller(reader).tools.list()).resolves.toBeInstanceOf(Array);
    const refused = await caller(reader).tools.invoke({ tool: 'calculator', args: { expression: '1' } }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'FORBIDDEN', message: "insufficient scope: this call needs a token with the scope 'tools:call'" });
    expect((refused as TRPCError).cause).toBeInstanceOf(InsufficientScopeError);
    // Even input no procedure would accept is refused for the scope, not parsed.
    await expect(caller(reader).tools.invoke({ nonsense: true } as never)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const none: Principal = { ...operator, scopes: [] };
    for (const call of [() => caller(none).whoami(), () => caller(none).tools.list(), () => caller(none).settings.egress.get(), () => caller(none).audit.verify()]) {
      await expect(call()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    }
    await expect(caller({ ...operator, scopes: ['toolgate:admin'] }).settings.egress.get()).resolves.toMatchObject({ enabled: false });
    expect(audit.records).toHaveLength(0);
    // REST answers the same refusal with its own code and the scope for the challenge.
    const rest = createRestHandler(router);
    const answer = await rest({ method: 'POST', path: '/tools/invoke', query: new URLSearchParams(), principal: reader, body: { tool: 'calculator', args: { expression: '1' } } });
    expect(answer).toEqual({ status: 403, body: { error: { code: 'INSUFFICIENT_SCOPE', message: "insufficient scope: this call needs a token with the scope 'tools:call'" } }, insufficientScope: 'tools:call' });
  });

  it('rejects unknown fields and says which', async () => {
    const error = await caller(worker).tools.invoke({ tool: 'calculator', args: {}, sudo: true } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCError);
    expect((error as TRPCError).code).toBe('BAD_REQUEST');
  });

  it(`rejects arguments nested deeper than ${MAX_ARGS_DEPTH} levels without recursing`, async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    await expect(caller(worker).tools.invoke({ tool: 'calculator', args: deep as never })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('maps gateway refusals to tRPC codes: a worker may not change egress settings', async () => {
    await expect(caller(worker).settings.egress.allow({ host: 'example.com' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(caller(operator).settings.egress.allow({ host: 'example.com' })).resolves.toEqual({ enabled: true, allowAny: false, hosts: ['example.com'] });
    await expect(caller(operator).settings.egress.allow({ host: 'https://example.com/x' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('explains without running or auditing', async () => {
    const explain = await caller(worker).tools.explain({ tool: 'calculator', args: { expression: '1' } });
    expect(explain.wouldRun).toBe(true);
    expect(audit.records).toEqual([]);
  });

  describe('REST mapping', () => {
    const rest = () => createRestHandler(router);
    const q = new URLSearchParams();

    it('answers each route with the procedure result', async () => {
      const list = await rest()({ method: 'GET', path: '/tools', query: q, principal: worker });
      expect(list.status).toBe(200);
      expect((list.body as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['calculator']);
    });

    it('gives 401, 404, 405, 400 and 403 where they belong', async () => {
      expect((await rest()({ method: 'GET', path: '/tools', query: q })).status).toBe(401);
      expect((await rest()({ method: 'GET', path: '/nope', query: q, principal: worker })).status).toBe(404);
      expect((await rest()({ method: 'PATCH', path: '/tools', query: q, principal: worker })).status).toBe(405);
      const bad = await rest()({ method: 'POST', path: '/tools/invoke', query: q, principal: worker, body: { tool: 7 } });
      expect(bad.status).toBe(400);
      expect((bad.body as { error: { issues: string[] } }).error.issues[0]).toMatch(/^tool: /);
      const forbidden = await rest()({ method: 'POST', path: '/settings/egress/allow', query: q, principal: worker, body: { host: 'a.com' } });
      expect(forbidden.status).toBe(403);
    });

    it('validates query parameters', async () => {
      const res = await rest()({ method: 'GET', path: '/audit', query: new URLSearchParams('limit=-3'), principal: worker });
      expect(res.status).toBe(400);
      expect((res.body as { error: { message: string } }).error.message).toMatch(/limit/);
    });
  });
});
