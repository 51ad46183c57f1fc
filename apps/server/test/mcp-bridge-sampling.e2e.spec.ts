import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { AuditRecord } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

// Results are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

const CLI = resolve(__dirname, '../../cli/bin/toolgate.mjs');
const ALICE = 'alice-token-bridge-sampling-0123456789abcdef';
const OLGA = 'olga-token-bridge-sampling-0123456789abcdef';
const require = createRequire(import.meta.url);
const EVERYTHING = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const TOOL = 'every__trigger_sampling_request';

/** Which desktop client runs the bridge: the v2 SDK in each era, and the 1.x SDK today's desktop apps ship. */
type Desktop = 'v2, 2025-11-25 (initialize)' | 'v2, 2026-07-28 (server/discover)' | 'sdk 1.x, 2025-era';

interface DesktopClient {
  callTool(name: string, args: Record<string, unknown>): Promise<any>;
  stderr(): string;
  close(): Promise<void>;
}

/**
 * Launches `toolgate mcp` as a desktop client would (the token in its environment), declaring
 * sampling and answering it with `sample` exactly when `sample` is given.
 */
async function desktop(url: string, kind: Desktop, sample?: (params: any) => unknown): Promise<DesktopClient> {
  const spawn = { command: process.execPath, args: [CLI, 'mcp', '--url', url], env: { PATH: process.env['PATH'] ?? '', TOOLGATE_TOKEN: ALICE }, stderr: 'pipe' as const };
  const capabilities = sample ? { sampling: {} } : {};
  const lines: string[] = [];
  if (kind === 'sdk 1.x, 2025-era') {
    const transport = new LegacyStdioTransport(spawn);
    (transport.stderr as Readable).on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
    const client = new LegacyClient({ name: 'desktop-v1', version: '1.0.0' }, { capabilities });
    if (sample) client.setRequestHandler(CreateMessageRequestSchema, async (request) => sample(request.params) as any);
    await client.connect(transport);
    return {
      callTool: (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }),
      stderr: () => lines.join(''),
      close: () => client.close(),
    };
  }
  const transport = new StdioClientTransport(spawn);
  (transport.stderr as Readable).on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
  const client = new Client(
    { name: 'desktop-v2', version: '1.0.0' },
    { capabilities, ...(kind === 'v2, 2026-07-28 (server/discover)' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}) } as any,
  );
  if (sample) client.setRequestHandler('sampling/createMessage', async (request: any) => sample(request.params) as any);
  await client.connect(transport);
  return {
    callTool: (name, args) => client.callTool({ name, arguments: args }, { timeout: 60_000 } as any),
    stderr: () => lines.join(''),
    close: () => client.close(),
  };
}

const textOf = (result: any): string => (result.content ?? []).map((c: any) => c.text ?? '').join('\n');

