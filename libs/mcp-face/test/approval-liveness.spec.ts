import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject, Principal, TenantWorkspaces, ToolDefinition } from '@toolgate/contracts';
import type { Gateway } from '@toolgate/gateway';
import { ManualClock, RecordingAuditSink, timeLessCpuWait } from '@toolgate/testing';
import { calculatorTool } from '@toolgate/tool-calculator';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpFace, MAX_HELD_PER_PRINCIPAL, type McpFace, type McpFaceGateway } from '../src/index.js';
import { realGateway } from './real-gateway.js';

const worker: Principal = { id: 'w', tenant: 'acme', roles: ['worker'] };
const approver: Principal = { id: 'boss', tenant: 'acme', roles: ['approver'] };
const KEY = Buffer.alloc(32, 9);
const MCP_URL = 'http://127.0.0.1/mcp';
/** The gateway's default approval lifetime. */
const TTL_MS = 15 * 60_000;

const riskyCalc: ToolDefinition = { ...calculatorTool, manifest: { ...calculatorTool.manifest, name: 'risky_calc', risk: 'high' } };
/** High-risk tools named `bash` and `git`, whose approvals name workspace files (the desk reads and hashes them for people). */
const echo: ToolDefinition['handler'] = { invoke: async (args: JsonObject) => ({ ran: args }) };
const bashLike: ToolDefinition = {
  manifest: { ...calculatorTool.manifest, name: 'bash', risk: 'high', output: {}, input: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false } },
  handler: echo,
};
const gitLike: ToolDefinition = {
  manifest: { ...calculatorTool.manifest, name: 'git', risk: 'high', output: {}, input: { type: 'object', properties: { args: { type: 'array', items: { type: 'string' } } }, required: ['args'], additionalProperties: false } },
  handler: echo,
};

type Kind = 'modern-url' | 'legacy-url' | 'modern-plain' | 'legacy-plain';
interface Outcome {
  readonly isError?: boolean;
  readonly content: { type: string; text: string }[];
  readonly structuredContent?: Record<string, unknown>;
}
interface TestClient {
  call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<Outcome>;
  /** Approval ids of the URL elicitations the client was shown, in order. */
  readonly shown: string[];
  close(): Promise<void>;
}
/** What the test's human does when shown the approval page. */
type Human = (approvalId: string) => Promise<'accept' | 'decline'>;

const idOfUrl = (url: string) => decodeURIComponent(url.slice(url.lastIndexOf('/') + 1));
/** The approval request a refusal names (`Approval request '<id>'`). */
const namedIn = (outcome: Outcome) => /Approval request '([^']+)'/.exec(outcome.content[0]?.text ?? '')?.[1];

async function connect(face: McpFace, kind: Kind, human: Human = async () => 'accept'): Promise<TestClient> {
  const fetch = (input: string | URL | Request, init?: RequestInit) => face.handle(new Request(input, init), worker);
  const shown: string[] = [];
  const answer = async (params: { url?: string }) => {
    const id = idOfUrl(String(params.url));
    shown.push(id);
    return { action: await human(id) };
  };
  if (kind.startsWith('legacy')) {
    const client = new LegacyClient({ name: 'legacy', version: '1' }, { capabilities: kind === 'legacy-url' ? { elicitation: { url: {} } } : {} });
    if (kind === 'legacy-url') client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params as never));
    await client.connect(new LegacyTransport(new URL(MCP_URL), { fetch }));
    return {
      shown,
      call: (name, args, signal) => client.callTool({ name, arguments: args }, undefined, { timeout: 30_000, ...(signal ? { signal } : {}) }) as Promise<Outcome>,
      close: () => client.close(),
    };
  }
  const client = new ModernClient(
    { name: 'modern', version: '1' },
    { capabilities: kind === 'modern-url' ? { elicitation: { url: {} } } : {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  if (kind === 'modern-url') client.setRequestHandler('elicitation/create', (request) => answer(request.params as never));
  await client.connect(new ModernTransport(new URL(MCP_URL), { fetch }));
  return {
    shown,
    call: (name, args, signal) => client.callTool({ name, arguments: args }, { timeout: 30_000, ...(signal ? { signal } : {}) }) as Promise<Outcome>,
    close: () => client.close(),
  };
}

/** The real gateway as the face sees it, counting approval reads and running a hook after each `invoke`. */
function observed(gateway: Gateway, afterInvoke: () => void = () => undefined): McpFaceGateway & { reads: number } {
  const seen = {
    reads: 0,
    listTools: (p: Principal) => gateway.listTools(p),
    invoke: async (...a: Parameters<Gateway['invoke']>) => {
      const result = await gateway.invoke(...a);
      afterInvoke();
      return result;
    },
    explain: (...a: Parameters<Gateway['explain']>) => gateway.explain(...a),
    requestApproval: (...a: Parameters<Gateway['requestApproval']>) => gateway.requestApproval(...a),
    getApproval: (...a: Parameters<Gateway['getApproval']>) => {
      seen.reads++;
      return gateway.getApproval(...a);
    },
  };
  return seen;
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of opened.splice(0).reverse()) await thing.close().catch(() => undefined);
});

