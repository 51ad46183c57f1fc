import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Principal, ToolDefinition } from '@toolgate/contracts';
import { RecordingAuditSink } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMcpFace, type McpFace } from '../src/index.js';
import { MCP_URL as URL_, mcpPost } from './mcp-requests.js';
import { realGateway } from './real-gateway.js';
import { slowTool } from './slow-tool.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker'] };
const planner: Principal = { id: 'p', tenant: 'acme', roles: ['planner'] };

/** `count` copies of the calculator under other names: a catalogue larger than one page. */
function manyTools(count: number): ToolDefinition[] {
  return Array.from({ length: count }, (_, i) => ({ ...calculatorTool, manifest: { ...calculatorTool.manifest, name: `calc_${String(i).padStart(3, '0')}` } }));
}

function gatewayWith(tools: ToolDefinition[], audit: RecordingAuditSink) {
  return realGateway({ tools, principals: [worker, planner], roles: { worker: ['*'], planner: ['calculator'] }, audit, tmpPrefix: 'toolgate-mcp-face-' });
}

/** The JSON-RPC methods each request carried, in order, as the face received them. */
const seen: string[] = [];
/** The JSON-RPC ids of the `tools/call` requests the face received. */
const callIds: unknown[] = [];
/** The `Mcp-Session-Id` of the last `tools/call` the face received (2025 era, ADR 0051). */
let lastSession: string | null = null;

/** A fetch that serves the face in process as `principal`, passing the caller's abort signal on. */
function fetchAs(face: McpFace, principal: Principal) {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.method === 'POST') {
      const message = (await request.clone().json()) as { method?: string; id?: unknown };
      seen.push(String(message.method));
      if (message.method === 'tools/call') {
        callIds.push(message.id);
        lastSession = request.headers.get('mcp-session-id');
      }
    }
    return face.handle(request, principal);
  };
}

type Generation = 'modern' | 'legacy-v2' | 'legacy-v1';
const GENERATIONS: Generation[] = ['modern', 'legacy-v2', 'legacy-v1'];

/** The calls the tests make, the same for both SDK generations. */
interface TestClient {
  listTools(params?: { cursor?: string }): Promise<{ tools: { name: string; [k: string]: unknown }[]; nextCursor?: string }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }, signal?: AbortSignal): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

