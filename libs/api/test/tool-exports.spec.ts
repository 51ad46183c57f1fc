import type { Principal, ToolDefinition } from '@toolgate/contracts';
import { aliasOf } from '@toolgate/gateway';
import { RecordingAuditSink } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { TRPCError } from '@trpc/server';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAppRouter, createCallerFactory, createContextInner, createRestHandler } from '../src/index.js';
import { realGateway } from './real-gateway.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker'] };
const planner: Principal = { id: 'p', tenant: 'acme', roles: ['planner'] };

/** An upstream tool whose name is too long for OpenAI's and Anthropic's 64 characters. */
const LONG = `files__${'x'.repeat(70)}`;
const upstream: ToolDefinition = {
  manifest: {
    name: LONG,
    version: '1.0.0',
    description: 'Reads a file upstream.',
    provenance: 'mcp:files',
    risk: 'medium',
    permissions: [],
    input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
    output: {},
    tier: 'inprocess',
    timeoutMs: 1000,
  },
  handler: { invoke: async (args) => ({ read: args['path'] ?? null }) },
};

describe('tools.list formats and calls by alias, over tRPC and REST', () => {
  let router: ReturnType<typeof createAppRouter>;
  let audit: RecordingAuditSink;
  beforeEach(() => {
    audit = new RecordingAuditSink();
    const gateway = realGateway({
      tools: [calculatorTool, upstream],
      principals: [worker, planner],
      roles: { worker: ['*'], planner: ['calculator'] },
      audit,
      tmpPrefix: 'toolgate-api-exports-',
    });
    router = createAppRouter({ gateway, health: () => ({ ok: true, version: 'test', reasons: [], sources: [] }) });
  });
  const caller = (principal: Principal) => createCallerFactory(router)(createContextInner({ principal }));
  const rest = (query: string, principal: Principal = worker) => createRestHandler(router)({ method: 'GET', path: '/tools', query: new URLSearchParams(query), principal });

  it('answers without a format exactly as before: the manifests (REST adds the sources beside them, ADR 0067)', async () => {
    const manifests = await caller(worker).tools.list();
    expect(manifests).toEqual([calculatorTool.manifest, upstream.manifest]);
    expect(await rest('')).toEqual({ status: 200, body: { tools: manifests, sources: [] } });
  });

  it.each(['openai', 'anthropic', 'mcp', 'toolgate'] as const)('answers the same %s export over tRPC and REST', async (format) => {
    const exported = await caller(worker).tools.list({ format });
    expect(exported).toMatchObject({ format });
    expect(await rest(`format=${format}`)).toEqual({ status: 200, body: exported });
  });

  it('says which exported name stands for which tool, and keeps the array itself clean', async () => {
    const exported = await caller(worker).tools.list({ format: 'openai' });
    if (Array.isArray(exported)) throw new Error('expected an export');
    expect(exported.aliases).toEqual([{ alias: aliasOf(LONG), tool: LONG }]);
    expect(exported.tools).toEqual([
      { type: 'function', function: { name: 'calculator', description: calculatorTool.manifest.description, parameters: calculatorTool.manifest.input } },
      { type: 'function', function: { name: aliasOf(LONG), description: 'Reads a file upstream.', parameters: upstream.manifest.input } },
    ]);
  });

  it('shows a planner its tools only', async () => {
    for (const format of ['openai', 'anthropic', 'mcp'] as const) {
      const exported = await caller(planner).tools.list({ format });
      if (Array.isArray(exported)) throw new Error('expected an export');
      expect(exported.tools).toHaveLength(1);
      expect(exported.aliases).toEqual([]);
      expect(JSON.stringify(exported)).not.toContain('files__');
    }
  });

  it('invokes by alias over tRPC and REST; the audit names the real tool', async () => {
    const viaTrpc = await caller(worker).tools.invoke({ tool: aliasOf(LONG), args: { path: 'a.txt' } });
    expect(viaTrpc).toMatchObject({ ok: true, output: { read: 'a.txt' } });
    const viaRest = await createRestHandler(router)({ method: 'POST', path: '/tools/invoke', query: new URLSearchParams(), principal: worker, body: { tool: aliasOf(LONG), args: { path: 'b.txt' } } });
    expect(viaRest).toMatchObject({ status: 200, body: { ok: true, output: { read: 'b.txt' } } });
    expect(audit.records.map((r) => [r.event, r.tool])).toEqual([
      ['authorized', LONG],
      ['succeeded', LONG],
      ['authorized', LONG],
      ['succeeded', LONG],
    ]);
  });

  it('answers an alias of a tool the caller cannot see as TOOL_NOT_FOUND, over tRPC and REST', async () => {
    const viaTrpc = await caller(planner).tools.invoke({ tool: aliasOf(LONG), args: { path: 'a' } });
    expect(viaTrpc).toMatchObject({ ok: false, denial: { gate: 'lookup', code: 'TOOL_NOT_FOUND', message: `There is no tool named '${aliasOf(LONG)}'.` } });
    const viaRest = await createRestHandler(router)({ method: 'POST', path: '/tools/invoke', query: new URLSearchParams(), principal: planner, body: { tool: aliasOf(LONG), args: {} } });
    expect(viaRest.body).toMatchObject({ ok: false, denial: { code: 'TOOL_NOT_FOUND' } });
  });

  describe('bad input: an unknown format', () => {
    it.each(['', 'OpenAI', 'openai ', 'gemini', 'mcp;', '__proto__', 'x'.repeat(5000)])('%j is a 400 naming the accepted formats', async (format) => {
      const error = await caller(worker).tools.list({ format: format as never }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TRPCError);
      expect((error as TRPCError).code).toBe('BAD_REQUEST');
      const res = await rest(new URLSearchParams({ format }).toString());
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: { code: 'BAD_REQUEST' } });
      const message = (res.body as { error: { message: string } }).error.message;
      expect(message).toContain('format: must be one of toolgate, openai, anthropic, mcp');
      expect(message.length).toBeLessThan(300);
    });

    it('refuses a format given twice rather than pick one', async () => {
      const res = await rest('format=openai&format=mcp');
      expect(res).toEqual({ status: 400, body: { error: { code: 'BAD_REQUEST', message: "query parameter 'format' is given more than once" } } });
    });

    it('refuses fields beside format and a format of the wrong type over tRPC', async () => {
      for (const input of [{ format: 'openai', extra: 1 }, { format: 1 }, { format: ['openai'] }, 'openai']) {
        const error = await caller(worker).tools.list(input as never).catch((e: unknown) => e);
        expect((error as TRPCError).code).toBe('BAD_REQUEST');
      }
    });
  });
});