function setup(options: { waitMs: number; afterInvoke?: () => void; workspaces?: (real: TenantWorkspaces) => TenantWorkspaces }) {
  const clock = new ManualClock(Date.now());
  const audit = new RecordingAuditSink();
  const gateway = realGateway({
    tools: [riskyCalc, bashLike, gitLike],
    principals: [worker, approver],
    roles: { worker: ['*'], approver: [] },
    audit,
    clock,
    tmpPrefix: 'toolgate-mcp-liveness-',
    ...(options.workspaces ? { workspaces: options.workspaces } : {}),
  });
  const faceGateway = observed(gateway, options.afterInvoke);
  const face = createMcpFace({
    gateway: faceGateway,
    version: 't',
    maxBodyBytes: 1 << 20,
    approvalUrl: (id) => `https://toolgate.example/approvals/${encodeURIComponent(id)}`,
    approvalWaitMs: options.waitMs,
    stateKey: KEY,
    clock,
  });
  opened.push(face);
  const open = async (kind: Kind, human?: Human) => {
    const client = await connect(face, kind, human);
    opened.push(client);
    return client;
  };
  const runs = () => audit.records.filter((r) => r.event === 'succeeded').length;
  return { clock, gateway, faceGateway, open, runs };
}

describe('an approval request that expired undecided (liveness)', () => {
  describe.each(['modern-plain', 'legacy-plain'] as const)('a %s client told to retry', (kind) => {
    it('is pointed at a new request once the one it was given expired, and at that one while it is open', async () => {
      const { clock, open, runs } = setup({ waitMs: 0 });
      const client = await open(kind);
      const first = namedIn(await client.call('risky_calc', { expression: '2+3' }));
      expect(first).toBeDefined();
      // Exactly at its expiresAt, and long after: never the expired one again.
      for (const step of [TTL_MS, 3 * TTL_MS]) {
        clock.advance(step);
        const again = await client.call('risky_calc', { expression: '2+3' });
        expect(again.isError).toBe(true);
        const named = namedIn(again);
        expect(named).toBeDefined();
        expect(named).not.toBe(first);
        expect(again.content[0]!.text).not.toContain(String(first));
        // Still open: the next call is pointed at the same new one, not a third.
        expect(namedIn(await client.call('risky_calc', { expression: '2+3' }))).toBe(named);
      }
      expect(runs()).toBe(0);
    });
  });

  describe.each(['modern-url', 'legacy-url'] as const)('a %s client whose request expired while it was shown', (kind) => {
    it('is shown a new request on its next call, which an approver can approve and which then runs', async () => {
      let round = 0;
      const ctx = setup({ waitMs: 3000 });
      const client = await ctx.open(kind, async (id) => {
        round++;
        // First page: nobody decides and the request expires. Second page: an approver approves it.
        if (round === 1) ctx.clock.advance(TTL_MS);
        else setTimeout(() => void ctx.gateway.decideApproval(approver, id, { approve: true }), 100);
        return 'accept';
      });
      const expired = await client.call('risky_calc', { expression: '2+3' });
      expect(expired.isError).toBe(true);
      expect(expired.content[0]!.text).toContain('APPROVAL_EXPIRED');
      const done = await client.call('risky_calc', { expression: '2+3' });
      expect(client.shown).toHaveLength(2);
      expect(client.shown[1]).not.toBe(client.shown[0]);
      expect(done.isError).toBeFalsy();
      expect(done.structuredContent).toEqual({ result: 5 });
      expect(ctx.runs()).toBe(1);
    });
  });

  it('makes a new request when the one the gate named expires before the flow uses it', async () => {
    let expireNext = false;
    const ctx = setup({
      waitMs: 0,
      afterInvoke: () => {
        // Time passes between the gateway's refusal naming the pending request and the flow acting on it.
        if (expireNext) ctx.clock.advance(TTL_MS);
        expireNext = false;
      },
    });
    const client = await ctx.open('modern-plain');
    const first = namedIn(await client.call('risky_calc', { expression: '2+3' }));
    expireNext = true;
    const second = namedIn(await client.call('risky_calc', { expression: '2+3' }));
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect((await ctx.gateway.getApproval(worker, String(second)))?.expiresAt).toBeGreaterThan(ctx.clock.now());
  });
});

