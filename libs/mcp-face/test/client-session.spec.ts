import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Principal, ToolDefinition } from '@toolgate/contracts';
import { RecordingAuditSink } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PendingElicitations } from '../src/approval-flow.js';
import { CALLER_KEY, LegacySessions } from '../src/client-session.js';
import { callerOf, capabilitySubset, createMcpFace, SignedTokens, type McpFace } from '../src/index.js';
import { MCP_URL as URL_, mcpPost } from './mcp-requests.js';
import { realGateway } from './real-gateway.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker'] };
const planner: Principal = { id: 'p', tenant: 'acme', roles: ['planner'] };
const twin: Principal = { id: 'w', tenant: 'globex', roles: ['worker'] };
const KEY = Buffer.alloc(32, 3);

describe('callerOf', () => {
  const modern = (caps: unknown) => ({
    mcpReq: { envelope: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': caps } },
    http: { authInfo: { token: '', clientId: 'w', scopes: [], extra: { [CALLER_KEY]: { requestKey: 'k1' } } } },
  });

  it('reads a 2026-07-28 request from its envelope, with a per-request session key', () => {
    expect(callerOf(modern({ elicitation: { url: {} } }))).toEqual({ era: 'modern', protocolVersion: '2026-07-28', capabilities: { elicitation: { url: {} } }, sessionKey: 'r:k1' });
  });

  it.each([['an array', [1]], ['a string', 'elicitation'], ['null', null], ['absent', undefined]])('declares nothing when the envelope capabilities are %s', (_name, caps) => {
    expect(callerOf(modern(caps)).capabilities).toEqual({});
  });

  it('reads a 2025-era request from the verified session, and knows nothing without one', () => {
    const legacy = { era: 'legacy' as const, protocolVersion: '2025-11-25', capabilities: { elicitation: { url: {} } }, sessionKey: 's:n' };
    const withSession = { mcpReq: {}, http: { authInfo: { token: '', clientId: 'w', scopes: [], extra: { [CALLER_KEY]: { requestKey: 'k', legacy } } } } };
    expect(callerOf(withSession)).toBe(legacy);
    expect(callerOf({ mcpReq: {} })).toEqual({ era: 'legacy', protocolVersion: 'unknown', capabilities: {}, sessionKey: 'legacy:no-session' });
  });
});

describe('capabilitySubset', () => {
  it('keeps only the members the face acts on, each as a flag', () => {
    expect(
      capabilitySubset({ elicitation: { url: { extra: 'x'.repeat(10_000) }, form: {} }, sampling: { tools: {}, context: {}, junk: 1 }, roots: { listChanged: true }, experimental: { big: 'y'.repeat(10_000) } }),
    ).toEqual({ elicitation: { url: {}, form: {} }, sampling: { tools: {}, context: {} }, roots: {} });
    // The 2025-11-25 revision reads a bare elicitation object as form mode.
    expect(capabilitySubset({ elicitation: {} })).toEqual({ elicitation: { form: {} } });
    expect(capabilitySubset({ elicitation: { url: true } })).toEqual({ elicitation: {} });
    for (const junk of [null, 'x', 3, [], [{ elicitation: {} }]]) expect(capabilitySubset(junk)).toEqual({});
  });
});

describe('LegacySessions (forged or foreign session ids)', () => {
  const tokens = new SignedTokens({ key: KEY });
  const sessions = new LegacySessions(tokens);

  it('a minted session verifies for its principal, carrying the declared capabilities and a session key', () => {
    const id = sessions.mint(worker, '2025-11-25', { elicitation: { url: {} }, huge: 'z'.repeat(50_000) });
    expect(id.length).toBeLessThan(400);
    expect(id).toMatch(/^[\x21-\x7e]+$/);
    const caller = sessions.verify(worker, id);
    expect(caller).toMatchObject({ era: 'legacy', protocolVersion: '2025-11-25', capabilities: { elicitation: { url: {} } } });
    expect(caller.sessionKey).toMatch(/^s:/);
    // Two initializes of one principal are two sessions.
    expect(sessions.verify(worker, sessions.mint(worker, '2025-11-25', {})).sessionKey).not.toBe(caller.sessionKey);
  });

  it.each([
    ['another principal of the tenant', planner],
    ['the same id in another tenant', twin],
  ])('is refused for %s', (_name, other) => {
    const id = sessions.mint(worker, '2025-11-25', {});
    expect(() => sessions.verify(other, id)).toThrow(/issued to another principal; initialize a new session/);
  });

  it.each([
    ['random text', () => 'abc'],
    ['a UUID, as stateful servers issue', () => '6f1c2c8e-3d9c-4f7e-9b0a-1f2e3d4c5b6a'],
    ['a tampered payload', (id: string) => id.slice(0, 10) + (id[10] === 'A' ? 'B' : 'A') + id.slice(11)],
    ['another key', () => new LegacySessions(new SignedTokens({ key: Buffer.alloc(32, 4) })).mint(worker, '2025-11-25', {})],
    ['a requestState token', () => tokens.sign('toolgate/approval-state', { t: 'acme', p: 'w', v: 'x', c: {}, n: 'n' }, 60_000)],
    ['an expired session', () => new LegacySessions(new SignedTokens({ key: KEY, now: () => Date.now() - 13 * 3_600_000 })).mint(worker, '2025-11-25', {})],
    ['a giant', () => 'v1.' + 'A'.repeat(20_000) + '.AAAA'],
  ])('%s is refused with a reason', (_name, make) => {
    const good = sessions.mint(worker, '2025-11-25', {});
    expect(() => sessions.verify(worker, make(good))).toThrow(/^Mcp-Session-Id refused: .*; initialize a new session$/);
  });
});

describe('PendingElicitations', () => {
  it('only the session that was asked can answer, and only once', () => {
    const pending = new PendingElicitations();
    const wait = pending.register('s:a', 'toolgate-elicit-1');
    expect(pending.settle('s:b', 'toolgate-elicit-1', { result: { action: 'decline' } })).toBe(false);
    expect(pending.settle('s:a', 'toolgate-elicit-2', { result: { action: 'decline' } })).toBe(false);
    expect(pending.settle('s:a', 'toolgate-elicit-1', { result: { action: 'decline' } })).toBe(true);
    expect(pending.settle('s:a', 'toolgate-elicit-1', { result: { action: 'accept' } })).toBe(false);
    return expect(wait.answer).resolves.toEqual({ action: 'decline' });
  });

  it.each([
    ['an error', { error: { code: -1, message: 'no' } }],
    ['an unknown action', { result: { action: 'approve' } }],
    ['no result', {}],
  ])('%s is an error answer, never an accept', (_name, message) => {
    const pending = new PendingElicitations();
    const wait = pending.register('s', 'id');
    pending.settle('s', 'id', message);
    return expect(wait.answer).resolves.toEqual({ action: 'error' });
  });
});

/** A tool that runs until its signal fires. */
function slowTool(stopped: string[]): ToolDefinition {
  return {
    manifest: { ...calculatorTool.manifest, name: 'slow', description: 'Waits.', timeoutMs: 10_000, input: { type: 'object', properties: { tag: { type: 'string' } }, additionalProperties: false } },
    handler: {
      invoke: (args, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            stopped.push(String(args['tag']));
            reject(new Error('aborted'));
          });
        }),
    },
  };
}

