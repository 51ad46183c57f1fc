import { resolve } from 'node:path';
import type { AuditRecord } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';
import { connectAnswering, lowRiskServer, sleep, upstreamText, type Generation } from './mcp-relay-fixtures.js';

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

/** A client that declares elicitation (form mode) and sampling and answers both, recording what it was asked. */
async function connect(h: Harness, token: string, generation: Generation) {
  const asked: any[] = [];
  const client = await connectAnswering(h, token, generation, {
    elicitation: { form: {} },
    elicit: (params) => (asked.push(params), { action: 'accept', content: { ok: true } }),
    sample: (params) => (asked.push(params), { role: 'assistant', model: 'm', content: { type: 'text', text: 'a sampled reply' } }),
  });
  return { asked, ...client };
}

describe('an upstream that ignores cancellation and asks late reaches no later caller, across tenants', { timeout: 180_000 }, () => {
  let h: Harness;
  beforeAll(async () => {
    const server = (name: string, extra: object = {}) => lowRiskServer(name, [LATE], extra);
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
      const alice = await connect(h, ALICE, 'legacy (sdk 1.x, 2025-era)');
      const bob = await connect(h, BOB, generation);
      const aliceDenials = (await auditOf(OLGA, 'up__slow_ask')).filter((r) => r.event === 'denied').length;
      try {
        const controller = new AbortController();
        const abandoned = alice.callTool('up__slow_ask', { delayMs: 1500, kind, secret: SECRET }, { signal: controller.signal });
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
      const alice = await connect(h, ALICE, 'legacy (sdk 1.x, 2025-era)');
      const bob = await connect(h, BOB, generation);
      try {
        const controller = new AbortController();
        const abandoned = alice.callTool('brief__hang', {}, { signal: controller.signal });
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
