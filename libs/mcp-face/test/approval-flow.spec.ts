import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalRecord, Principal, ToolDefinition } from '@toolgate/contracts';
import type { Gateway } from '@toolgate/gateway';
import { RecordingAuditSink, timeLessCpuWait } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMcpFace, MAX_HELD_PER_PRINCIPAL, SignedTokens, type McpFace } from '../src/index.js';
import { MCP_URL as URL_, mcpPost } from './mcp-requests.js';
import { realGateway } from './real-gateway.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker'] };
const worker2: Principal = { id: 'w2', tenant: 'acme', roles: ['worker'] };
const planner: Principal = { id: 'p', tenant: 'acme', roles: ['planner'] };
const approver: Principal = { id: 'boss', tenant: 'acme', roles: ['approver'] };
/** Holds the approver role and calls tools too: it may still not decide its own request. */
const selfish: Principal = { id: 'selfish', tenant: 'acme', roles: ['worker', 'approver'] };
const outsider: Principal = { id: 'w', tenant: 'globex', roles: ['worker'] };
const KEY = Buffer.alloc(32, 7);
const ARGS = { expression: '2+3' };

const riskyCalc: ToolDefinition = { ...calculatorTool, manifest: { ...calculatorTool.manifest, name: 'risky_calc', risk: 'high' } };

function gatewayWith(audit: RecordingAuditSink): Gateway {
  return realGateway({
    tools: [calculatorTool, riskyCalc],
    principals: [worker, worker2, planner, approver, selfish, outsider],
    roles: { worker: ['*'], planner: ['calculator'], approver: [] },
    audit,
    tmpPrefix: 'toolgate-mcp-approval-',
  });
}

/** What the test's "human" does when the client shows the approval page. */
type Human = (approvalId: string) => Promise<'accept' | 'decline' | 'cancel' | 'fail'>;

interface CallOutcome {
  readonly isError?: boolean;
  readonly content: { type: string; text: string }[];
  readonly structuredContent?: Record<string, unknown>;
}

interface TestClient {
  call(args: Record<string, unknown>, options?: { meta?: Record<string, unknown>; signal?: AbortSignal; tool?: string }): Promise<CallOutcome>;
  /** URL elicitations the client was shown. */
  readonly shown: { url: string; elicitationId?: string; message: string }[];
  /** `notifications/elicitation/complete` the client received. */
  readonly completed: string[];
  close(): Promise<void>;
}

type Kind = 'modern-url' | 'legacy-url' | 'legacy-plain' | 'modern-plain';

/** The approval id in a shown URL (`…/approvals/<id>`). */
const idOf = (url: string) => decodeURIComponent(url.slice(url.lastIndexOf('/') + 1));

