import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { MemoryApprovalStore, MemoryBudgetStore, MemorySettingsStore } from '@toolgate/adapter-store-memory';
import { FsTenantWorkspaces } from '@toolgate/adapter-workspace-fs';
import type { Principal, TenantPolicy, ToolDefinition } from '@toolgate/contracts';
import { Gateway, ToolRegistry } from '@toolgate/gateway';
import { createMcpFace, type McpFace } from '@toolgate/mcp-face';
import { LiteralDirectory, RecordingAuditSink } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { healthMs, serveBesideHealthz } from '../../test/slow-reader-server.js';
import { serveMcp } from './mcp-route.js';

const STALL_MS = 300;
const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker'] };

/** A tool whose answer is larger than loopback's socket buffers on both ends (about 4 MB here), so a client that stops reading stalls it. */
const bigTool: ToolDefinition = {
  manifest: {
    ...calculatorTool.manifest,
    name: 'big_text',
    description: 'Returns twelve megabytes of text.',
    input: { type: 'object', properties: {}, additionalProperties: false },
    output: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    maxOutputBytes: 32 * 1024 * 1024,
    timeoutMs: 10_000,
  },
  handler: { invoke: async () => ({ text: 'b'.repeat(12 * 1024 * 1024) }) },
};

function gatewayWith(audit: RecordingAuditSink): Gateway {
  const tenant: TenantPolicy = { tools: ['*'], selfApproval: false, grants: [] };
  return new Gateway({
    registry: new ToolRegistry([calculatorTool, bigTool]),
    directory: new LiteralDirectory({ tenants: { acme: tenant }, roles: { worker: ['*'] }, principals: [worker] }),
    approvals: new MemoryApprovalStore(),
    budgets: new MemoryBudgetStore(),
    settings: new MemorySettingsStore(),
    audit,
    executors: [new InProcessExecutor()],
    clock: { now: () => Date.now() },
    workspaces: new FsTenantWorkspaces(mkdtempSync(join(tmpdir(), 'toolgate-mcp-route-'))),
    bootEgress: { enabled: false, allowAny: false, hosts: [] },
  });
}

/** A server beside `/healthz` whose other requests go to the route over a real face and gateway, as `worker`. */
const serve = (face: McpFace) =>
  serveBesideHealthz((req, res) => void serveMcp(req, res, new URL(req.url ?? '/', 'http://127.0.0.1'), worker, { face, maxBodyBytes: 1 << 20, headers: {}, writeStallMs: STALL_MS }));

const ERAS = {
  '2025-06-18 (an event-stream answer)': { version: '2025-06-18', meta: {} },
  '2026-07-28 (a JSON answer)': {
    version: '2026-07-28',
    meta: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  },
} as const;

/** Sends one `tools/call` of `big_text` on a raw socket and never reads the answer. */
function callAndStopReading(port: number, era: (typeof ERAS)[keyof typeof ERAS]): Promise<Socket> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'big_text', arguments: {}, ...era.meta } });
  const head = [
    'POST /mcp HTTP/1.1',
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `MCP-Protocol-Version: ${era.version}`,
    ...(era.version === '2026-07-28' ? ['Mcp-Method: tools/call', 'Mcp-Name: big_text'] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.pause();
      socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
      resolve(socket);
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

describe('MCP route: slow readers (a client that stops reading its answer)', () => {
  let audit: RecordingAuditSink;
  let face: McpFace;
  let open: { server: Server; sockets: Socket[] } | undefined;

  beforeEach(() => {
    audit = new RecordingAuditSink();
    face = createMcpFace({ gateway: gatewayWith(audit), version: 't', maxBodyBytes: 1 << 20 });
  });
  afterEach(async () => {
    for (const socket of open?.sockets ?? []) socket.destroy();
    await new Promise((resolve) => open?.server.close(resolve) ?? resolve(undefined));
    open = undefined;
    await face.close();
  });

  for (const [name, era] of Object.entries(ERAS)) {
    it(`${name}: the stalled answer is destroyed within the bound, /healthz keeps answering, and the call's audit is whole`, async () => {
      const { server, port, served } = await serve(face);
      open = { server, sockets: [] };
      await healthMs(port);
      open.sockets.push(await callAndStopReading(port, era));
      await expect.poll(() => served.length).toBe(1);
      // Probe while the write is held up (the answer made, the buffers full), not while the call computes it.
      await expect.poll(() => served[0]!.res.writableNeedDrain || served[0]!.res.destroyed, { timeout: 10_000 }).toBe(true);
      const times: number[] = [];
      let settled = false;
      const answer = served[0]!.closed.finally(() => (settled = true));
      while (!settled || times.length < 2) {
        times.push(await healthMs(port));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const { afterMs, finished } = await answer;
      expect(finished).toBe(false);
      expect(afterMs).toBeGreaterThanOrEqual(STALL_MS);
      expect(afterMs).toBeLessThan(STALL_MS + 10_000);
      expect(Math.max(...times)).toBeLessThan(100);
      // The call itself ran and was recorded start to end: a client that stops reading leaves no half-written audit.
      expect(audit.records.filter((r) => r.tool === 'big_text').map((r) => r.event)).toEqual(['authorized', 'succeeded']);
    });
  }

  it('a reader that reads gets the whole answer, in both eras', async () => {
    const { server, port } = await serve(face);
    open = { server, sockets: [] };
    for (const era of Object.values(ERAS)) {
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': era.version,
          ...(era.version === '2026-07-28' ? { 'mcp-method': 'tools/call', 'mcp-name': 'calculator' } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'calculator', arguments: { expression: '6*7' }, ...era.meta } }),
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('"structuredContent":{"result":42}');
    }
  });
});
