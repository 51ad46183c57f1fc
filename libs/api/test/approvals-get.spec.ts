import type { Principal, ToolDefinition } from '@toolgate/contracts';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAppRouter, createCallerFactory, createContextInner, createRestHandler } from '../src/index.js';
import { realGateway } from './real-gateway.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker'] };
const otherWorker: Principal = { id: 'w2', tenant: 'acme', roles: ['worker'] };
const approver: Principal = { id: 'a', tenant: 'acme', roles: ['approver'] };
const foreignApprover: Principal = { id: 'ga', tenant: 'globex', roles: ['worker', 'approver', 'operator'] };

const deploy: ToolDefinition = {
  manifest: {
    name: 'deploy',
    version: '1.0.0',
    description: 'deploys',
    provenance: 'first-party',
    risk: 'high',
    permissions: [],
    input: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'], additionalProperties: false },
    output: {},
    tier: 'inprocess',
    timeoutMs: 1000,
  },
  handler: { invoke: async (args) => ({ deployed: args }) },
};

describe('approvals.get and GET /api/v1/approvals/:id', () => {
  let router: ReturnType<typeof createAppRouter>;
  let id: string;
  beforeEach(async () => {
    const gateway = realGateway({
      tools: [deploy],
      principals: [worker, otherWorker, approver, foreignApprover],
      roles: { worker: ['*'] },
      tmpPrefix: 'toolgate-api-',
    });
    router = createAppRouter({ gateway, health: () => ({ ok: true, version: 'test', reasons: [], sources: [] }) });
    const requested = await caller(worker).approvals.request({ tool: 'deploy', args: { target: 'prod' } });
    if (!requested.ok) throw new Error(JSON.stringify(requested.denial));
    id = requested.approval.id;
  });
  const caller = (principal?: Principal) => createCallerFactory(router)(createContextInner(principal ? { principal } : {}));
  const rest = (path: string, principal?: Principal) => createRestHandler(router)({ method: 'GET', path, query: new URLSearchParams(), ...(principal ? { principal } : {}) });

  it('shows the approver and the requester the request, over tRPC and REST alike', async () => {
    const viaTrpc = await caller(approver).approvals.get({ id });
    expect(viaTrpc).toMatchObject({ id, tool: 'deploy', version: '1.0.0', requester: 'w', args: { target: 'prod' }, status: 'pending' });
    expect(await caller(worker).approvals.get({ id })).toEqual(viaTrpc);
    const viaRest = await rest(`/approvals/${id}`, approver);
    expect(viaRest).toEqual({ status: 200, body: JSON.parse(JSON.stringify(viaTrpc)) });
  });

  it('refuses a caller without a principal', async () => {
    await expect(caller().approvals.get({ id })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect((await rest(`/approvals/${id}`)).status).toBe(401);
  });

  describe('visibility across tenants and requesters', () => {
    it("another tenant's approver and another requester get the same 404 as an unknown id", async () => {
      const unknown = await rest('/approvals/no-such-id', approver);
      expect(unknown).toEqual({ status: 404, body: { error: { code: 'NOT_FOUND', message: "There is no approval 'no-such-id' that you can see in your tenant." } } });
      for (const who of [foreignApprover, otherWorker]) {
        const answer = await rest(`/approvals/${id}`, who);
        expect(answer).toEqual({ status: 404, body: { error: { code: 'NOT_FOUND', message: `There is no approval '${id}' that you can see in your tenant.` } } });
        await expect(caller(who).approvals.get({ id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      }
    });
  });

  describe('hostile ids', () => {
    it('encoded slashes, dots and markup are one id that does not exist; a raw slash is no route', async () => {
      for (const path of [`/approvals/..%2F${id}`, `/approvals/%2E%2E%2F${id}`, `/approvals/${id}%2F..`, '/approvals/%3Cscript%3Ealert(1)%3C%2Fscript%3E', `/approvals/${id}%00`]) {
        const answer = await rest(path, approver);
        expect(answer.status, path).toBe(404);
        expect((answer.body as { error: { code: string } }).error.code).toBe('NOT_FOUND');
      }
      const nested = await rest(`/approvals/x/${id}`, approver);
      expect(nested).toEqual({ status: 404, body: { error: { code: 'NOT_FOUND', message: `no route /approvals/x/${id}` } } });
    });

    it('an id over 128 characters is a 400 that says so; a malformed escape is a 400 too', async () => {
      const long = await rest(`/approvals/${'x'.repeat(129)}`, approver);
      expect(long.status).toBe(400);
      expect((long.body as { error: { issues: string[] } }).error.issues).toEqual(['id: Too big: expected string to have <=128 characters']);
      await expect(caller(approver).approvals.get({ id: '' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      await expect(caller(approver).approvals.get({ id, extra: 1 } as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
      const malformed = await rest('/approvals/%E0%A4%A', approver);
      expect(malformed.status).toBe(400);
    });

    it('a secret-shaped id is redacted in the message', async () => {
      const secret = 'sk-' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6';
      const answer = await rest(`/approvals/${secret}`, approver);
      expect(answer.status).toBe(404);
      expect(JSON.stringify(answer.body)).not.toContain(secret);
    });
  });
});