describe('toolgate mcp relays an upstream tool\'s sampling request to the desktop client (ADR 0054)', { timeout: 180_000 }, () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      {},
      {
        mcpServers: {
          // Trusted as low risk by the operator, so no approval stands between the test and the relay.
          servers: [{ name: 'every', command: process.execPath, args: [EVERYTHING, 'stdio'], env: {}, tier: 'unisolated', risk: 'low' }],
        },
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'olga', token: OLGA, tenant: 'acme', roles: ['operator'] },
          ],
          roles: { worker: ['*'], operator: [] },
          tenants: { acme: { tools: ['*'], grants: [{ type: 'exec', scope: 'mcp:every' }] } },
        },
      },
    );
    // Discovery of the upstream server runs after the start; wait until its sampling tool is listed.
    const listed = async () => ((await h.call('/api/v1/tools', { token: ALICE })).body.tools as any[]).some((t) => t.name === TOOL);
    for (let i = 0; i < 300 && !(await listed()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await listed()).toBe(true);
  }, 60_000);
  afterAll(async () => h?.stop());

  /** The last record of the sampling tool's newest call: the one that says what it relayed. */
  async function lastRecord(): Promise<AuditRecord | undefined> {
    const audit = await h.call('/api/v1/audit?limit=500', { token: OLGA });
    return (audit.body as AuditRecord[]).filter((r) => r.tool === TOOL && r.principal === 'alice').at(-1);
  }

  describe.each<Desktop>(['v2, 2025-11-25 (initialize)', 'sdk 1.x, 2025-era'])('a desktop client on the %s', (kind) => {
    it("that declared sampling is asked the upstream's request, its model's answer is the tool's output, and the audit says it was relayed", async () => {
      const asked: any[] = [];
      const d = await desktop(h.server.url, kind, (params) => {
        asked.push(params);
        return { role: 'assistant', model: 'desktop-model', content: { type: 'text', text: `a sampled haiku through ${kind}` } };
      });
      try {
        const result = await d.callTool(TOOL, { prompt: 'write a haiku about gates', maxTokens: 20 });
        expect(result.isError).toBeFalsy();
        expect(textOf(result)).toContain(`a sampled haiku through ${kind}`);
        expect(asked).toHaveLength(1);
        expect(asked[0]).toMatchObject({ maxTokens: 20, messages: [{ role: 'user', content: { type: 'text', text: expect.stringContaining('write a haiku about gates') } }] });
      } finally {
        await d.close();
      }
      expect(await lastRecord()).toMatchObject({ event: 'succeeded', detail: 'relayed to the caller: sampling 1: 1 answered' });
    });

    it('that declared no sampling is never asked: the call fails saying so, and the audit records the refusal', async () => {
      const d = await desktop(h.server.url, kind);
      try {
        const result = await d.callTool(TOOL, { prompt: 'a haiku', maxTokens: 20 });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/did not declare sampling/);
      } finally {
        await d.close();
      }
      const record = await lastRecord();
      expect(record).toMatchObject({ event: 'failed', code: 'EXECUTION_FAILED' });
      expect(record?.detail).toMatch(/; relayed to the caller: sampling 1: 0 answered, 1 refused \(the calling client did not declare sampling\)$/);
    });

    describe('hostile or failing answers from the desktop client', () => {
      it.each([
        ['an error', () => Promise.reject(new Error('the user refused to sample'))],
        ['an answer without content', () => ({ role: 'assistant', model: 'm' })],
        ['an answer with an unknown role', () => ({ role: 'system', model: 'm', content: { type: 'text', text: 'x' } })],
        ['an answer that is not an object', () => 'just text'],
      ])('%s fails the call, counted as failed in the audit, and the bridge keeps serving', async (_name, answer) => {
        const d = await desktop(h.server.url, kind, answer);
        try {
          const started = performance.now();
          const result = await d.callTool(TOOL, { prompt: 'a haiku', maxTokens: 20 });
          expect(result.isError).toBe(true);
          // Answered at once, not after the server's 120 s hold for a retry that never comes (ADR 0054).
          expect(performance.now() - started).toBeLessThan(15_000);
          const record = await lastRecord();
          expect(record).toMatchObject({ event: 'failed', code: 'EXECUTION_FAILED' });
          expect(record?.detail).toMatch(/; relayed to the caller: sampling 1: 0 answered, 1 failed$/);
          // The same bridge still serves the next call.
          expect((await d.callTool('calculator', { expression: '6*7' })).structuredContent).toEqual({ result: 42 });
        } finally {
          await d.close();
        }
      });
    });
  });

  it('a 2026-07-28 desktop client that declared sampling is declared none upstream (an input_required cannot be handed on) and is never asked', async () => {
    let asked = 0;
    const d = await desktop(h.server.url, 'v2, 2026-07-28 (server/discover)', () => {
      asked += 1;
      return { role: 'assistant', model: 'm', content: { type: 'text', text: 'should not be asked' } };
    });
    try {
      const result = await d.callTool(TOOL, { prompt: 'a haiku', maxTokens: 20 });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/did not declare sampling/);
      expect(asked).toBe(0);
    } finally {
      await d.close();
    }
    expect((await lastRecord())?.detail).toMatch(/; relayed to the caller: sampling 1: 0 answered, 1 refused \(the calling client did not declare sampling\)$/);
  });
});