async function connect(face: McpFace, principal: Principal, kind: Kind, human?: Human): Promise<TestClient> {
  const fetch = (input: string | URL | Request, init?: RequestInit) => face.handle(new Request(input, init), principal);
  const shown: TestClient['shown'] = [];
  const completed: string[] = [];
  const answer = async (params: { url?: string; elicitationId?: string; message: string }) => {
    shown.push({ url: String(params.url), message: params.message, ...(params.elicitationId ? { elicitationId: params.elicitationId } : {}) });
    const action = human ? await human(idOf(String(params.url))) : 'cancel';
    // A client that cannot show the page answers with a JSON-RPC error.
    if (action === 'fail') throw new Error('cannot open a browser here');
    return { action };
  };
  if (kind === 'legacy-url' || kind === 'legacy-plain') {
    const client = new LegacyClient({ name: 'legacy', version: '1' }, { capabilities: kind === 'legacy-url' ? { elicitation: { url: {} } } : {} });
    if (kind === 'legacy-url') {
      client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params as never));
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => void completed.push(n.params.elicitationId));
    }
    await client.connect(new LegacyTransport(new URL(URL_), { fetch }));
    return {
      shown,
      completed,
      call: (args, options = {}) =>
        client.callTool({ name: options.tool ?? 'risky_calc', arguments: args, ...(options.meta ? { _meta: options.meta } : {}) }, undefined, {
          ...(options.signal ? { signal: options.signal } : {}),
          timeout: 30_000,
        }) as Promise<CallOutcome>,
      close: () => client.close(),
    };
  }
  const client = new ModernClient(
    { name: 'modern', version: '1' },
    { capabilities: kind === 'modern-url' ? { elicitation: { url: {} } } : {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  if (kind === 'modern-url') client.setRequestHandler('elicitation/create', (request) => answer(request.params as never));
  await client.connect(new ModernTransport(new URL(URL_), { fetch }));
  return {
    shown,
    completed,
    call: (args, options = {}) =>
      client.callTool({ name: options.tool ?? 'risky_calc', arguments: args, ...(options.meta ? { _meta: options.meta } : {}) }, {
        ...(options.signal ? { signal: options.signal } : {}),
        timeout: 30_000,
      }) as Promise<CallOutcome>,
    close: () => client.close(),
  };
}

describe('approvals over MCP (ADR 0050)', () => {
  let audit: RecordingAuditSink;
  let gateway: Gateway;
  let face: McpFace;
  const clients: TestClient[] = [];
  const open = async (principal: Principal, kind: Kind, human?: Human) => {
    const client = await connect(face, principal, kind, human);
    clients.push(client);
    return client;
  };
  const makeFace = (approvalWaitMs: number) =>
    createMcpFace({ gateway, version: 't', maxBodyBytes: 1 << 20, approvalUrl: (id) => `https://toolgate.example/approvals/${encodeURIComponent(id)}`, approvalWaitMs, stateKey: KEY });
  beforeEach(() => {
    audit = new RecordingAuditSink();
    gateway = gatewayWith(audit);
    face = makeFace(4000);
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => undefined);
    await face.close();
  });

  const approve = (id: string, by: Principal = approver) => gateway.decideApproval(by, id, { approve: true });
  const deny = (id: string) => gateway.decideApproval(approver, id, { approve: false, reason: 'not today' });
  const record = (id: string) => gateway.getApproval(worker, id) as Promise<ApprovalRecord>;
  const events = () => audit.records.map((r) => r.event);
  const runs = () => audit.records.filter((r) => r.event === 'succeeded').length;

  describe.each(['modern-url', 'legacy-url'] as const)('a %s client, held while a human decides', (kind) => {
    it('round trip: call → approval page → an approver approves → the output, consuming the approval once', async () => {
      const client = await open(worker, kind, async (id) => {
        // The human opens the page and an approver (not the caller) decides, then the client answers.
        setTimeout(() => void approve(id), 300);
        return 'accept';
      });
      const result = await client.call(ARGS);
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ result: 5 });
      expect(client.shown).toHaveLength(1);
      const id = idOf(client.shown[0]!.url);
      expect(client.shown[0]!.url).toBe(`https://toolgate.example/approvals/${id}`);
      expect(client.shown[0]!.message).toMatch(/approver other than the caller decides/);
      expect((await record(id)).status).toBe('consumed');
      expect(events().filter((e) => e === 'approval_requested')).toHaveLength(1);
      expect(runs()).toBe(1);
      if (kind === 'legacy-url') {
        expect(client.shown[0]!.elicitationId).toBe(id);
        expect(client.completed).toEqual([id]);
      }
      // One approval, one call: the same payload again needs a new approval.
      const again = await open(worker, kind, async () => 'decline');
      const second = await again.call(ARGS);
      expect(second.isError).toBe(true);
      expect(idOf(again.shown[0]!.url)).not.toBe(id);
      expect(runs()).toBe(1);
    });

    it('a decline ends the call at once with a tool error, leaving the request pending and saying how to retry', async () => {
      const client = await open(worker, kind, async () => 'decline');
      const { value: result, ms } = await timeLessCpuWait(() => client.call(ARGS));
      expect(ms).toBeLessThan(3000);
      expect(result.isError).toBe(true);
      const id = idOf(client.shown[0]!.url);
      expect(result.content[0]!.text).toMatch(/declined to open the approval page/);
      expect(result.content[0]!.text).toContain(id);
      expect(result.content[0]!.text).toContain(`"toolgate/approvalId": "${id}"`);
      expect((await record(id)).status).toBe('pending');
      expect(runs()).toBe(0);
    });

    it('a dismissed page (cancel) ends the call at once, saying so, with the request pending', async () => {
      const client = await open(worker, kind, async () => 'cancel');
      const { value: result, ms } = await timeLessCpuWait(() => client.call(ARGS));
      expect(ms).toBeLessThan(3000);
      expect(result.content[0]!.text).toMatch(/The approval page was dismissed/);
      expect((await record(idOf(client.shown[0]!.url))).status).toBe('pending');
    });

    it("an approver's denial is the APPROVAL_DENIED tool error, and nothing runs", async () => {
      const client = await open(worker, kind, async (id) => {
        setTimeout(() => void deny(id), 300);
        return 'accept';
      });
      const result = await client.call(ARGS);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ ok: false, denial: { code: 'APPROVAL_DENIED', gate: 'approval' } });
      expect(result.content[0]!.text).toMatch(/denied by boss: not today/);
      expect(runs()).toBe(0);
    });

    it('accept with no decision: held to the bound, then the id, digest, URL and retry hint; nothing runs', async () => {
      await face.close();
      face = makeFace(700);
      const client = await open(worker, kind, async () => 'accept');
      const started = Date.now();
      const result = await client.call(ARGS);
      expect(Date.now() - started).toBeGreaterThanOrEqual(650);
      expect(result.isError).toBe(true);
      const id = idOf(client.shown[0]!.url);
      const denial = (result.structuredContent as { denial: { code: string; data: Record<string, string> } }).denial;
      expect(denial.code).toBe('APPROVAL_REQUIRED');
      expect(denial.data).toMatchObject({ approvalId: id, approvalUrl: `https://toolgate.example/approvals/${id}` });
      expect(denial.data['payloadDigest']).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(result.content[0]!.text).toMatch(/No approver decided within 1 s/);
      expect(result.content[0]!.text).not.toMatch(/approvals\.request/);
      expect(runs()).toBe(0);
      // Once approved, the retry by digest alone runs (no _meta, no elicitation needed).
      await approve(id);
      const retry = await client.call(ARGS);
      expect(retry.structuredContent).toEqual({ result: 5 });
      expect(client.shown).toHaveLength(1);
      expect((await record(id)).status).toBe('consumed');
    });

    it('a cancelled held call ends and does not run, even when approved afterwards', async () => {
      let approvalId = '';
      const client = await open(worker, kind, async (id) => {
        approvalId = id;
        return 'accept';
      });
      const controller = new AbortController();
      const call = client.call(ARGS, { signal: controller.signal }).catch((e: unknown) => e);
      await expect.poll(() => approvalId).not.toBe('');
      await new Promise((resolve) => setTimeout(resolve, 300));
      controller.abort();
      await call;
      await approve(approvalId);
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect(runs()).toBe(0);
      expect((await record(approvalId)).status).toBe('approved');
    });
  });

  describe.each(['legacy-plain', 'modern-plain'] as const)('a %s client without URL elicitation', (kind) => {
    it('gets the approval id, digest and page in the tool error, and the approved retry runs by _meta or by digest', async () => {
      const client = await open(worker, kind);
      const first = await client.call(ARGS);
      expect(first.isError).toBe(true);
      const denial = (first.structuredContent as { denial: { code: string; hint: string; data: Record<string, string> } }).denial;
      expect(denial.code).toBe('APPROVAL_REQUIRED');
      const id = denial.data['approvalId']!;
      const digest = denial.data['payloadDigest']!;
      expect(first.content[0]!.text).toContain(id);
      expect(first.content[0]!.text).toContain(digest);
      expect(first.content[0]!.text).toContain(`https://toolgate.example/approvals/${id}`);
      expect(first.content[0]!.text).toMatch(/call this tool again with the same arguments/);
      // The gateway's hint names a tRPC call an MCP client cannot make; over MCP it is replaced.
      expect(first.content[0]!.text).not.toMatch(/approvals\.request/);
      expect(denial.hint).toContain(`_meta {"toolgate/approvalId": "${id}"}`);
      // A second refused call finds the same pending request instead of queueing another.
      const second = await client.call(ARGS);
      expect((second.structuredContent as { denial: { data: Record<string, string> } }).denial.data['approvalId']).toBe(id);
      expect(events().filter((e) => e === 'approval_requested')).toHaveLength(1);
      await approve(id);
      const byMeta = await client.call(ARGS, { meta: { 'toolgate/approvalId': id } });
      expect(byMeta.structuredContent).toEqual({ result: 5 });
      // Consumed: the same id again is refused by the gateway, which names why.
      const replay = await client.call(ARGS, { meta: { 'toolgate/approvalId': id } });
      expect(replay.isError).toBe(true);
      expect(replay.content[0]!.text).toMatch(/already used/);
      expect(replay.content[0]!.text).toMatch(/Call this tool again with the same arguments and without _meta "toolgate\/approvalId"/);
      // By digest: a new request, approved, and a plain retry of the same payload runs.
      const third = await client.call(ARGS);
      const next = (third.structuredContent as { denial: { data: Record<string, string> } }).denial.data['approvalId']!;
      expect(next).not.toBe(id);
      await approve(next);
      expect((await client.call(ARGS)).structuredContent).toEqual({ result: 5 });
      expect(runs()).toBe(2);
    });
  });

  it('a 2025-11-25 client that cannot show the page (its answer is an error) ends the hold at once; nothing runs', async () => {
    const client = await open(worker, 'legacy-url', async () => 'fail');
    const { value: result, ms } = await timeLessCpuWait(() => client.call(ARGS));
    expect(ms).toBeLessThan(3000);
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/The client could not show the approval page/);
    expect(runs()).toBe(0);
  });

  it('a 2025-06-18 client (elicitation meant form mode then) gets the retry tool error, never an elicitation', async () => {
    const post = (body: object, session?: string) =>
      face.handle(
        mcpPost(body, session ? { 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': session } : {}),
        worker,
      );
    /** Every JSON-RPC message of an answer, whether it came as JSON or as an SSE stream. */
    const messages = async (response: Response) => {
      const text = await response.text();
      return text.trimStart().startsWith('{') ? [JSON.parse(text)] : text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    };
    const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'old', version: '1' } } });
    const session = init.headers.get('mcp-session-id') ?? '';
    expect((await messages(init))[0].result.protocolVersion).toBe('2025-06-18');
    const answer = await messages(await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'risky_calc', arguments: ARGS } }, session));
    expect(answer.map((m) => m.method)).not.toContain('elicitation/create');
    const result = answer.find((m) => m.id === 1).result;
    expect(result.isError).toBe(true);
    expect(result.structuredContent.denial).toMatchObject({ code: 'APPROVAL_REQUIRED', data: { approvalId: expect.any(String), payloadDigest: expect.stringMatching(/^sha256:/) } });
    expect(result.content[0].text).toMatch(/call this tool again with the same arguments/);
  });

  it('a planner without the tool is refused at the allow gate; no approval is asked for', async () => {
    const client = await open(planner, 'modern-url', async () => 'accept');
    const result = await client.call(ARGS);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ denial: { code: 'TOOL_NOT_ALLOWED', gate: 'allow' } });
    expect(client.shown).toHaveLength(0);
    expect(events()).not.toContain('approval_requested');
  });

  it('a low-risk tool runs without any approval exchange', async () => {
    const client = await open(worker, 'modern-url', async () => 'accept');
    expect((await client.call(ARGS, { tool: 'calculator' })).structuredContent).toEqual({ result: 5 });
    expect(client.shown).toHaveLength(0);
  });

  describe('a hostile _meta approval id', () => {
    it.each([
      ['a number', 42],
      ['an empty string', ''],
      ['an object', { id: 'x' }],
      ['an array', ['x']],
      ['129 characters', 'a'.repeat(129)],
      ['null', null],
    ])('%s is a clear InvalidParams, and nothing is asked for or run', async (_name, value) => {
      const client = await open(worker, 'legacy-plain');
      const error = await client.call(ARGS, { meta: { 'toolgate/approvalId': value } }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: -32602 });
      expect(String((error as Error).message)).toMatch(/toolgate\/approvalId.*must be a non-empty string of at most 128 characters/);
      expect(events()).toEqual([]);
    });

    it("naming another principal's, another tenant's or an unknown approval gets the gateway's refusal, never a new request or a hold", async () => {
      const other = await open(worker2, 'legacy-plain');
      const theirs = (await other.call(ARGS)).structuredContent as { denial: { data: Record<string, string> } };
      const theirId = theirs.denial.data['approvalId']!;
      await approve(theirId);
      const abroad = await open(outsider, 'legacy-plain');
      const foreign = ((await abroad.call(ARGS)).structuredContent as { denial: { data: Record<string, string> } }).denial.data['approvalId']!;
      await gateway.decideApproval({ id: 'boss', tenant: 'globex', roles: ['approver'] }, foreign, { approve: true }).catch(() => undefined);
      const before = events().filter((e) => e === 'approval_requested').length;
      const client = await open(worker, 'modern-url', async () => 'accept');
      for (const [id, pattern] of [
        [theirId, /granted to another principal/],
        [foreign, /There is no approval .* in your tenant/],
        ['no-such-approval', /There is no approval 'no-such-approval' in your tenant/],
      ] as const) {
        const result = await client.call(ARGS, { meta: { 'toolgate/approvalId': id } });
        expect(result.isError).toBe(true);
        expect(result.content[0]!.text).toMatch(pattern);
        // Never the tRPC call an MCP client cannot make.
        expect(result.content[0]!.text).not.toMatch(/approvals\.request/);
      }
      expect(client.shown).toHaveLength(0);
      expect(events().filter((e) => e === 'approval_requested').length).toBe(before);
      expect(runs()).toBe(0);
    });
  });

  describe('self-approval through MCP', () => {
    it('an accept approves nothing, and the requester cannot decide its own request even holding the approver role', async () => {
      await face.close();
      face = makeFace(600);
      let asked = '';
      const client = await open(selfish, 'modern-url', async (id) => {
        asked = id;
        return 'accept';
      });
      const result = await client.call(ARGS);
      expect(result.isError).toBe(true);
      await expect(gateway.decideApproval(selfish, asked, { approve: true })).rejects.toThrow(/requested approval .* yourself/);
      expect((await gateway.getApproval(selfish, asked))?.status).toBe('pending');
      expect(runs()).toBe(0);
    });
  });

  describe('many held calls (resource exhaustion)', () => {
    it(`holds at most ${MAX_HELD_PER_PRINCIPAL} calls of a principal; the next answers at once, and other principals are served meanwhile`, async () => {
      await face.close();
      face = makeFace(2500);
      const client = await open(worker, 'modern-url', async () => 'accept');
      // Distinct payloads: each call has its own approval request.
      const held = Array.from({ length: MAX_HELD_PER_PRINCIPAL }, (_, i) => client.call({ expression: `${i}+1` }));
      await expect.poll(() => client.shown.length, { timeout: 5000 }).toBe(MAX_HELD_PER_PRINCIPAL);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { value: extra, ms: extraMs } = await timeLessCpuWait(() => client.call({ expression: '100+1' }));
      expect(extraMs).toBeLessThan(1500);
      expect(extra.isError).toBe(true);
      expect(extra.content[0]!.text).toMatch(/No approver decided within 3 s|is pending; an approver decides it at/);
      // Another principal's plain call is answered while eight calls are held.
      const { ms: otherMs } = await timeLessCpuWait(async () => {
        const other = await open(worker2, 'modern-plain');
        expect((await other.call(ARGS, { tool: 'calculator' })).structuredContent).toEqual({ result: 5 });
      });
      expect(otherMs).toBeLessThan(1500);
      for (const result of await Promise.all(held)) expect(result.isError).toBe(true);
      expect(runs()).toBe(1);
    });
  });
});

