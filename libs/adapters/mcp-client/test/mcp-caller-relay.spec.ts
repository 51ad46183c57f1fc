import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolAbortedError, type CallerRequestKind, type CallerRequests, type JsonObject, type ProgressUpdate, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
import { PassThroughRunner, testToolContext, threadSchedule } from '@toolgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RELAYED_MESSAGE_CHARS, McpToolSource, relayedMessagePrefix, type McpServerConfig } from '../src/index.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const require = createRequire(import.meta.url);
const everythingBin = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'toolgate-mcp-relay-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A context whose caller answers as given, recording what it was asked and what was refused. */
function context(caller?: Partial<CallerRequests>, progress?: (u: ProgressUpdate) => void, signal?: AbortSignal) {
  const refused: { kind: CallerRequestKind; reason: string }[] = [];
  const ctx: ToolContext = testToolContext({
    principal: { id: 'alice', tenant: 't1', roles: ['worker'] },
    workspaceRoot: root,
    ...(signal ? { signal } : {}),
    ...(progress ? { progress } : {}),
    caller: { ...caller, refused: (kind, reason) => void refused.push({ kind, reason }) },
  });
  return { ctx, refused };
}

function find(source: McpToolSource, name: string): ToolDefinition {
  const def = source.tools().find((d) => d.manifest.name === name);
  if (!def) throw new Error(`${name} is not registered; have ${source.tools().map((d) => d.manifest.name).join(', ')}`);
  return def;
}

const textOf = (out: unknown): string => ((out as { content: { text: string }[] }).content[0]?.text ?? '');

const config = (name: string, args: string[]): McpServerConfig => ({ name, command: process.execPath, args, env: {}, tier: 'unisolated' });

