import { Client as ModernClient } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectMcp, type Harness } from './e2e-harness.js';

// Relayed requests and tool results are arbitrary JSON that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

/** The client generations a relay test runs against: the 2026-07-28 revision and the two 2025-era ones. */
export type Generation = 'modern (v2, 2026-07-28)' | 'legacy (v2, 2025-11-25)' | 'legacy (sdk 1.x, 2025-era)';
export const GENERATIONS: Generation[] = ['modern (v2, 2026-07-28)', 'legacy (v2, 2025-11-25)', 'legacy (sdk 1.x, 2025-era)'];

/** What the test's client plays: the user who answers elicitations and the model that samples. */
export interface Answers {
  elicit?: (params: any) => any | Promise<any>;
  sample?: (params: any) => any | Promise<any>;
  /** The elicitation capability declared when `elicit` is given (both modes unless told). */
  elicitation?: { form?: Record<string, never>; url?: Record<string, never> };
}

export interface RelayClient {
  callTool(name: string, args: Record<string, unknown>, options?: { signal?: AbortSignal; onprogress?: (p: any) => void }): Promise<any>;
  close(): Promise<void>;
}

/** A client of the generation that declares (and answers) exactly the capabilities given. */
export async function connectAnswering(h: Harness, token: string, generation: Generation, answers: Answers = {}): Promise<RelayClient> {
  const capabilities = {
    ...(answers.elicit ? { elicitation: answers.elicitation ?? { form: {}, url: {} } } : {}),
    ...(answers.sample ? { sampling: {} } : {}),
  };
  if (generation === 'legacy (sdk 1.x, 2025-era)') {
    const client = new LegacyClient({ name: 'relay-v1', version: '1.0.0' }, { capabilities });
    if (answers.elicit) client.setRequestHandler(ElicitRequestSchema, async (request) => answers.elicit?.(request.params));
    if (answers.sample) client.setRequestHandler(CreateMessageRequestSchema, async (request) => answers.sample?.(request.params));
    await connectMcp(h, token, client);
    return {
      callTool: (name, args, options = {}) => client.callTool({ name, arguments: args }, undefined, { timeout: 60_000, ...options }),
      close: () => client.close(),
    };
  }
  const client = new ModernClient(
    { name: 'relay-v2', version: '1.0.0' },
    {
      capabilities,
      ...(generation === 'modern (v2, 2026-07-28)' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
    } as any,
  );
  if (answers.elicit) client.setRequestHandler('elicitation/create', async (request: any) => answers.elicit?.(request.params));
  if (answers.sample) client.setRequestHandler('sampling/createMessage', async (request: any) => answers.sample?.(request.params));
  await connectMcp(h, token, client);
  return {
    callTool: (name, args, options = {}) => client.callTool({ name, arguments: args }, { timeout: 60_000, ...options } as any),
    close: () => client.close(),
  };
}

/**
 * The header lines of a raw POST to `/mcp` in `revision` by the bearer of `token`, as an SDK
 * client sends them, with `extra` lines after (a session id, the 2026-07-28 routing headers).
 */
export function mcpPostHeaders(h: Harness, token: string, revision: string, extra: [string, string][] = []): [string, string][] {
  return [
    ['host', `127.0.0.1:${h.server.port}`],
    ['authorization', `Bearer ${token}`],
    ['content-type', 'application/json'],
    ['accept', 'application/json, text/event-stream'],
    ['mcp-protocol-version', revision],
    ...extra,
  ];
}

/** An upstream stdio MCP server the operator trusts as low risk, so no approval stands between a test and the relay. */
export function lowRiskServer(name: string, args: string[], extra: object = {}) {
  return { name, command: process.execPath, args, env: {}, tier: 'unisolated', risk: 'low', ...extra };
}

export const textOf = (result: any): string => (result.content ?? []).map((c: any) => c.text ?? '').join('\n');

/** The text an upstream tool answered, out of the output Toolgate wraps it in. */
export const upstreamText = (result: any): string => {
  try {
    return textOf(JSON.parse(textOf(result)));
  } catch {
    return textOf(result);
  }
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
