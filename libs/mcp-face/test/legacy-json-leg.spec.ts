import type { Principal, ToolDefinition } from '@toolgate/contracts';
import { RecordingAuditSink } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMcpFace, type McpFace } from '../src/index.js';
import { answerableAsJson } from '../src/legacy-json-leg.js';
import { MCP_URL, mcpPost } from './mcp-requests.js';
import { realGateway } from './real-gateway.js';
import { slowTool } from './slow-tool.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker'] };
const KEY = new Uint8Array(32).fill(7);

function gatewayWith(tools: ToolDefinition[], audit: RecordingAuditSink) {
  return realGateway({ tools, principals: [worker], roles: { worker: ['*'] }, audit, tmpPrefix: 'toolgate-legacy-json-' });
}

const call = (params: Record<string, unknown>, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });
const post = (headers: Record<string, string> = {}, signal?: AbortSignal) => mcpPost(undefined, { 'mcp-protocol-version': '2025-06-18', ...headers }, signal);

describe('which 2025-era requests may be answered as one JSON body', () => {
  const plain = call({ name: 'calculator', arguments: { expression: '1+1' } });
  it.each([
    ['a tools/call with no _meta', plain, true],
    ['a tools/list', { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: {} }, true],
    ['a tools/call with an empty _meta', call({ name: 'calculator', arguments: {}, _meta: {} }), true],
    ['a tools/call that asks for progress (string token)', call({ name: 'calculator', _meta: { progressToken: 'p' } }), false],
    ['a tools/call that asks for progress (numeric token 0)', call({ name: 'calculator', _meta: { progressToken: 0 } }), false],
    ['a tools/call with a null progress token', call({ name: 'calculator', _meta: { progressToken: null } }), false],
    ['a _meta that is not an object', call({ name: 'calculator', _meta: 'progressToken' }), false],
    ['params that are not an object', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: ['calculator'] }, false],
    ['an initialize', { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, false],
    ['a notification (no id)', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, false],
    ['a request with a null id', call({ name: 'calculator' }, null), false],
    ['an answer to a request of the server', { jsonrpc: '2.0', id: 'toolgate-1', result: {} }, false],
    ['a batch array', [plain], false],
    ['another JSON-RPC version', { ...plain, jsonrpc: '1.0' }, false],
    ['no parsed body', undefined, false],
  ])('%s → %s', (_name, body, expected) => {
    expect(answerableAsJson(post(), body, undefined)).toBe(expected);
  });

  it.each([
    ['elicitation', { elicitation: {} }],
    ['URL elicitation', { elicitation: { url: {} } }],
    ['sampling', { sampling: {} }],
  ])('keeps the stream for a session that declared %s (the face may push on it)', (_name, capabilities) => {
    expect(answerableAsJson(post(), plain, { era: 'legacy', protocolVersion: '2025-11-25', capabilities, sessionKey: 's' })).toBe(false);
  });

  it('answers as JSON for a session that declared neither', () => {
    expect(answerableAsJson(post(), plain, { era: 'legacy', protocolVersion: '2025-11-25', capabilities: { roots: {} }, sessionKey: 's' })).toBe(true);
  });

  it('never for a GET', () => {
    expect(answerableAsJson(new Request(MCP_URL), plain, undefined)).toBe(false);
  });
});

describe('the JSON leg over a real gateway', () => {
  let audit: RecordingAuditSink;
  let face: McpFace;
  const stopped: { at?: number } = {};
  beforeEach(() => {
    audit = new RecordingAuditSink();
    delete stopped.at;
    face = createMcpFace({ gateway: gatewayWith([calculatorTool, slowTool(stopped)], audit), version: 't', maxBodyBytes: 1 << 20, stateKey: KEY });
  });
  afterEach(() => face.close());

  it('a 2025-era tools/call that can push nothing is answered with one JSON body, audited once', async () => {
    const body = call({ name: 'calculator', arguments: { expression: '6*7' } }, 9);
    const response = await face.handle(post(), worker, undefined, body);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 9, result: { content: [{ type: 'text', text: '{"result":42}' }], structuredContent: { result: 42 } } });
    expect(audit.records.filter((r) => r.tool === 'calculator').map((r) => r.event)).toEqual(['authorized', 'succeeded']);
  });

  it('the same call with a progress token keeps the event stream', async () => {
    const body = call({ name: 'calculator', arguments: { expression: '6*7' }, _meta: { progressToken: 'p1' } });
    const response = await face.handle(post(), worker, undefined, body);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(await response.text()).toContain('"structuredContent":{"result":42}');
  });

  it('a 2026-07-28 request never takes the leg', async () => {
    const body = call({
      name: 'calculator',
      arguments: { expression: '6*7' },
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} },
    });
    const response = await face.handle(post({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'calculator' }), worker, undefined, body);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"structuredContent":{"result":42}');
  });

  describe('the transport checks still hold on the leg', () => {
    const body = call({ name: 'calculator', arguments: { expression: '1' } });
    it.each([
      ['an Accept without text/event-stream', { accept: 'application/json' }, 406],
      ['an Accept without application/json', { accept: 'text/event-stream' }, 406],
      ['a Content-Type of text/plain', { 'content-type': 'text/plain' }, 415],
      ['a Content-Type of application/jsonx', { 'content-type': 'application/jsonx' }, 415],
      ['a protocol version nobody speaks', { 'mcp-protocol-version': '2024-01-01' }, 400],
    ])('%s is refused (%s) and runs nothing', async (_name, headers, status) => {
      const response = await face.handle(post(headers), worker, undefined, body);
      expect(response.status).toBe(status);
      expect(audit.records).toEqual([]);
    });
  });

  describe('a client gone mid-call', () => {
    for (const [name, how] of [
      ['the request signal', 'request'],
      ['the disconnect signal', 'disconnected'],
    ] as const) {
      it(`aborted through ${name}: the call stops, the exchange ends, and nothing is left waiting`, async () => {
        const gone = new AbortController();
        const request = post({}, how === 'request' ? gone.signal : undefined);
        const handled = face.handle(request, worker, how === 'disconnected' ? gone.signal : undefined, call({ name: 'slow', arguments: {} }));
        await new Promise((resolve) => setTimeout(resolve, 100));
        const abortedAt = Date.now();
        gone.abort();
        const response = await handled;
        expect(response.status).toBeGreaterThanOrEqual(200);
        await expect.poll(() => stopped.at).toBeDefined();
        expect(stopped.at! - abortedAt).toBeLessThan(2_000);
      });
    }
  });
});