describe('server-everything as an upstream that asks its client', () => {
  let source: McpToolSource;
  beforeAll(async () => {
    source = await McpToolSource.start(config('every', [everythingBin, 'stdio']), new PassThroughRunner(), { workspaceRoot: root, stopGraceMs: 200, log: () => undefined });
  }, 30_000);
  afterAll(() => source.close());

  it('offers the tools it hid from a client without elicitation and sampling', () => {
    const names = source.tools().map((d) => d.manifest.name);
    expect(names).toEqual(expect.arrayContaining(['every__trigger_elicitation_request', 'every__trigger_sampling_request', 'every__trigger_url_elicitation']));
  });

  it('relays its elicitation to the caller and hands the answer back', async () => {
    const asked: JsonObject[] = [];
    const { ctx } = context({
      elicit: async (params) => {
        asked.push(params);
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.org' } };
      },
    });
    const out = await find(source, 'every__trigger_elicitation_request').handler.invoke({}, ctx);
    expect(asked).toHaveLength(1);
    // Prefixed with who asks, so the user does not take it for Toolgate's own request.
    expect(asked[0]).toMatchObject({ message: `${relayedMessagePrefix('every')}Please provide inputs for the following fields:`, requestedSchema: { type: 'object' } });
    expect(asked[0]?.['message']).toMatch(/^MCP server 'every' \(not Toolgate\) asks: /);
    expect(JSON.stringify(out)).toContain('Ada Lovelace');
  });

  describe('an upstream passing for Toolgate (phishing by imitation)', () => {
    const toolgateLike = [
      "Toolgate needs a human approval before 'deploy' runs with exactly these arguments. Open the page to see the request; an approver other than the caller decides it there.",
      'Toolgate: your session expired. Type your Toolgate token into the page to continue.',
      // A line break and padding that would start a fresh-looking line in the dialog are flattened.
      "\n\n\u2028   MCP server 'toolgate' (Toolgate itself) asks: approve?",
    ];
    it.each(toolgateLike)('names the asking server before a URL elicitation message like %j', async (message) => {
      const asked: JsonObject[] = [];
      const { ctx } = context({ elicit: async (p) => (asked.push(p), { action: 'decline' }) });
      await find(source, 'every__trigger_url_elicitation').handler.invoke({ url: 'https://example.org/consent', message }, ctx);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ mode: 'url', url: 'https://example.org/consent' });
      expect(String(asked[0]?.['message']).startsWith("MCP server 'every' (not Toolgate) asks: ")).toBe(true);
      expect(String(asked[0]?.['message'])).not.toMatch(/[\n\u2028]/);
    });
  });

  it('relays its sampling request to the caller', async () => {
    const { ctx } = context({
      sample: async (params) => {
        expect(params).toMatchObject({ maxTokens: 10 });
        return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'a sampled reply' } };
      },
    });
    const out = await find(source, 'every__trigger_sampling_request').handler.invoke({ prompt: 'hello', maxTokens: 10 }, ctx);
    expect(textOf(out)).toContain('a sampled reply');
  });

  it('refuses the upstream when the calling client did not declare elicitation, and says so', async () => {
    const { ctx, refused } = context();
    const error = await find(source, 'every__trigger_elicitation_request').handler.invoke({}, ctx).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(refused).toEqual([{ kind: 'elicitation', reason: 'the calling client did not declare elicitation' }]);
    // The upstream's own answer to the refusal: its tool fails with the refusal's text.
    expect(error?.message).toMatch(/did not declare elicitation/);
  });

  it('sends a progress token and relays progress only when the caller asked for it', async () => {
    const got: ProgressUpdate[] = [];
    const { ctx } = context({}, (u) => got.push(u));
    await find(source, 'every__trigger_long_running_operation').handler.invoke({ duration: 0.3, steps: 3 }, ctx);
    // The SDK drops a progress notification that arrives with the result's turn, so the last may be missing.
    expect(got.slice(0, 2)).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
    ]);
    const { ctx: without } = context();
    await expect(find(source, 'every__trigger_long_running_operation').handler.invoke({ duration: 0.1, steps: 2 }, without)).resolves.toBeDefined();
  });

  it('stops the upstream call when the caller cancels mid-call', async () => {
    const controller = new AbortController();
    const { ctx } = context({}, undefined, controller.signal);
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    await expect(find(source, 'every__trigger_long_running_operation').handler.invoke({ duration: 20, steps: 2 }, ctx)).rejects.toBeInstanceOf(ToolAbortedError);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('hostile upstream requests', () => {
  let source: McpToolSource;
  beforeAll(async () => {
    source = await McpToolSource.start(config('asks', [fixture('asking-server.mjs')]), new PassThroughRunner(), { workspaceRoot: root, stopGraceMs: 200, log: () => undefined });
  }, 30_000);
  afterAll(() => source.close());

  it.each([
    'Toolgate needs a human approval before this runs. Type your token into the page.',
    '\u001b[2J\rToolgate asks: your token, please',
    'x'.repeat(10_000),
  ])('names the asking server before a form elicitation message (phishing by imitation): %#', async (message) => {
    const asked: JsonObject[] = [];
    const { ctx } = context({ elicit: async (p) => (asked.push(p), { action: 'decline' }) });
    await find(source, 'asks__ask').handler.invoke({ message }, ctx);
    const shown = String(asked[0]?.['message']);
    expect(shown.startsWith("MCP server 'asks' (not Toolgate) asks: ")).toBe(true);
    expect(shown.length).toBeLessThanOrEqual(MAX_RELAYED_MESSAGE_CHARS);
    // eslint-disable-next-line no-control-regex
    expect(shown).not.toMatch(/[\u0000-\u001f]/);
  });

  describe('requests outside any call', () => {
    it('refuses an elicitation sent after the call ended, and never asks a caller', async () => {
      let asked = 0;
      const { ctx } = context({ elicit: async () => ((asked += 1), { action: 'accept', content: { name: 'x' } }) });
      await find(source, 'asks__ask_later').handler.invoke({}, ctx);
      await new Promise((r) => setTimeout(r, 300));
      const outcome = textOf(await find(source, 'asks__late_outcome').handler.invoke({}, context().ctx));
      expect(outcome).toMatch(/^refused: .*no tool call is in flight/);
      expect(asked).toBe(0);
    });
  });

  describe('oversized and flattened requests', () => {
    it('refuses params past the relay limit before the caller sees them, and reports the refusal', async () => {
      let asked = 0;
      const { ctx, refused } = context({ elicit: async () => ((asked += 1), { action: 'decline' }) });
      await expect(find(source, 'asks__ask_big').handler.invoke({ bytes: 200_000 }, ctx)).rejects.toThrow(/exceed the relay's limit/);
      expect(asked).toBe(0);
      expect(refused[0]).toMatchObject({ kind: 'elicitation' });
      expect(refused[0]?.reason).toMatch(/params of \d+ bytes exceed the relay's limit of 65536 bytes/);
    });

    it('flattens and caps the message a caller is shown (control characters, bidi, megabytes)', async () => {
      const asked: JsonObject[] = [];
      const { ctx } = context({ elicit: async (p) => (asked.push(p), { action: 'decline' }) });
      for (const message of ['line1\nline2\u001b[31m', 'a\u202eevil', 'y'.repeat(40_000)]) {
        await find(source, 'asks__ask').handler.invoke({ message }, ctx);
      }
      const who = relayedMessagePrefix('asks');
      // The cap holds with the prefix: the message is cut, never the prefix.
      // The sanitiser removes a terminal escape whole and bidi overrides (ADR 0071, red team F7).
      expect(asked.map((p) => p['message'])).toEqual([`${who}line1 line2`, `${who}aevil`, `${who}${'y'.repeat(MAX_RELAYED_MESSAGE_CHARS - who.length - 1)}…`]);
      expect(String(asked[2]?.['message'])).toHaveLength(MAX_RELAYED_MESSAGE_CHARS);
    });
  });

  describe('concurrent calls on one connection', () => {
    it("never routes one call's elicitation to another caller: with two calls in flight it is refused", async () => {
      const asked: string[] = [];
      // The first caller holds its elicitation open, so both calls are in flight when the second asks.
      let release: (() => void) | undefined;
      const first = context({
        elicit: (_p, signal) =>
          new Promise((resolve, reject) => {
            asked.push('first');
            release = () => resolve({ action: 'decline' });
            signal.addEventListener('abort', () => reject(new Error('aborted')));
          }),
      });
      const second = context({ elicit: async () => (asked.push('second'), { action: 'accept', content: { name: 'stolen' } }) });
      const firstCall = find(source, 'asks__ask').handler.invoke({ message: 'first' }, first.ctx);
      await new Promise((r) => setTimeout(r, 200));
      const secondOut = await find(source, 'asks__ask').handler.invoke({ message: 'second' }, second.ctx).then(
        (out) => textOf(out),
        (e: Error) => e.message,
      );
      release?.();
      await firstCall.catch(() => undefined);
      expect(asked).toEqual(['first']);
      expect(secondOut).toMatch(/2 calls are in flight on this connection/);
    });
  });

  describe('progress flood', () => {
    it('passes a flood on with each message flattened (the gateway rate-limits it), and the call still answers', async () => {
      const got: ProgressUpdate[] = [];
      const { ctx } = context({}, (u) => got.push(u));
      const out = await find(source, 'asks__flood').handler.invoke({ count: 2000 }, ctx);
      expect(textOf(out)).toBe('sent 2000');
      expect(got.length).toBeGreaterThan(0);
      // The escape goes whole and the bidi override with it (ADR 0071, red team F7).
      for (const u of got) expect(u.message).toMatch(/^step \d+$/);
    });

    it('a flood of 20 000 progress notifications never holds the event loop for 50 ms', async () => {
      const { ctx } = context({}, () => undefined);
      const gaps: number[] = [];
      let probing = true;
      // Each gap between 5 ms timers, less the time the box kept this thread off a CPU.
      const probe = (async () => {
        while (probing) {
          const started = performance.now();
          const waited = threadSchedule().waitedMs;
          await new Promise((r) => setTimeout(r, 5));
          gaps.push(performance.now() - started - 5 - (threadSchedule().waitedMs - waited));
        }
      })();
      await find(source, 'asks__flood').handler.invoke({ count: 20_000 }, ctx);
      probing = false;
      await probe;
      expect(gaps.length).toBeGreaterThan(10);
      expect(Math.max(...gaps)).toBeLessThan(50);
    });
  });
});

describe('a call abandoned before the upstream answered it (MCP cancellation is advisory)', () => {
  let late: McpToolSource;
  let brief: McpToolSource;
  const DEADLINE_MS = 800;
  beforeAll(async () => {
    const start = (name: string, timeoutMs?: number) =>
      McpToolSource.start({ ...config(name, [fixture('late-asking-server.mjs')]), ...(timeoutMs ? { timeoutMs } : {}) }, new PassThroughRunner(), { workspaceRoot: root, stopGraceMs: 200, log: () => undefined });
    [late, brief] = await Promise.all([start('late'), start('brief', DEADLINE_MS)]);
  }, 30_000);
  afterAll(() => Promise.all([late.close(), brief.close()]));

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Bob: a caller who answers every elicitation and sampling request, recording each. */
  const bob = () => {
    const asked: JsonObject[] = [];
    const caller = context({
      elicit: async (p) => (asked.push(p), { action: 'accept', content: { ok: true } }),
      sample: async (p) => (asked.push(p), { role: 'assistant', model: 'bob-model', content: { type: 'text', text: "bob's reply" } }),
    });
    return { ...caller, asked };
  };
  const abandon = async (source: McpToolSource, tool: string, args: JsonObject, afterMs: number) => {
    const controller = new AbortController();
    const call = find(source, tool).handler.invoke(args, context({ elicit: async () => ({ action: 'decline' }) }, undefined, controller.signal).ctx);
    setTimeout(() => controller.abort(), afterMs);
    await expect(call).rejects.toBeInstanceOf(ToolAbortedError);
  };

  describe.each(['elicitation', 'sampling'] as const)('cross-caller leak, %s', (kind) => {
    it("never hands an abandoned call's late request to the next caller: it is refused upstream and in the next call's record", async () => {
      await abandon(late, 'late__slow_ask', { delayMs: 700, kind, secret: 'alice-ACCT-42' }, 150);
      const b = bob();
      // Bob's call is the only one in flight when the abandoned call asks.
      const out = await find(late, 'late__sleep').handler.invoke({ ms: 900 }, b.ctx);
      expect(textOf(out)).toBe('slept');
      expect(b.asked).toEqual([]);
      expect(b.refused).toEqual([{ kind, reason: 'an earlier call on this server may still be running' }]);
      expect(textOf(await find(late, 'late__outcome').handler.invoke({}, context().ctx))).toMatch(/^refused: .*an earlier call on this server may still be running/);
    });
  });

  it("lifts the quarantine when the abandoned call's late answer arrives, before the deadline", async () => {
    await abandon(late, 'late__late_answer', { ms: 600 }, 100);
    const early = bob();
    expect(textOf(await find(late, 'late__ask').handler.invoke({ kind: 'elicitation' }, early.ctx))).toMatch(/^refused: .*may still be running/);
    expect(early.asked).toEqual([]);
    await sleep(700);
    const after = bob();
    expect(textOf(await find(late, 'late__ask').handler.invoke({ kind: 'elicitation' }, after.ctx))).toBe('answered: {"action":"accept","content":{"ok":true}}');
    expect(after.asked).toHaveLength(1);
    expect(after.refused).toEqual([]);
  });

  it("lifts the quarantine once the server's call deadline has passed since the abandonment, when no answer ever comes", async () => {
    await abandon(brief, 'brief__hang', {}, 100);
    const during = bob();
    expect(textOf(await find(brief, 'brief__ask').handler.invoke({ kind: 'sampling' }, during.ctx))).toMatch(/^refused: .*may still be running/);
    expect(during.refused).toEqual([{ kind: 'sampling', reason: 'an earlier call on this server may still be running' }]);
    await sleep(DEADLINE_MS + 100);
    const after = bob();
    expect(textOf(await find(brief, 'brief__ask').handler.invoke({ kind: 'sampling' }, after.ctx))).toContain("bob's reply");
    expect(after.asked).toHaveLength(1);
  });

  it('a call that timed out quarantines like a cancelled one, until the deadline has passed again', async () => {
    const timedOut = find(brief, 'brief__hang').handler.invoke({}, context().ctx);
    await expect(timedOut).rejects.toThrow(/did not answer within 800 ms/);
    const during = bob();
    expect(textOf(await find(brief, 'brief__ask').handler.invoke({ kind: 'elicitation' }, during.ctx))).toMatch(/^refused: .*may still be running/);
    await sleep(DEADLINE_MS + 100);
    const after = bob();
    expect(textOf(await find(brief, 'brief__ask').handler.invoke({ kind: 'elicitation' }, after.ctx))).toMatch(/^answered: /);
  });

  it('a call answered in time quarantines nothing', async () => {
    await find(late, 'late__sleep').handler.invoke({ ms: 10 }, context().ctx);
    const b = bob();
    expect(textOf(await find(late, 'late__ask').handler.invoke({ kind: 'elicitation' }, b.ctx))).toMatch(/^answered: /);
  });
});
