import { resolve } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { AuditRecord } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

// Response bodies are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

const ALICE = 'alice-token-mcp-quarantine-0123456789abcdef';
const BOB = 'bob-token-mcp-quarantine-0123456789abcdef';
const OLGA = 'olga-token-mcp-quarantine-0123456789abcdef';
const OTTO = 'otto-token-mcp-quarantine-0123456789abcdef';
const LATE = resolve(__dirname, '../../../libs/adapters/mcp-client/test/fixtures/late-asking-server.mjs');
const SECRET = 'alice-ACCT-42';
const QUARANTINE = 'an earlier call on this server may still be running';
/** The `brief` server's call deadline: how long an abandoned call's quarantine lasts at most. */
const BRIEF_TIMEOUT_MS = 1500;

type Generation = 'modern (v2, 2026-07-28)' | 'legacy (v2, 2025-11-25)' | 'legacy (sdk 1.x, 2025-era)';

/** A client that declares elicitation and sampling and answers both, recording what it was asked. */
async function connect(url: string, token: string, generation: Generation) {
  const asked: any[] = [];
  const elicit = async (request: any) => (asked.push(request.params), { action: 'accept', content: { ok: true } });
  const sample = async (request: any) => (asked.push(request.params), { role: 'assistant', model: 'm', content: { type: 'text', text: 'a sampled reply' } });
  const requestInit = { headers: { authorization: `Bearer ${token}` } };
  const capabilities = { elicitation: { form: {} }, sampling: {} };
  if (generation === 'legacy (sdk 1.x, 2025-era)') {
    const client = new LegacyClient({ name: 'quarantine-v1', version: '1.0.0' }, { capabilities });
    client.setRequestHandler(ElicitRequestSchema, elicit as never);
    client.setRequestHandler(CreateMessageRequestSchema, sample as never);
    await client.connect(new LegacyTransport(new URL(url), { requestInit }));
    return {
      asked,
      callTool: (name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<any> =>
        client.callTool({ name, arguments: args }, undefined, { timeout: 60_000, ...(signal ? { signal } : {}) }),
      close: () => client.close(),
    };
  }
  const client = new ModernClient({ name: 'quarantine-v2', version: '1.0.0' }, {
    capabilities,
    ...(generation === 'modern (v2, 2026-07-28)' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
  } as any);
  client.setRequestHandler('elicitation/create', elicit as never);
  client.setRequestHandler('sampling/createMessage', sample as never);
  await client.connect(new ModernTransport(new URL(url), { requestInit }));
  return {
    asked,
    callTool: (name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<any> =>
      client.callTool({ name, arguments: args }, { timeout: 60_000, ...(signal ? { signal } : {}) } as any),
    close: () => client.close(),
  };
}

const textOf = (result: any): string => (result.content ?? []).map((c: any) => c.text ?? '').join('\n');
/** The text an upstream tool answered, out of the output Toolgate wraps it in. */
const upstreamText = (result: any): string => {
  try {
    return textOf(JSON.parse(textOf(result)));
  } catch {
    return textOf(result);
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an upstream that ignores cancellation and asks late reaches no later caller, across tenants', { timeout: 180_000 }, () => {
  let h: Harness;
  let url: string;
  beforeAll(async () => {
    const server = (name: string, extra: object = {}) => ({ name, command: process.execPath, args: [LATE], env: {}, tier: 'unisolated', risk: 'low', ...extra });
    const tenant = { tools: ['*'], grants: [{ type: 'exec', scope: 'mcp:up' }, { type: 'exec', scope: 'mcp:brief' }] };
    h = await startHarness(
      {},
      {
        mcpServers: { servers: [server('up'), server('brief', { timeoutMs: BRIEF_TIMEOUT_MS })] },
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'olga', token: OLGA, tenant: 'acme', roles: ['operator'] },
            { id: 'bob', token: BOB, tenant: 'beta', roles: ['worker'] },
            { id: 'otto', token: OTTO, tenant: 'beta', roles: ['operator'] },
          ],
          roles: { worker: ['*'], operator: [] },
          tenants: { acme: tenant, beta: tenant },
        },
      },
    );
    url = `${h.server.url}/mcp`;
    // Discovery of the upstream servers runs after the start; wait until their tools are listed.
    for (let i = 0; i < 200; i++) {
      const tools = (await h.call('/api/v1/tools', { token: BOB })).body.tools ?? [];
      if (['up__slow_ask', 'brief__hang'].every((name) => tools.some((t: any) => t.name === name))) break;
      await sleep(100);
    }
  }, 60_000);
  afterAll(async () => h?.stop());

  /** The audit records of one tool, as the tenant's operator reads them. */
  const auditOf = async (operator: string, tool: string): Promise<AuditRecord[]> =>
    ((await h.call('/api/v1/audit?limit=500', { token: operator })).body as AuditRecord[]).filter((r) => r.tool === tool);

  describe.each(['legacy (v2, 2025-11-25)', 'modern (v2, 2026-07-28)'] as Generation[])('cross-tenant leak, later caller %s', (generation) => {
    it.each(['elicitation', 'sampling'])("alice's abandoned %s is refused upstream, never shown to bob, and both calls are audited", async (kind) => {
      const alice = await connect(url, ALICE, 'legacy (sdk 1.x, 2025-era)');
      const bob = await connect(url, BOB, generation);
      const aliceDenials = (await auditOf(OLGA, 'up__slow_ask')).filter((r) => r.event === 'denied').length;
      try {
        const controller = new AbortController();
        const abandoned = alice.callTool('up__slow_ask', { delayMs: 1500, kind, secret: SECRET }, controller.signal);
        setTimeout(() => controller.abort(), 500);
        await expect(abandoned).rejects.toThrow();
        await sleep(300);
        // Bob's call is the only one in flight when alice's upstream operation asks, at 1.5 s.
        const bobs = await bob.callTool('up__sleep', { ms: 1500 });
        expect(bobs.isError).toBeFalsy();
        expect(upstreamText(bobs)).toBe('slept');
        expect(bob.asked).toEqual([]);
        expect(alice.asked).toEqual([]);
        // Alice's upstream operation got the refusal, not bob's answer.
        expect(upstreamText(await alice.callTool('up__outcome', {}))).toMatch(new RegExp(`^refused: .*${QUARANTINE}`));
        // The late answer has come: the quarantine is lifted, and bob's own question reaches bob.
        const own = await bob.callTool('up__ask', { kind });
        expect(upstreamText(own)).toMatch(/^answered: /);
        expect(bob.asked).toHaveLength(1);
        expect(JSON.stringify(bob.asked)).not.toContain(SECRET);
      } finally {
        await Promise.all([alice.close(), bob.close()]);
      }
      const bobSleep = (await auditOf(OTTO, 'up__sleep')).at(-1);
      expect(bobSleep).toMatchObject({ event: 'succeeded', principal: 'bob', tenant: 'beta', detail: `relayed to the caller: ${kind} 1: 0 answered, 1 refused (${QUARANTINE})` });
      expect((await auditOf(OTTO, 'up__ask')).at(-1)).toMatchObject({ event: 'succeeded', principal: 'bob', detail: `relayed to the caller: ${kind} 1: 1 answered` });
      const aliceSlow = (await auditOf(OLGA, 'up__slow_ask')).filter((r) => r.event === 'denied');
      expect(aliceSlow).toHaveLength(aliceDenials + 1);
      expect(aliceSlow.at(-1)).toMatchObject({ event: 'denied', gate: 'execute', code: 'EXECUTION_FAILED', principal: 'alice', tenant: 'acme', detail: 'cancelled by the caller' });
      // Nothing of alice's reaches the other tenant's trail.
      const beta = JSON.stringify((await h.call('/api/v1/audit?limit=500', { token: OTTO })).body);
      expect(beta).not.toContain(SECRET);
      expect(beta).not.toContain('alice');
    });
  });

  describe('the deadline lifts the quarantine when no late answer ever comes', () => {
    it.each(['legacy (v2, 2025-11-25)', 'modern (v2, 2026-07-28)'] as Generation[])('%s later caller: refused until the deadline, relayed after it', async (generation) => {
      const alice = await connect(url, ALICE, 'legacy (sdk 1.x, 2025-era)');
      const bob = await connect(url, BOB, generation);
      try {
        const controller = new AbortController();
        const abandoned = alice.callTool('brief__hang', {}, controller.signal);
        setTimeout(() => controller.abort(), 200);
        await expect(abandoned).rejects.toThrow();
        const during = await bob.callTool('brief__ask', { kind: 'elicitation' });
        expect(upstreamText(during)).toMatch(new RegExp(`^refused: .*${QUARANTINE}`));
        expect(bob.asked).toEqual([]);
        await sleep(BRIEF_TIMEOUT_MS + 200);
        const after = await bob.callTool('brief__ask', { kind: 'elicitation' });
        expect(upstreamText(after)).toMatch(/^answered: /);
        expect(bob.asked).toHaveLength(1);
      } finally {
        await Promise.all([alice.close(), bob.close()]);
      }
      const [during, after] = (await auditOf(OTTO, 'brief__ask')).filter((r) => r.event === 'succeeded').slice(-2);
      expect(during?.detail).toBe(`relayed to the caller: elicitation 1: 0 answered, 1 refused (${QUARANTINE})`);
      expect(after?.detail).toBe('relayed to the caller: elicitation 1: 1 answered');
    });
  });
});