describe('a hostile requestState (2026-07-28 retry)', () => {
  let audit: RecordingAuditSink;
  let gateway: Gateway;
  let face: McpFace;
  beforeEach(() => {
    audit = new RecordingAuditSink();
    gateway = gatewayWith(audit);
    face = createMcpFace({ gateway, version: 't', maxBodyBytes: 1 << 20, approvalWaitMs: 300, stateKey: KEY });
  });
  afterEach(() => face.close());

  /** A raw 2026-07-28 `tools/call`, as the 2.4 client sends it. */
  const post = (principal: Principal, params: Record<string, unknown>) =>
    face.handle(
      mcpPost(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } },
              ...(params['_meta'] as object | undefined),
            },
          },
        },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': String(params['name']) },
      ),
      principal,
    ).then(async (r) => (await r.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } });

  /** A first call's `input_required`: the state and the approval it names, approved so that a wrongful retry would run. */
  async function approvedState(principal: Principal = worker): Promise<{ state: string; id: string }> {
    const first = await post(principal, { name: 'risky_calc', arguments: ARGS });
    expect(first.result?.['resultType']).toBe('input_required');
    const state = first.result?.['requestState'] as string;
    const url = (first.result?.['inputRequests'] as Record<string, { params: { url: string } }>)['toolgate/approval']!.params.url;
    const id = idOf(url);
    await gateway.decideApproval(approver, id, { approve: true });
    return { state, id };
  }
  const accept = { 'toolgate/approval': { action: 'accept' } };
  const runs = () => audit.records.filter((r) => r.event === 'succeeded').length;

  it('the genuine state, accepted, runs once', async () => {
    const { state } = await approvedState();
    const retry = await post(worker, { name: 'risky_calc', arguments: ARGS, requestState: state, inputResponses: accept });
    expect(retry.result?.['structuredContent']).toEqual({ result: 5 });
    expect(runs()).toBe(1);
  });

  const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
  it.each([
    ['a flipped signature character', (s: string) => flip(s, s.length - 3), /signature does not match/],
    ['a flipped payload character', (s: string) => flip(s, 8), /signature does not match|not a token/],
    ['the signature cut off', (s: string) => s.slice(0, s.lastIndexOf('.')), /not a token this server issued/],
    ['another format version', (s: string) => `v2${s.slice(2)}`, /format version this server does not issue/],
    ['a padded giant', (s: string) => s + 'A'.repeat(10_000), /longer than any token/],
    ['whitespace around it', (s: string) => ` ${s} `, /not a token this server issued/],
    ['an empty string', () => '', /not a token this server issued/],
    ['a payload re-signed with another key', () => new SignedTokens({ key: Buffer.alloc(32, 9) }).sign('toolgate/approval-state', { t: 'acme', p: 'w', a: 'x', d: 'y', n: 'risky_calc' }, 60_000), /signature does not match/],
  ])('%s is refused with a clear InvalidParams, and nothing runs', async (_name, mangle, message) => {
    const { state, id } = await approvedState();
    const retry = await post(worker, { name: 'risky_calc', arguments: ARGS, requestState: mangle(state), inputResponses: accept });
    expect(retry.error?.code).toBe(-32602);
    expect(retry.error?.message).toMatch(message);
    expect(retry.error?.message).not.toContain(state.slice(5, 40));
    expect(runs()).toBe(0);
    expect((await gateway.getApproval(worker, id))?.status).toBe('approved');
  });

  it.each([
    ['a number', 12],
    ['an object', { t: 'acme' }],
  ])('a requestState that is %s is refused and runs nothing', async (_name, value) => {
    await approvedState();
    const retry = await post(worker, { name: 'risky_calc', arguments: ARGS, requestState: value, inputResponses: accept });
    expect(retry.error).toBeDefined();
    expect(runs()).toBe(0);
  });

  it("another principal's genuine state is refused for this principal, and another tenant's too", async () => {
    const theirs = await approvedState(worker2);
    const retry = await post(worker, { name: 'risky_calc', arguments: ARGS, requestState: theirs.state, inputResponses: accept });
    expect(retry.error?.message).toMatch(/issued to another principal/);
    const abroad = await post(outsider, { name: 'risky_calc', arguments: ARGS, requestState: theirs.state, inputResponses: accept });
    expect(abroad.error?.message).toMatch(/issued to another principal/);
    expect(runs()).toBe(0);
  });

  it('a state for other arguments or another tool is refused, and the approval is not used', async () => {
    const { state, id } = await approvedState();
    const otherArgs = await post(worker, { name: 'risky_calc', arguments: { expression: '6*7' }, requestState: state, inputResponses: accept });
    expect(otherArgs.error?.message).toMatch(/arguments \(or the tool version\) differ/);
    const otherTool = await post(worker, { name: 'calculator', arguments: ARGS, requestState: state, inputResponses: accept });
    expect(otherTool.error?.message).toMatch(/issued for another tool/);
    const otherId = await post(worker, { name: 'risky_calc', arguments: ARGS, requestState: state, inputResponses: accept, _meta: { 'toolgate/approvalId': 'someone-elses' } });
    expect(otherId.error?.message).toMatch(/names another approval/);
    expect(runs()).toBe(0);
    expect((await gateway.getApproval(worker, id))?.status).toBe('approved');
  });

  it('a session id offered as requestState is refused (tokens are bound to their purpose)', async () => {
    await approvedState();
    const init = await face.handle(
      mcpPost({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      worker,
    );
    const session = init.headers.get('mcp-session-id');
    expect(session).toBeTruthy();
    const retry = await post(worker, { name: 'risky_calc', arguments: ARGS, requestState: session, inputResponses: accept });
    expect(retry.error?.message).toMatch(/signature does not match/);
    expect(runs()).toBe(0);
  });

  it('an expired state is a tool error telling the model to call again; nothing runs', async () => {
    await approvedState();
    const past = new SignedTokens({ key: KEY, now: () => Date.now() - 16 * 60_000 });
    const list = await gateway.listApprovals(worker, { status: 'approved' });
    const stale = past.sign('toolgate/approval-state', { t: 'acme', p: 'w', a: list[0]!.id, d: list[0]!.payloadDigest, n: 'risky_calc' }, 15 * 60_000);
    const retry = await post(worker, { name: 'risky_calc', arguments: ARGS, requestState: stale, inputResponses: accept });
    expect(retry.result?.['isError']).toBe(true);
    expect(JSON.stringify(retry.result)).toMatch(/expired before this retry/);
    expect(runs()).toBe(0);
  });

  it.each([
    ['no inputResponses at all', undefined],
    ['an answer under another key', { other: { action: 'accept' } }],
    ['a sampling-shaped answer', { 'toolgate/approval': { role: 'assistant', content: { type: 'text', text: 'approve' } } }],
    ['an accept that claims an approval', { 'toolgate/approval': { action: 'accept', content: { approved: true, approvedBy: 'boss' } } }],
  ])('a genuine state with %s never approves: the call runs only because the store says approved', async (_name, responses) => {
    const first = await post(worker, { name: 'risky_calc', arguments: ARGS });
    const state = first.result?.['requestState'] as string;
    const retry = await post(worker, { name: 'risky_calc', arguments: ARGS, requestState: state, ...(responses ? { inputResponses: responses } : {}) });
    expect(retry.result?.['isError']).toBe(true);
    expect(runs()).toBe(0);
  });
});
