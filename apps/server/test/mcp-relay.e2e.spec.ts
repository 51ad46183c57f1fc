import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { AuditRecord } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp, healthTimes, sendExact, startHarness, type Harness } from './e2e-harness.js';
import { connectAnswering as connect, GENERATIONS, lowRiskServer, mcpPostHeaders, sleep, textOf, upstreamText } from './mcp-relay-fixtures.js';

// Response bodies are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

const ALICE = 'alice-token-mcp-relay-0123456789abcdef';
const BOB = 'bob-token-mcp-relay-0123456789abcdef';
const OLGA = 'olga-token-mcp-relay-0123456789abcdef';
const require = createRequire(import.meta.url);
const EVERYTHING = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const ASKING = resolve(__dirname, '../../../libs/adapters/mcp-client/test/fixtures/asking-server.mjs');

describe('upstream elicitation, sampling and progress relayed over /mcp', { timeout: 180_000 }, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      {},
      {
        mcpServers: {
          servers: [
            // Trusted as low risk by the operator, so no approval stands between the test and the relay.
            lowRiskServer('every', [EVERYTHING, 'stdio']),
            lowRiskServer('asks', [ASKING]),
            // The cancellation tests get their own connection: a cancelled call that its server never
            // answers (as MCP says a server should not) holds that connection's relays until its deadline (ADR 0057).
            lowRiskServer('halts', [ASKING]),
          ],
        },
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'bob', token: BOB, tenant: 'acme', roles: ['worker'] },
            { id: 'olga', token: OLGA, tenant: 'acme', roles: ['operator'] },
          ],
          roles: { worker: ['*'] },
          tenants: { acme: { tools: ['*'], selfApproval: false, grants: [{ type: 'exec', scope: 'mcp:every' }, { type: 'exec', scope: 'mcp:asks' }, { type: 'exec', scope: 'mcp:halts' }] } },
        },
      },
    );
  }, 60_000);
  afterAll(async () => h?.stop());

  /** The newest audit records of one tool. */
  async function auditOf(tool: string): Promise<AuditRecord[]> {
    const audit = await h.call('/api/v1/audit?limit=200', { token: OLGA });
    return (audit.body as AuditRecord[]).filter((r) => r.tool === tool);
  }

  describe.each(GENERATIONS)('%s', (generation) => {
    it("relays the upstream's elicitation to the calling client and hands its answer back, audited", async () => {
      const asked: any[] = [];
      const client = await connect(h, ALICE, generation, {
        elicit: (params) => {
          asked.push(params);
          return { action: 'accept', content: { name: `Ada via ${generation}`, check: true } };
        },
      });
      try {
        const result = await client.callTool('every__trigger_elicitation_request', {});
        expect(result.isError).toBeFalsy();
        expect(asked).toHaveLength(1);
        // Prefixed with who asks, so the user cannot take it for Toolgate's own request.
        expect(asked[0]).toMatchObject({ message: "MCP server 'every' (not Toolgate) asks: Please provide inputs for the following fields:", requestedSchema: { type: 'object' } });
        expect(JSON.stringify(result)).toContain(`Ada via ${generation}`);
      } finally {
        await client.close();
      }
      const [last] = (await auditOf('every__trigger_elicitation_request')).slice(-1);
      expect(last).toMatchObject({ event: 'succeeded', principal: 'alice', detail: 'relayed to the caller: elicitation 1: 1 answered' });
    });

    it("relays the upstream's URL-mode elicitation to a client that declared URL mode", async () => {
      const asked: any[] = [];
      const client = await connect(h, ALICE, generation, { elicit: (params) => (asked.push(params), { action: 'accept' }) });
      try {
        const result = await client.callTool('every__trigger_url_elicitation', { url: 'https://example.org/consent', message: 'Please sign in' });
        expect(result.isError).toBeFalsy();
        expect(asked).toEqual([expect.objectContaining({ mode: 'url', url: 'https://example.org/consent', message: "MCP server 'every' (not Toolgate) asks: Please sign in" })]);
      } finally {
        await client.close();
      }
    });

    it("refuses to the upstream a URL elicitation that could pass for Toolgate's approval page (phishing), and shows it to nobody", async () => {
      const asked: any[] = [];
      const client = await connect(h, ALICE, generation, { elicit: (params) => (asked.push(params), { action: 'accept' }) });
      const page = new URL(h.server.url);
      try {
        for (const lookalike of [`${page.origin}/approvals/0f6e`, `${page.protocol}//${page.host}/login`, 'https://toolgate.example.evil.test/%61pprovals/0f6e', 'https://evil.test/x/../APPROVALS/0f6e']) {
          const result = await client.callTool('every__trigger_url_elicitation', { url: lookalike, message: "Toolgate needs a human approval before 'deploy' runs. Type your token into the page." });
          expect(JSON.stringify(result)).toMatch(/the URL elicitation is not relayed: its url (is on Toolgate's own host|has the path of Toolgate's approval page)/);
        }
        expect(asked).toEqual([]);
      } finally {
        await client.close();
      }
    });

    it('relays the upstream sampling request to the calling client', async () => {
      const client = await connect(h, ALICE, generation, {
        sample: (params) => {
          expect(params.messages[0].content.text).toContain('haiku');
          return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `a sampled reply for ${generation}` } };
        },
      });
      try {
        const result = await client.callTool('every__trigger_sampling_request', { prompt: 'a haiku', maxTokens: 20 });
        expect(result.isError).toBeFalsy();
        expect(textOf(result)).toContain(`a sampled reply for ${generation}`);
      } finally {
        await client.close();
      }
      const [last] = (await auditOf('every__trigger_sampling_request')).slice(-1);
      expect(last?.detail).toBe('relayed to the caller: sampling 1: 1 answered');
    });

    it('refuses the upstream clearly when the calling client did not declare elicitation, and audits the refusal', async () => {
      const client = await connect(h, ALICE, generation);
      try {
        const result = await client.callTool('every__trigger_elicitation_request', {});
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/did not declare elicitation/);
      } finally {
        await client.close();
      }
      const [last] = (await auditOf('every__trigger_elicitation_request')).slice(-1);
      expect(last).toMatchObject({ event: 'failed', code: 'EXECUTION_FAILED' });
      expect(last?.detail).toMatch(/relayed to the caller: elicitation 1: 0 answered, 1 refused \(the calling client did not declare elicitation\)$/);
    });

    it('relays progress for the long-running tool when the client sent a progress token', async () => {
      const client = await connect(h, ALICE, generation);
      const got: any[] = [];
      try {
        const result = await client.callTool('every__trigger_long_running_operation', { duration: 1.2, steps: 4 }, { onprogress: (p) => got.push(p) });
        expect(result.isError).toBeFalsy();
      } finally {
        await client.close();
      }
      expect(got.length).toBeGreaterThanOrEqual(2);
      expect(got[0]).toMatchObject({ progress: 1, total: 4 });
      for (let i = 1; i < got.length; i += 1) expect(got[i].progress).toBeGreaterThan(got[i - 1].progress);
    });

    it('cancellation mid-call stops the upstream call, and the audit says the caller cancelled it', async () => {
      const client = await connect(h, ALICE, generation);
      const controller = new AbortController();
      try {
        const call = client.callTool('halts__wait', {}, { signal: controller.signal });
        await sleep(400);
        controller.abort();
        await expect(call).rejects.toThrow();
        let flag = '';
        for (let i = 0; i < 40 && flag !== 'cancelled'; i += 1) {
          await sleep(100);
          flag = upstreamText(await client.callTool('halts__was_cancelled', {}));
        }
        expect(flag).toBe('cancelled');
      } finally {
        await client.close();
      }
      const records = await auditOf('halts__wait');
      expect(records.at(-1)).toMatchObject({ event: 'denied', gate: 'execute', code: 'EXECUTION_FAILED', detail: 'cancelled by the caller' });
    });
  });


  /** A 2026-07-28 client that declares elicitation but fulfils nothing itself: the test plays each round. */
  async function manualModern(token: string) {
    const client = new ModernClient({ name: 'relay-manual', version: '1.0.0' }, {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      inputRequired: { autoFulfill: false },
    } as any);
    await connectMcp(h, token, client);
    const call = (params: Record<string, unknown>): Promise<any> => client.callTool(params as any, { allowInputRequired: true, timeout: 30_000 } as any);
    return { client, call };
  }

  describe('forged, tampered and foreign relay requestState (2026-07-28)', () => {
    it('resumes a suspended call only for its own principal, tool, arguments and round', async () => {
      const alice = await manualModern(ALICE);
      const bob = await manualModern(BOB);
      try {
        const first = await alice.call({ name: 'asks__ask', arguments: { message: 'who are you?' } });
        expect(first.resultType).toBe('input_required');
        const [key] = Object.keys(first.inputRequests);
        expect(key).toBe('toolgate/relay-1');
        expect(first.inputRequests[key!]).toMatchObject({ method: 'elicitation/create', params: { message: "MCP server 'asks' (not Toolgate) asks: who are you?" } });
        const state = first.requestState as string;
        expect(state.startsWith('relay~v1.')).toBe(true);
        const answer = { [key!]: { action: 'accept', content: { name: 'forged' } } };
        const refusal = async (who: typeof alice, params: Record<string, unknown>) =>
          who.call({ name: 'asks__ask', arguments: { message: 'who are you?' }, inputResponses: answer, ...params }).then(
            () => 'answered',
            (error: Error) => error.message,
          );
        // Another principal holding the state cannot answer (or learn the result of) the call.
        expect(await refusal(bob, { requestState: state })).toMatch(/requestState refused: it was issued to another principal/);
        // Tampered: several spellings.
        const [v, body, tag] = state.slice('relay~'.length).split('.') as [string, string, string];
        const flipped = (text: string) => `${text.slice(0, -2)}${text.at(-2) === 'A' ? 'B' : 'A'}${text.at(-1)}`;
        const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), p: 'bob' })).toString('base64url');
        for (const spelling of [`relay~${v}.${body}.${flipped(tag)}`, `relay~${v}.${forged}.${tag}`, `relay~${v}.${body}`, 'relay~', `relay~v2.${body}.${tag}`, `relay~${'A'.repeat(5000)}`]) {
          expect(await refusal(alice, { requestState: spelling })).toMatch(/requestState refused: /);
        }
        expect(await refusal(alice, { requestState: state, arguments: { message: 'something else' } })).toMatch(/arguments differ/);
        expect(
          await alice.call({ name: 'asks__sample', arguments: { message: 'who are you?' }, requestState: state }).then(
            () => 'answered',
            (e: Error) => e.message,
          ),
        ).toMatch(/requestState refused/);
        // The genuine retry resumes the call with Alice's answer.
        const done = await alice.call({ name: 'asks__ask', arguments: { message: 'who are you?' }, requestState: state, inputResponses: { [key!]: { action: 'accept', content: { name: 'genuine' } } } });
        expect(done.resultType ?? 'complete').toBe('complete');
        expect(JSON.stringify(done)).toContain('genuine');
        expect(JSON.stringify(done)).not.toContain('forged');
        // A replay of the used state finds nothing to resume.
        expect(await refusal(alice, { requestState: state })).toMatch(/no longer waiting/);
      } finally {
        await alice.client.close();
        await bob.client.close();
      }
    });
  });

  describe('answers to another call\'s relay id (2025 era)', () => {
    it('only the session that was asked can answer; forged answers from other principals and sessions are ignored', async () => {
      const bob = new LegacyClient({ name: 'bob', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      const bobTransport = await connectMcp(h, BOB, bob);
      const alice2 = new LegacyClient({ name: 'alice-2', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      const alice2Transport = await connectMcp(h, ALICE, alice2);
      const forge = (token: string, sessionId: string | undefined, id: unknown) =>
        sendExact(h.server.port, {
          method: 'POST',
          path: '/mcp',
          headers: mcpPostHeaders(h, token, '2025-11-25', sessionId ? [['mcp-session-id', sessionId]] : []),
          body: JSON.stringify({ jsonrpc: '2.0', id, result: { action: 'accept', content: { name: 'forged' } } }),
        });
      const forgedStatuses: number[] = [];
      // Alice's handler sees the relay id, lets the forgers try it first, then answers itself.
      const alice = new LegacyClient({ name: 'alice', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      alice.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
        const id = extra.requestId;
        expect(String(id)).toMatch(/^toolgate-elicit-[A-Za-z0-9_-]{22}$/);
        for (const [token, session, spelling] of [
          [BOB, bobTransport.sessionId, id],
          [ALICE, alice2Transport.sessionId, id],
          [ALICE, undefined, id],
          [ALICE, alice2Transport.sessionId, String(id).toUpperCase()],
          [ALICE, alice2Transport.sessionId, 'toolgate-elicit-'],
          [ALICE, alice2Transport.sessionId, 0],
        ] as [string, string | undefined, unknown][]) {
          forgedStatuses.push((await forge(token, session, spelling)).status);
        }
        return { action: 'accept', content: { name: 'genuine' } };
      });
      await connectMcp(h, ALICE, alice);
      try {
        const result = await alice.callTool({ name: 'asks__ask', arguments: { message: 'who?' } }, undefined, { timeout: 30_000 });
        expect(JSON.stringify(result)).toContain('genuine');
        expect(JSON.stringify(result)).not.toContain('forged');
        // Every forgery gets an answer (none stalls or crashes the server) and none lands.
        expect(forgedStatuses).toHaveLength(6);
        for (const status of forgedStatuses) expect([202, 400, 404]).toContain(status);
      } finally {
        await Promise.all([alice.close(), alice2.close(), bob.close()]);
      }
    });
  });

  describe('progress without a token', () => {
    it('sends no progress notification when the client sent no progress token, and does when it did', async () => {
      const call = (meta: object) =>
        sendExact(h.server.port, {
          method: 'POST',
          path: '/mcp',
          headers: mcpPostHeaders(h, ALICE, '2025-06-18'),
          body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'every__trigger_long_running_operation', arguments: { duration: 0.6, steps: 3 }, _meta: meta } }),
        });
      const without = await call({});
      // Without a token nothing can be pushed, so the answer may be one JSON body (ADR 0055) rather than an event stream.
      const withoutText = typeof without.body === 'string' ? without.body : JSON.stringify(without.body);
      expect(withoutText).toContain('Long running operation completed');
      expect(withoutText).not.toContain('notifications/progress');
      const withToken = await call({ progressToken: 'tok-1' });
      expect(String(withToken.body)).toContain('"method":"notifications/progress"');
      expect(String(withToken.body)).toContain('"progressToken":"tok-1"');
    });
  });

  describe('progress flood', () => {
    it('an upstream flooding progress reaches the client at about 10 a second, the last always, and the server keeps answering', async () => {
      const client = await connect(h, ALICE, 'legacy (sdk 1.x, 2025-era)');
      const got: any[] = [];
      let done = false;
      const started = performance.now();
      const call = client.callTool('asks__flood', { count: 20_000 }, { onprogress: (p) => got.push(p) }).finally(() => (done = true));
      const health = await healthTimes(h, () => done);
      const result = await call;
      const seconds = (performance.now() - started) / 1000;
      await client.close();
      expect(upstreamText(result)).toBe('sent 20000');
      expect(got.length).toBeLessThanOrEqual(Math.ceil(seconds * 10) + 3);
      // The last update the gateway got is relayed (the gateway spec holds that); the upstream SDK
      // itself drops the few that arrive in the same turn as the result.
      expect(got.at(-1)?.progress).toBeGreaterThan(19_000);
      // eslint-disable-next-line no-control-regex -- the control characters are what must not arrive
      for (const p of got) expect(p.message).not.toMatch(/[\u0000-\u001f]/);
      expect(Math.max(...health)).toBeLessThan(100);
      const [last] = (await auditOf('asks__flood')).slice(-1);
      expect(last?.detail).toMatch(/^relayed to the caller: progress \d+ \(\d+ dropped\)$/);
    });
  });

  describe('requests outside any call', () => {
    it('refuses an elicitation the upstream sends after the call ended; the client is never asked', async () => {
      let asked = 0;
      const client = await connect(h, ALICE, 'legacy (sdk 1.x, 2025-era)', { elicit: () => ((asked += 1), { action: 'accept', content: { name: 'late' } }) });
      try {
        await client.callTool('asks__ask_later', {});
        await sleep(400);
        expect(upstreamText(await client.callTool('asks__late_outcome', {}))).toMatch(/^refused: .*no tool call is in flight/);
        expect(asked).toBe(0);
      } finally {
        await client.close();
      }
    });
  });

  describe('elicitation modes the client did not declare', () => {
    it('refuses a URL-mode elicitation to a 2025-era client that declared form mode only', async () => {
      let asked = 0;
      const client = new LegacyClient({ name: 'form-only', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      client.setRequestHandler(ElicitRequestSchema, async () => ((asked += 1), { action: 'accept' }));
      await connectMcp(h, ALICE, client);
      try {
        const result = await client.callTool({ name: 'every__trigger_url_elicitation', arguments: { url: 'https://example.org/x' } });
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result)).toMatch(/did not declare elicitation in url mode/);
        expect(asked).toBe(0);
      } finally {
        await client.close();
      }
    });
  });

  describe('oversized relay requests', () => {
    it.each(GENERATIONS)('%s: refuses oversized params before the client sees them', async (generation) => {
      let asked = 0;
      const client = await connect(h, ALICE, generation, { elicit: () => ((asked += 1), { action: 'decline' }) });
      try {
        const result = await client.callTool('asks__ask_big', { bytes: 300_000 });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/exceed the relay's limit of 65536 bytes/);
        expect(asked).toBe(0);
      } finally {
        await client.close();
      }
    });
  });
});