async function connect(face: McpFace, principal: Principal, generation: Generation): Promise<TestClient> {
  const fetch = fetchAs(face, principal);
  if (generation === 'legacy-v1') {
    const client = new LegacyClient({ name: 'test-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(URL_), { fetch }));
    return {
      listTools: (params) => client.listTools(params),
      callTool: (params, signal) => client.callTool(params, undefined, signal ? { signal } : {}),
      close: () => client.close(),
    };
  }
  const client = new ModernClient(
    { name: 'test-v2', version: '1.0.0' },
    generation === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(new ModernTransport(new URL(URL_), { fetch }));
  return {
    listTools: (params) => client.listTools(params),
    callTool: (params, signal) => client.callTool(params, signal ? { signal } : {}) as Promise<Record<string, unknown>>,
    close: () => client.close(),
  };
}

describe('the MCP face over a real gateway', () => {
  let audit: RecordingAuditSink;
  let face: McpFace;
  const stopped: { at?: number } = {};
  beforeEach(() => {
    audit = new RecordingAuditSink();
    delete stopped.at;
    face = createMcpFace({ gateway: gatewayWith([calculatorTool, slowTool(stopped), ...manyTools(230)], audit), version: 'test', maxBodyBytes: 1 << 20 });
  });
  afterEach(() => face.close());

  for (const generation of GENERATIONS) {
    describe(`with the ${generation} client`, () => {
      it('lists every visible tool across pages, each once, with schemas, title and hints', async () => {
        const client = await connect(face, worker, generation);
        const names: string[] = [];
        let cursor: string | undefined;
        seen.length = 0;
        // The v2 client walks every page itself when given no cursor; the v1 client is walked here.
        do {
          const page = await client.listTools(cursor ? { cursor } : {});
          names.push(...page.tools.map((t) => t.name));
          cursor = page.nextCursor;
        } while (cursor);
        expect(seen.filter((m) => m === 'tools/list')).toHaveLength(3);
        expect(names).toHaveLength(232);
        expect(new Set(names).size).toBe(232);
        const first = (await client.listTools({})).tools.find((t) => t.name === 'calc_000');
        expect(first).toMatchObject({
          title: 'Calc 000',
          description: calculatorTool.manifest.description,
          inputSchema: calculatorTool.manifest.input,
          outputSchema: calculatorTool.manifest.output,
          annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
        });
        await client.close();
      });

      it('calls a tool through the gateway: structured output, a text block, and the audit of the call', async () => {
        const client = await connect(face, worker, generation);
        const result = await client.callTool({ name: 'calculator', arguments: { expression: '2+3*4' } });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toEqual({ result: 14 });
        expect(result.content).toEqual([{ type: 'text', text: '{"result":14}' }]);
        expect(audit.records.map((r) => r.event)).toEqual(['authorized', 'succeeded']);
        await client.close();
      });

      it('answers a denial as a tool error a model can act on, with the denial as structured content', async () => {
        const client = await connect(face, planner, generation);
        const result = await client.callTool({ name: 'slow', arguments: {} });
        expect(result.isError).toBe(true);
        const text = (result.content as { text: string }[])[0]!.text;
        expect(text).toContain('at the allow gate: TOOL_NOT_ALLOWED');
        expect(text).toContain('delegate the task to one of: w');
        expect(result.structuredContent).toMatchObject({ ok: false, denial: { gate: 'allow', code: 'TOOL_NOT_ALLOWED', data: { delegates: ['w'] } } });
        expect(audit.records.map((r) => r.event)).toEqual(['denied']);
        await client.close();
      });

      it('shows a planner only the tools its roles hold', async () => {
        const client = await connect(face, planner, generation);
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['calculator']);
        await client.close();
      });

      it('cancels a running call when the client aborts it: the tool stops and the audit says cancelled', async () => {
        const client = await connect(face, worker, generation);
        const controller = new AbortController();
        const call = client.callTool({ name: 'slow', arguments: {} }, controller.signal).catch((e: unknown) => e);
        await expect.poll(() => audit.records.map((r) => r.event)).toEqual(['authorized']);
        const abortedAt = Date.now();
        controller.abort();
        expect(await call).toBeInstanceOf(Error);
        await expect.poll(() => stopped.at).toBeGreaterThanOrEqual(abortedAt);
        // The audit closes the call at the execute gate well before the tool's 10 s deadline: the
        // gateway's audit records no reason text, so a cancellation shows as an execute-gate
        // EXECUTION_FAILED that is not a TIMEOUT.
        await expect.poll(() => audit.records.map((r) => r.event)).toEqual(['authorized', 'denied']);
        expect(audit.records[1]).toMatchObject({ event: 'denied', gate: 'execute', code: 'EXECUTION_FAILED', tool: 'slow' });
        expect((audit.records[1] as unknown as { durationMs: number }).durationMs).toBeLessThan(5_000);
        await client.close();
      });
    });
  }

  describe('a client that goes away', () => {
    it('cancels its call through the disconnect signal the transport passes, even when the Request carries none', async () => {
      const disconnected = new AbortController();
      const answer = face.handle(
        mcpPost({ jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'slow', arguments: {} } }, { 'mcp-protocol-version': '2025-11-25' }),
        worker,
        disconnected.signal,
      );
      await expect.poll(() => audit.records.map((r) => r.event)).toEqual(['authorized']);
      const abortedAt = Date.now();
      disconnected.abort();
      await expect.poll(() => stopped.at).toBeGreaterThanOrEqual(abortedAt);
      await expect.poll(() => audit.records.map((r) => r.event)).toEqual(['authorized', 'denied']);
      expect(audit.records[1]).toMatchObject({ event: 'denied', gate: 'execute', code: 'EXECUTION_FAILED', tool: 'slow' });
      await (await answer).text().catch(() => '');
    });
  });

  describe('cancellation by another principal', () => {
    /** A 2025-era `notifications/cancelled` POST naming `requestId`, sent as `principal`. */
    const cancel = (principal: Principal, requestId: unknown, session?: string) =>
      face.handle(
        mcpPost(
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'hostile' } },
          { 'mcp-protocol-version': '2025-11-25', ...(session ? { 'mcp-session-id': session } : {}) },
        ),
        principal,
      );

    it("cannot stop a principal's running call by naming its request id, in any spelling", async () => {
      const client = await connect(face, worker, 'legacy-v1');
      callIds.length = 0;
      const controller = new AbortController();
      const call = client.callTool({ name: 'slow', arguments: {} }, controller.signal).catch((e: unknown) => e);
      await expect.poll(() => audit.records.map((r) => r.event)).toEqual(['authorized']);
      const id = callIds[0];
      for (const spelling of [id, String(id), Number(id), [id], { id }, null]) {
        const answer = await cancel(planner, spelling);
        expect(answer.status).toBeLessThan(500);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stopped.at).toBeUndefined();
      expect(audit.records.map((r) => r.event)).toEqual(['authorized']);
      // Its own client can, in the session the call came in (ADR 0051 keys cancellation by it).
      expect(lastSession).toBeTruthy();
      await cancel(worker, id, lastSession ?? undefined);
      await expect.poll(() => stopped.at).toBeDefined();
      controller.abort();
      await call;
      await client.close();
    });
  });

  describe('hostile cursors', () => {
    const spellings = ['', 'not base64!', 'eyJhZnRlciI6MX0', Buffer.from('{"after":""}').toString('base64url'), 'A'.repeat(600), Buffer.from('[1,2]').toString('base64url')];
    for (const cursor of spellings) {
      it(`refuses cursor ${JSON.stringify(cursor.slice(0, 20))} with -32602 and keeps serving`, async () => {
        const client = await connect(face, worker, 'legacy-v2');
        await expect(client.listTools({ cursor })).rejects.toMatchObject({ code: -32602 });
        expect((await client.listTools()).tools.length).toBe(232);
        await client.close();
      });
    }
  });
});