describe('the held-call cap, as a 2026-07-28 retry sees it', () => {
  it(`says the principal already has ${MAX_HELD_PER_PRINCIPAL} calls waiting, not that nobody decided in time`, async () => {
    const { open, runs } = setup({ waitMs: 20_000 });
    const client = await open('modern-url');
    const stop = new AbortController();
    const held = Array.from({ length: MAX_HELD_PER_PRINCIPAL }, (_, i) => client.call('risky_calc', { expression: `${i}+1` }, stop.signal).catch(() => undefined));
    await expect.poll(() => client.shown.length, { timeout: 5000 }).toBe(MAX_HELD_PER_PRINCIPAL);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { value: extra, ms } = await timeLessCpuWait(() => client.call('risky_calc', { expression: '100+1' }));
    expect(ms).toBeLessThan(1500);
    expect(extra.isError).toBe(true);
    const text = extra.content[0]!.text;
    expect(text).toContain(`You already have ${MAX_HELD_PER_PRINCIPAL} calls waiting for approvals`);
    expect(text).not.toContain('No approver decided');
    // What to do next: the request stays pending, and calling again once it is approved runs it.
    expect(text).toMatch(/Approval request '[^']+' \(payload sha256:[0-9a-f]+\) is pending/);
    expect(text).toContain('call this tool again with the same arguments');
    stop.abort();
    await Promise.all(held);
    expect(runs()).toBe(0);
  });
});

describe('polling a held bash/git call (CPU and disk amplification)', () => {
  describe.each(['modern-url', 'legacy-url'] as const)('a %s client', (kind) => {
    it.each([
      ['bash', { command: 'scripts/deploy.sh' }],
      ['git', { args: ['add', '--', 'scripts/deploy.sh', 'big.bin'] }],
    ] as const)('reads the status of a pending %s approval on every poll without opening the workspace', async (tool, args) => {
      const seen = { prepared: 0 };
      let real: TenantWorkspaces | undefined;
      const ctx = setup({
        waitMs: 2500,
        workspaces: (fs) => {
          real = fs;
          return {
            created: (tenant) => fs.created(tenant),
            prepare: async (tenant) => {
              seen.prepared++;
              return fs.prepare(tenant);
            },
          };
        },
      });
      // The files the arguments name, as a person reading the approval sees them hashed: a script and 4 MiB of data.
      const workspace = await (real as TenantWorkspaces).prepare('acme');
      mkdirSync(join(workspace, 'scripts'), { recursive: true });
      writeFileSync(join(workspace, 'scripts', 'deploy.sh'), 'echo safe\n');
      writeFileSync(join(workspace, 'big.bin'), Buffer.alloc(4 << 20, 1));
      const client = await ctx.open(kind, async () => {
        // Counting starts once the request is shown: from here on the call is only held and polled.
        seen.prepared = 0;
        ctx.faceGateway.reads = 0;
        return 'accept';
      });
      const result = await client.call(tool, args);
      expect(result.isError).toBe(true);
      expect(result.content[0]!.text).toContain('No approver decided within 3 s');
      // Several polls happened while it was held, and none of them opened the workspace.
      expect(ctx.faceGateway.reads).toBeGreaterThanOrEqual(3);
      expect(seen.prepared).toBe(0);
      // The same approval read for a person still shows its files.
      const full = await ctx.gateway.getApproval(approver, String(client.shown[0]));
      expect(full?.namedFiles?.map((f) => f.path)).toContain('scripts/deploy.sh');
      expect(seen.prepared).toBe(1);
    });
  });
});