describe('2025-era sessions through the face (ADR 0051)', () => {
  let audit: RecordingAuditSink;
  let face: McpFace;
  const stopped: string[] = [];
  beforeEach(() => {
    audit = new RecordingAuditSink();
    stopped.length = 0;
    const gateway = realGateway({
      tools: [calculatorTool, slowTool(stopped)],
      principals: [worker, planner, twin],
      roles: { worker: ['*'], planner: ['calculator'] },
      audit,
      tmpPrefix: 'toolgate-mcp-session-',
    });
    face = createMcpFace({ gateway, version: 't', maxBodyBytes: 1 << 20, stateKey: KEY });
  });
  afterEach(() => face.close());

  const post = (principal: Principal, body: object, session?: string) =>
    face.handle(
      mcpPost(body, { 'mcp-protocol-version': '2025-11-25', ...(session === undefined ? {} : { 'mcp-session-id': session }) }),
      principal,
    );
  const initialize = async (principal: Principal) => {
    const response = await post(principal, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    await response.text();
    return response.headers.get('mcp-session-id') ?? '';
  };

  it('an initialize answer carries a signed session id; the SDK client sends it back and is served', async () => {
    const sessionIds: (string | null)[] = [];
    const client = new LegacyClient({ name: 'v1', version: '1' });
    await client.connect(
      new LegacyTransport(new URL(URL_), {
        fetch: (input, init) => {
          const request = new Request(input, init);
          sessionIds.push(request.headers.get('mcp-session-id'));
          return face.handle(request, worker);
        },
      }),
    );
    expect((await client.callTool({ name: 'calculator', arguments: { expression: '1+1' } })).structuredContent).toEqual({ result: 2 });
    expect(sessionIds[0]).toBeNull();
    expect(sessionIds.at(-1)).toMatch(/^v1\./);
    await client.close();
  });

  it.each([
    ['a random value', async () => 'not-a-session'],
    ["another principal's real session", () => initialize(planner)],
    ["another tenant's principal of the same id", () => initialize(twin)],
    ['a tampered session', async () => (await initialize(worker)).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))],
    ['an expired session', async () => new LegacySessions(new SignedTokens({ key: KEY, now: () => Date.now() - 13 * 3_600_000 })).mint(worker, '2025-11-25', {})],
  ])('%s is answered 404 with a clear JSON-RPC error, before the SDK or the gateway sees the request', async (_name, make) => {
    const session = await make();
    const response = await post(worker, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'calculator', arguments: { expression: '1+1' } } }, session);
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32001);
    expect(body.error.message).toMatch(/^Mcp-Session-Id refused: .*; initialize a new session$/);
    expect(body.error.message).not.toContain(session.slice(3, 30));
    expect(audit.records).toEqual([]);
  });

  it('two clients of one principal reusing a JSON-RPC id cancel only their own call; a session-less cancel stops neither', async () => {
    const a = await initialize(worker);
    const b = await initialize(worker);
    const call = (session: string, tag: string) => post(worker, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { tag } } }, session).then((r) => r.text());
    const answers = [call(a, 'a'), call(b, 'b')];
    await expect.poll(() => audit.records.filter((r) => r.event === 'authorized').length).toBe(2);
    const cancel = (session?: string) => post(worker, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }, session);
    await cancel();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(stopped).toEqual([]);
    await cancel(a);
    await expect.poll(() => stopped).toEqual(['a']);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(stopped).toEqual(['a']);
    await cancel(b);
    await expect.poll(() => stopped).toEqual(['a', 'b']);
    await Promise.all(answers);
  });
});
