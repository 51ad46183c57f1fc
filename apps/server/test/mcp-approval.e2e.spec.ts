import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcp, healthTimes, startHarness, type Harness } from './e2e-harness.js';

// Results are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

const CLI = resolve(__dirname, '../../cli/bin/toolgate.mjs');
const ECHO_SERVER = resolve(__dirname, '../../../libs/adapters/mcp-client/test/fixtures/echo-server.mjs');
const ALICE = 'alice-token-mcp-approval-0123456789';
const CAROL = 'carol-token-mcp-approval-0123456789';
const PETE = 'pete-token-mcp-approval-0123456789';
/** The upstream MCP tool: unverified, so high risk, so every call needs an approval. */
const TOOL = 'files__echo';

/** What the test's human does when the client shows the approval page: the URL's last segment is the id. */
type Human = (approvalId: string, url: string) => Promise<'accept' | 'decline' | 'cancel'>;
const idOf = (url: string) => decodeURIComponent(url.slice(url.lastIndexOf('/') + 1));

interface Agent {
  call(args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<any>;
  readonly shown: string[];
  close(): Promise<void>;
}

describe('approvals that reach the human over MCP, end to end (ADR 0050)', () => {
  let h: Harness;
  const agents: Agent[] = [];
  beforeAll(async () => {
    h = await startHarness(
      { TOOLGATE_MCP_APPROVAL_WAIT_MS: '4000' },
      {
        mcpServers: { servers: [{ name: 'files', command: process.execPath, args: [ECHO_SERVER], env: {}, tier: 'unisolated' }] },
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'carol', token: CAROL, tenant: 'acme', roles: ['approver', 'operator'] },
            { id: 'pete', token: PETE, tenant: 'acme', roles: ['planner'] },
          ],
          roles: { worker: ['*'], planner: ['calculator'] },
          tenants: { acme: { tools: ['*'], selfApproval: false, grants: [{ type: 'exec', scope: 'mcp:files' }] } },
        },
      },
    );
  });
  afterAll(async () => {
    for (const agent of agents.splice(0)) await agent.close().catch(() => undefined);
    await h?.stop();
  });

  const mcpUrl = () => new URL(`${h.server.url}/mcp`);
  /** The approver decides through REST, as a human on the approval page does. */
  const decide = (id: string, approve: boolean, token = CAROL) => h.call(`/api/v1/approvals/${encodeURIComponent(id)}/decide`, { method: 'POST', token, json: { approve } });
  const status = async (id: string) => (await h.call(`/api/v1/approvals/${encodeURIComponent(id)}`, { token: CAROL })).body.status;
  /** Alice's calls of the tool that ran, by the audit trail. */
  const succeeded = async () => {
    const audit = await h.call('/api/v1/audit?limit=500', { token: CAROL });
    return (audit.body as any[]).filter((r) => r.event === 'succeeded' && r.tool === TOOL && r.principal === 'alice').length;
  };

  async function modern(token: string, human?: Human): Promise<Agent> {
    const shown: string[] = [];
    const client = new ModernClient({ name: 'e2e-modern', version: '1' }, { capabilities: human ? { elicitation: { url: {} } } : {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    if (human) {
      client.setRequestHandler('elicitation/create', async (request) => {
        const url = String((request.params as any).url);
        shown.push(url);
        return { action: await human(idOf(url), url) };
      });
    }
    await connectMcp(h, token, client);
    const agent: Agent = {
      shown,
      call: (args, meta) => client.callTool({ name: TOOL, arguments: args, ...(meta ? { _meta: meta } : {}) }, { timeout: 30_000 }),
      close: () => client.close(),
    };
    agents.push(agent);
    return agent;
  }

  async function legacy(token: string, human?: Human): Promise<Agent> {
    const shown: string[] = [];
    const client = new LegacyClient({ name: 'e2e-legacy', version: '1' }, { capabilities: human ? { elicitation: { url: {} } } : {} });
    if (human) {
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        const url = String((request.params as any).url);
        shown.push(url);
        return { action: await human(idOf(url), url) };
      });
    }
    await connectMcp(h, token, client);
    const agent: Agent = {
      shown,
      call: (args, meta) => client.callTool({ name: TOOL, arguments: args, ...(meta ? { _meta: meta } : {}) }, undefined, { timeout: 30_000 }),
      close: () => client.close(),
    };
    agents.push(agent);
    return agent;
  }

  /** `toolgate mcp` launched as a desktop client launches it, the desktop client declaring URL elicitation (2025-11-25). */
  async function bridged(token: string, human?: Human): Promise<Agent & { stderr: () => string }> {
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--url', h.server.url], env: { PATH: process.env['PATH'] ?? '', TOOLGATE_TOKEN: token }, stderr: 'pipe' });
    const lines: string[] = [];
    (transport.stderr as Readable).on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
    const shown: string[] = [];
    const client = new ModernClient({ name: 'e2e-desktop', version: '1' }, { capabilities: human ? { elicitation: { url: {} } } : {} });
    if (human) {
      client.setRequestHandler('elicitation/create', async (request) => {
        const url = String((request.params as any).url);
        shown.push(url);
        return { action: await human(idOf(url), url) };
      });
    }
    await client.connect(transport);
    const agent = {
      shown,
      stderr: () => lines.join(''),
      call: (args: Record<string, unknown>, meta?: Record<string, unknown>) => client.callTool({ name: TOOL, arguments: args, ...(meta ? { _meta: meta } : {}) }, { timeout: 30_000 }),
      close: () => client.close(),
    };
    agents.push(agent);
    return agent;
  }

  /** A human who opens the page, and an approver (carol, not the caller) who approves it soon after. */
  const approvingHuman: Human = async (id) => {
    setTimeout(() => void decide(id, true), 300);
    return 'accept';
  };

  describe.each([
    ['a 2026-07-28 client over HTTP (input_required)', (human: Human) => modern(ALICE, human)],
    ['a 2025-11-25 client over HTTP (URL elicitation on the call stream)', (human: Human) => legacy(ALICE, human)],
    ['a 2025-11-25 desktop client through the stdio bridge', (human: Human) => bridged(ALICE, human)],
  ])('%s', (_name, open) => {
    it('full round trip: call → approval page → approver decides through REST → output, one approval consumed once', async () => {
      const text = `round trip ${_name}`;
      const before = await succeeded();
      const agent = await open(approvingHuman);
      const result = await agent.call({ text });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain(text);
      expect(agent.shown).toHaveLength(1);
      expect(agent.shown[0]).toMatch(new RegExp(`^${h.server.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/approvals/[^/]+$`));
      const id = idOf(agent.shown[0]!);
      expect(await status(id)).toBe('consumed');
      expect(await succeeded()).toBe(before + 1);
    });

    it('denial by the approver: the APPROVAL_DENIED tool error, nothing run', async () => {
      const before = await succeeded();
      const agent = await open(async (id) => {
        setTimeout(() => void decide(id, false), 300);
        return 'accept';
      });
      const result = await agent.call({ text: `denied ${_name}` });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ denial: { code: 'APPROVAL_DENIED' } });
      expect(await succeeded()).toBe(before);
    });

    it('decline: a tool error at once naming the pending request and how to retry', async () => {
      const agent = await open(async () => 'decline');
      const result = await agent.call({ text: `declined ${_name}` });
      expect(result.isError).toBe(true);
      const id = idOf(agent.shown[0]!);
      expect(result.content[0].text).toMatch(/declined to open the approval page/);
      expect(result.content[0].text).toContain(`"toolgate/approvalId": "${id}"`);
      expect(await status(id)).toBe('pending');
    });
  });

  it('a client without elicitation gets the id, digest and URL, and the approved retry runs by _meta, once', async () => {
    const agent = await legacy(ALICE);
    const first = await agent.call({ text: 'plain retry' });
    expect(first.isError).toBe(true);
    const denial = first.structuredContent.denial;
    expect(denial).toMatchObject({ gate: 'approval', code: 'APPROVAL_REQUIRED' });
    const { approvalId, payloadDigest, approvalUrl } = denial.data;
    expect(payloadDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(approvalUrl).toBe(`${h.server.url}/approvals/${encodeURIComponent(approvalId)}`);
    for (const part of [approvalId, payloadDigest, approvalUrl]) expect(first.content[0].text).toContain(part);
    expect(first.content[0].text).not.toMatch(/approvals\.request/);
    expect((await decide(approvalId, true)).status).toBe(200);
    const ok = await agent.call({ text: 'plain retry' }, { 'toolgate/approvalId': approvalId });
    expect(ok.isError).toBeFalsy();
    const replay = await agent.call({ text: 'plain retry' }, { 'toolgate/approvalId': approvalId });
    expect(replay.isError).toBe(true);
    expect(replay.content[0].text).toMatch(/already used/);
  });

  it('a desktop client without elicitation, through the bridge: the retry tool error, then the approved retry by _meta runs', async () => {
    const agent = await bridged(ALICE);
    const first = await agent.call({ text: 'bridged retry' });
    expect(first.isError).toBe(true);
    const { approvalId, approvalUrl } = first.structuredContent.denial.data;
    expect(approvalUrl).toBe(`${h.server.url}/approvals/${encodeURIComponent(approvalId)}`);
    expect(agent.shown).toHaveLength(0);
    await decide(approvalId, true);
    const ok = await agent.call({ text: 'bridged retry' }, { 'toolgate/approvalId': approvalId });
    expect(ok.isError).toBeFalsy();
    expect(JSON.stringify(ok.content)).toContain('bridged retry');
    expect(await status(approvalId)).toBe('consumed');
    expect(agent.stderr()).not.toContain(ALICE);
  });

  it('a 2026-07-28 client: the bound reached, then the approved retry runs by digest alone', async () => {
    const agent = await modern(ALICE, async () => 'accept');
    const started = Date.now();
    const held = await agent.call({ text: 'bound' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(3900);
    expect(held.isError).toBe(true);
    expect(held.content[0].text).toMatch(/No approver decided within 4 s/);
    const id = held.structuredContent.denial.data.approvalId;
    await decide(id, true);
    const retry = await agent.call({ text: 'bound' });
    expect(retry.isError).toBeFalsy();
    expect(agent.shown).toHaveLength(1);
    expect(await status(id)).toBe('consumed');
  });

  it('a planner without the tool is refused, and no approval is asked for', async () => {
    const pending = (await h.call('/api/v1/approvals?status=pending&limit=500', { token: CAROL })).body;
    const agent = await modern(PETE, async () => 'accept');
    const result = await agent.call({ text: 'planner' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent.denial.gate).toMatch(/^(allow|lookup)$/);
    expect(agent.shown).toHaveLength(0);
    expect((await h.call('/api/v1/approvals?status=pending&limit=500', { token: CAROL })).body).toHaveLength((pending as any[]).length);
  });

  it('the requester cannot decide its own request through REST while its call is held, and nothing runs', async () => {
    const before = await succeeded();
    let refused = 0;
    const agent = await modern(ALICE, async (id) => {
      refused = (await decide(id, true, ALICE)).status;
      return 'accept';
    });
    const result = await agent.call({ text: 'self' });
    expect(refused).toBe(403);
    expect(result.isError).toBe(true);
    expect(await succeeded()).toBe(before);
  });

  it('a forged Mcp-Session-Id is answered 404 with a clear message', async () => {
    const res = await fetch(mcpUrl(), {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': 'v1.e30.AAAA' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.message).toMatch(/^Mcp-Session-Id refused: .*initialize a new session$/);
  });

  it('many held calls: eight are held, the ninth answers at once, and /healthz answers within 100 ms throughout', async () => {
    const agent = await modern(ALICE, async () => 'accept');
    let settled = false;
    const held = Promise.all(Array.from({ length: 8 }, (_, i) => agent.call({ text: `held ${i}` }))).finally(() => {
      settled = true;
    });
    await expect.poll(() => agent.shown.length, { timeout: 10_000 }).toBe(8);
    const probes = healthTimes(h, () => settled, { intervalMs: 25, minSamples: 10 });
    const started = Date.now();
    const ninth = await agent.call({ text: 'held 8' });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(ninth.isError).toBe(true);
    for (const result of await held) expect(result.isError).toBe(true);
    const times = await probes;
    expect(Math.max(...times)).toBeLessThan(100);
  });
});
