import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { startHostileIssuer, startOidcProvider, type HostileIssuer, type TestOidcProvider } from '@toolgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp, healthTimes, runCli, sendExact, startHarness, type Harness } from './e2e-harness.js';

const AUDIENCE = 'http://127.0.0.1/toolgate-e2e/mcp';
const POLICY = {
  roles: { worker: ['calculator'], approver: [] },
  tenants: { acme: { tools: ['*'] }, globex: { tools: ['calculator'] } },
};

function oidcEnv(issuer: string): Record<string, string> {
  return { TOOLGATE_PRINCIPALS: 'oidc', TOOLGATE_OIDC_ISSUER: issuer, TOOLGATE_OIDC_AUDIENCE: AUDIENCE, TOOLGATE_OIDC_BUDGET: '1000/3600' };
}

/**
 * `TOOLGATE_PRINCIPALS=oidc` end to end (ADR 0074): a real OpenID provider on loopback issues
 * access tokens through the client-credentials grant, and the server takes them on REST, tRPC and
 * MCP; discovery and keys come through the guarded client.
 */
describe('OIDC principals, end to end', { timeout: 60_000 }, () => {
  let op: TestOidcProvider;
  let h: Harness;
  let alice: string;
  beforeAll(async () => {
    op = await startOidcProvider([
      { id: 'alice', secret: 'alice-secret-0123456789abcdef', claims: { tenant: 'acme', roles: ['worker'] } },
      { id: 'nobody', secret: 'nobody-secret-0123456789abcdef', claims: { roles: ['worker'] } },
    ]);
    h = await startHarness(oidcEnv(op.issuer), { principals: POLICY });
    alice = await op.token('alice', { resource: AUDIENCE });
  });
  afterAll(async () => {
    await h?.stop();
    await op?.close();
  });

  it('lists and invokes tools with a token of a real grant, on REST, tRPC and MCP', async () => {
    const listed = await h.call('/api/v1/tools', { token: alice });
    expect(listed.status).toBe(200);
    expect((listed.body.tools as { name: string }[]).map((t) => t.name)).toContain('calculator');
    const invoked = await h.call('/api/v1/tools/invoke', { method: 'POST', token: alice, json: { tool: 'calculator', args: { expression: '6*7' } } });
    expect(invoked.body).toMatchObject({ ok: true });
    const trpc = await h.call('/trpc/tools.list', { token: alice });
    expect(trpc.status).toBe(200);
    const client = new LegacyClient({ name: 'oidc-e2e', version: '1.0.0' });
    await connectMcp(h, alice, client);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('calculator');
    } finally {
      await client.close();
    }
    expect(h.logs.some((l) => l.includes(`principals: bearer JWTs of ${op.issuer}`))).toBe(true);
  });

  it('serves the CLI with a token of the issuer, and says why another one is refused', async () => {
    const listed = await runCli(h, ['tools', 'list'], alice);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('calculator@');
    const refused = await runCli(h, ['tools', 'list'], await op.token('alice', { resource: 'https://api.example.com/' }));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unauthorized: invalid bearer token: the token is for another audience');
  });

  it('answers whoami on REST, tRPC and the CLI: principal with its issuer, grants, tools and budget', async () => {
    const me = await h.call('/api/v1/me', { token: alice });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      principal: { id: 'alice', tenant: 'acme', roles: ['worker'], issuer: op.issuer },
      grants: [],
      visibleTools: 1,
      budget: { calls: 1000, windowSeconds: 3600, remaining: expect.any(Number), resetsAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    });
    const trpc = await h.call('/trpc/whoami', { token: alice });
    expect(trpc.body.result.data).toEqual(me.body);
    const cli = await runCli(h, ['whoami'], alice);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(`principal alice in tenant acme (token of ${op.issuer})`);
    expect(cli.stdout).toMatch(/budget: \d+ of 1000 calls left in this 3600 s window; whole again at /);
    // A call spends one: whoami after it says so.
    const before = me.body.budget.remaining as number;
    await h.call('/api/v1/tools/invoke', { method: 'POST', token: alice, json: { tool: 'calculator', args: { expression: '2+2' } } });
    expect((await h.call('/api/v1/me', { token: alice })).body.budget.remaining).toBe(before - 1);
  });

  it('publishes protected-resource metadata naming the issuer, for the server and for /mcp', async () => {
    for (const [path, resource] of [
      ['/.well-known/oauth-protected-resource', h.server.url],
      ['/.well-known/oauth-protected-resource/mcp', `${h.server.url}/mcp`],
    ] as const) {
      const { status, body } = await h.call(path);
      expect(status).toBe(200);
      expect(body).toMatchObject({ resource, authorization_servers: [op.issuer], bearer_methods_supported: ['header'] });
    }
  });

  it('answers 401 without a token with a challenge pointing at the metadata, on each face', async () => {
    const base = h.server.url;
    const rest = await h.call('/api/v1/tools');
    expect(rest.status).toBe(401);
    expect(rest.headers.get('www-authenticate')).toBe(`Bearer realm="toolgate", resource_metadata="${base}/.well-known/oauth-protected-resource"`);
    const mcp = await h.call('/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toBe(`Bearer realm="toolgate", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    const trpc = await h.call('/trpc/tools.list');
    expect(trpc.status).toBe(401);
    expect(trpc.headers.get('www-authenticate')).toContain('resource_metadata=');
  });

  it('refuses a token for another audience, an expired one and a tenantless one with invalid_token and the reason', async () => {
    const cases: [string, string][] = [
      [await op.token('alice', { resource: 'https://api.example.com/' }), 'the token is for another audience'],
      [await op.sign({ sub: 'alice', tenant: 'acme', roles: ['worker'], iss: op.issuer, aud: AUDIENCE, iat: 1, exp: 2 }), 'the token has expired'],
      [await op.token('nobody', { resource: AUDIENCE }), "the token has no 'tenant' claim, so it names no tenant"],
    ];
    for (const [token, why] of cases) {
      for (const path of ['/api/v1/tools', '/trpc/tools.list']) {
        const res = await h.call(path, { token });
        expect(res.status, path).toBe(401);
        expect(res.headers.get('www-authenticate')).toContain(`error="invalid_token", error_description="${why}"`);
      }
      const mcp = await h.call('/mcp', { method: 'POST', token, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
      expect(mcp.status).toBe(401);
      expect(mcp.body.error.message).toBe(`invalid bearer token: ${why}`);
    }
  });

  it('refuses a request with two Authorization headers, whichever holds the good token', async () => {
    const port = Number(new URL(h.server.url).port);
    for (const pair of [[`Bearer ${alice}`, 'Bearer x.y.z'], ['Bearer x.y.z', `Bearer ${alice}`], [`Bearer ${alice}`, `Bearer ${alice}`]]) {
      const answer = await sendExact(port, { method: 'GET', path: '/api/v1/tools', headers: [['Host', `127.0.0.1:${port}`], ...pair.map((v) => ['Authorization', v] as [string, string])] });
      expect(answer.status).toBe(401);
      expect(answer.body.error.message).toBe('invalid bearer token: the request has more than one Authorization header');
    }
  });

  it('never writes a token into the operator log or the audit trail', async () => {
    await h.call('/api/v1/tools/invoke', { method: 'POST', token: alice, json: { tool: 'calculator', args: { expression: '1+1' } } });
    await h.call('/api/v1/tools', { token: `${alice}x` });
    const logs = h.logs.join('\n');
    const auditDir = join(h.dataDir, 'data', 'audit');
    const audit = (await Promise.all((await readdir(auditDir)).map((f) => readFile(join(auditDir, f), 'utf8')))).join('\n');
    expect(audit).toContain('"principal":"alice"');
    // A call's records name who vouched for the caller.
    expect(audit).toContain(`"issuer":"${op.issuer}"`);
    const tail = await h.call('/api/v1/audit?limit=5', { token: alice });
    expect(tail.status).toBe(200);
    expect(JSON.stringify(tail.body)).toContain(`"issuer":"${op.issuer}"`);
    const [, payload, signature] = alice.split('.') as [string, string, string];
    for (const text of [logs, audit]) {
      expect(text).not.toContain(payload.slice(0, 40));
      expect(text).not.toContain(signature.slice(0, 40));
    }
  });

  it('keeps serving while the policy file is replaced by a broken one, and takes a valid one after', async () => {
    const file = join(h.dataDir, 'principals.json');
    let stop = false;
    const calls = (async () => {
      let n = 0;
      while (!stop) {
        const res = await h.call('/api/v1/tools', { token: alice });
        expect(res.status).toBe(200);
        n++;
      }
      return n;
    })();
    await writeFile(`${file}.new`, '{"roles": {"worker": ["calculator"]}, "tenants": ');
    await rename(`${file}.new`, file);
    await expect.poll(() => h.logs.some((l) => l.includes('reload refused')), { timeout: 10_000 }).toBe(true);
    // A principal in the policy file is refused in oidc mode, and the old policy keeps serving.
    await writeFile(`${file}.new`, JSON.stringify({ ...POLICY, principals: [{ id: 'x', token: 'x-token-0123456789abcdef', tenant: 'acme', roles: ['worker'] }] }));
    await rename(`${file}.new`, file);
    await expect.poll(() => h.logs.filter((l) => l.includes('reload refused')).length, { timeout: 10_000 }).toBe(2);
    expect(h.logs.find((l) => l.includes('reload refused') && l.includes('principals must be absent or empty'))).toBeDefined();
    // Valid again, with worker narrowed: the next call sees the new policy.
    await writeFile(`${file}.new`, JSON.stringify({ roles: { worker: [] }, tenants: POLICY.tenants }));
    await rename(`${file}.new`, file);
    await expect.poll(() => h.logs.some((l) => l.includes('reloaded')), { timeout: 10_000 }).toBe(true);
    stop = true;
    expect(await calls).toBeGreaterThan(0);
    const invoked = await h.call('/api/v1/tools/invoke', { method: 'POST', token: alice, json: { tool: 'calculator', args: { expression: '1+1' } } });
    expect(invoked.body).toMatchObject({ ok: false, denial: { gate: 'allow' } });
  });
});

describe('OIDC principals, an issuer whose keys cannot be had', { timeout: 120_000 }, () => {
  let issuer: HostileIssuer;
  let h: Harness;
  beforeAll(async () => {
    issuer = await startHostileIssuer();
    issuer.mode = 'slow';
    h = await startHarness(oidcEnv(issuer.issuer), { principals: POLICY });
  });
  afterAll(async () => {
    await h?.stop();
    await issuer?.close();
  });

  it('starts, says so, and answers 503 to a token while the key set hangs, with /healthz prompt throughout', async () => {
    expect(h.logs.some((l) => l.startsWith(`warn principals: OIDC issuer ${issuer.issuer} cannot be used yet`))).toBe(true);
    const token = await issuer.sign({ sub: 'alice', tenant: 'acme', roles: ['worker'], iss: issuer.issuer, aud: AUDIENCE, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 300 });
    for (const mode of ['slow', 'down', 'garbage', 'reset'] as const) {
      issuer.mode = mode;
      let done = false;
      const answers = Promise.all([h.call('/api/v1/tools', { token }), h.call('/trpc/tools.list', { token })]).finally(() => (done = true));
      const times = await healthTimes(h, () => done);
      for (const res of await answers) {
        expect(res.status, mode).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        expect(JSON.stringify(res.body)).toContain('cannot check the bearer token now');
      }
      expect(Math.max(...times)).toBeLessThan(100);
      // Past the failure pause, the next mode is asked afresh.
      await new Promise((r) => setTimeout(r, 5_100));
    }
    issuer.mode = 'ok';
    expect((await h.call('/api/v1/tools', { token })).status).toBe(200);
  });
});

describe('OIDC principals with scopes checked (TOOLGATE_OIDC_SCOPES=on)', { timeout: 60_000 }, () => {
  let op: TestOidcProvider;
  let h: Harness;
  beforeAll(async () => {
    op = await startOidcProvider([{ id: 'alice', secret: 'alice-secret-0123456789abcdef', claims: { tenant: 'acme', roles: ['worker', 'approver'] } }]);
    h = await startHarness({ ...oidcEnv(op.issuer), TOOLGATE_OIDC_SCOPES: 'on' }, { principals: POLICY });
  });
  afterAll(async () => {
    await h?.stop();
    await op?.close();
  });
  const mcpPost = (token: string, body: unknown, session?: string) =>
    h.call('/mcp', {
      method: 'POST',
      token,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...(session ? { 'mcp-session-id': session } : {}) },
      body: JSON.stringify(body),
    });

  it('names the scopes in the metadata', async () => {
    expect((await h.call('/.well-known/oauth-protected-resource/mcp')).body.scopes_supported).toEqual(['tools:read', 'tools:call', 'approvals:decide', 'toolgate:admin']);
  });

  it('lets a tools:read token list but not call, answering 403 insufficient_scope with the scope needed, on each face', async () => {
    const reader = await op.token('alice', { resource: AUDIENCE, scope: 'tools:read' });
    expect((await h.call('/api/v1/tools', { token: reader })).status).toBe(200);
    expect((await h.call('/api/v1/me', { token: reader })).body.principal.scopes).toEqual(['tools:read']);
    const rest = await h.call('/api/v1/tools/invoke', { method: 'POST', token: reader, json: { tool: 'calculator', args: { expression: '1+1' } } });
    expect(rest.status).toBe(403);
    expect(rest.body.error).toEqual({ code: 'INSUFFICIENT_SCOPE', message: "insufficient scope: this call needs a token with the scope 'tools:call'" });
    expect(rest.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="tools:call"');
    const trpc = await h.call('/trpc/tools.invoke', { method: 'POST', token: reader, json: { tool: 'calculator', args: { expression: '1+1' } } });
    expect(trpc.status).toBe(403);
    expect(trpc.headers.get('www-authenticate')).toContain('scope="tools:call"');
    const decide = await h.call('/api/v1/approvals/x/decide', { method: 'POST', token: reader, json: { approve: true } });
    expect(decide.status).toBe(403);
    expect(decide.headers.get('www-authenticate')).toContain('scope="approvals:decide"');

    const init = await mcpPost(reader, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'scopes', version: '1' } } });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id') ?? undefined;
    const listed = await mcpPost(reader, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, session);
    expect(listed.status).toBe(200);
    const called = await mcpPost(reader, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'calculator', arguments: { expression: '1+1' } } }, session);
    expect(called.status).toBe(403);
    expect(called.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="tools:call"');
    // The refusal answers the request it refuses, by its id.
    expect(called.body).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32001 } });
  });

  it('lets a token with both scopes call, and refuses everything scoped to a token with none', async () => {
    const caller = await op.token('alice', { resource: AUDIENCE, scope: 'tools:read tools:call' });
    expect((await h.call('/api/v1/tools/invoke', { method: 'POST', token: caller, json: { tool: 'calculator', args: { expression: '2*3' } } })).body).toMatchObject({ ok: true });
    const none = await op.token('alice', { resource: AUDIENCE });
    for (const path of ['/api/v1/tools', '/api/v1/me', '/api/v1/settings/egress']) {
      const res = await h.call(path, { token: none });
      expect(res.status, path).toBe(403);
      expect(res.body.error.code).toBe('INSUFFICIENT_SCOPE');
    }
  });
});
