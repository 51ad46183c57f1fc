import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { CallerRequests, JsonObject, Principal, ProgressUpdate } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { CallerRelay, MAX_ANSWER_BYTES, MAX_RELAYS_PER_CALL, MAX_SUSPENDED_PER_PRINCIPAL, type RelayedRun, type RelayRound } from '../src/caller-relay.js';
import type { CallerClient } from '../src/client-session.js';
import { randomTokenKey, SignedTokens } from '../src/signed-token.js';

const ALICE: Principal = { id: 'alice', tenant: 'acme', roles: ['worker'] };
const BOB: Principal = { id: 'bob', tenant: 'acme', roles: ['worker'] };
const MODERN: CallerClient = { era: 'modern', protocolVersion: '2026-07-28', capabilities: { elicitation: { form: {} }, sampling: {} }, sessionKey: 'r:1' };
const LEGACY: CallerClient = { era: 'legacy', protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, sessionKey: 's:alice-1' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function relay(suspendMs?: number) {
  return new CallerRelay({ tokens: new SignedTokens({ key: randomTokenKey() }), ...(suspendMs ? { suspendMs } : {}) });
}

function round(overrides: Partial<RelayRound> = {}): RelayRound {
  return { principal: ALICE, caller: MODERN, tool: 'up__ask', args: { q: 1 }, signal: new AbortController().signal, ...overrides };
}

/** A call whose tool asks its caller `asks` times (elicitation), then answers what it was told. */
function asking(asks = 1, seen: { run?: RelayedRun } = {}) {
  return async (run: RelayedRun): Promise<JsonObject[]> => {
    seen.run = run;
    const answers: JsonObject[] = [];
    for (let i = 0; i < asks; i += 1) answers.push(await (run.invoke.caller as CallerRequests).elicit!({ message: `question ${i}`, requestedSchema: { type: 'object', properties: {} } }, run.signal));
    return answers;
  };
}

describe('2026-07-28 suspended calls', () => {
  it('answers input_required, then resumes the call with the retry\'s answer', async () => {
    const r = relay();
    const first = await r.round(round(), asking());
    expect(first.kind).toBe('input');
    if (first.kind !== 'input') return;
    expect(first.result.inputRequests).toEqual({ 'toolgate/relay-1': { method: 'elicitation/create', params: expect.objectContaining({ message: 'question 0' }) } });
    const done = await r.round(round({ requestState: first.result.requestState, inputResponses: { 'toolgate/relay-1': { action: 'accept', content: { a: 1 } } } }), asking());
    expect(done).toEqual({ kind: 'done', value: [{ action: 'accept', content: { a: 1 } }] });
    expect(r.suspended).toBe(0);
  });

  it('cancels a suspended call whose client does not come back within the bound, and says so on a late retry', async () => {
    const r = relay(80);
    const seen: { run?: RelayedRun } = {};
    const first = await r.round(round(), asking(1, seen));
    expect(r.suspended).toBe(1);
    await sleep(200);
    expect(seen.run?.signal.aborted).toBe(true);
    expect(r.suspended).toBe(0);
    if (first.kind !== 'input') throw new Error('expected input_required');
    await expect(r.round(round({ requestState: first.result.requestState }), asking())).rejects.toThrow(/requestState refused: (it has expired|the call it names is no longer waiting)/);
  });

  it("the first round's request closing does not cancel the suspended call; a resumed round's does", async () => {
    const r = relay();
    const seen: { run?: RelayedRun } = {};
    const closing = new AbortController();
    const first = await r.round(round({ signal: closing.signal }), asking(2, seen));
    closing.abort();
    expect(seen.run?.signal.aborted).toBe(false);
    if (first.kind !== 'input') throw new Error('expected input_required');
    const resumed = new AbortController();
    const second = await r.round(round({ signal: resumed.signal, requestState: first.result.requestState, inputResponses: { 'toolgate/relay-1': { action: 'decline' } } }), asking());
    expect(second.kind).toBe('input');
    if (second.kind !== 'input') return;
    const third = r.round(round({ signal: resumed.signal, requestState: second.result.requestState, inputResponses: {} }), asking());
    // The client left the answer out: that request fails, the call ends with the tool's error.
    await expect(third).rejects.toThrow(/did not answer the elicitation request/);
  });

  it('refuses a second retry of one round (replay or race) while the first runs', async () => {
    const r = relay();
    let release: (() => void) | undefined;
    const run = async (relayed: RelayedRun) => {
      await relayed.invoke.caller?.elicit?.({ message: 'q', requestedSchema: { type: 'object', properties: {} } }, relayed.signal);
      await new Promise<void>((resolve) => (release = resolve));
      return 'ok';
    };
    const first = await r.round(round(), run);
    if (first.kind !== 'input') throw new Error('expected input_required');
    const retry = { requestState: first.result.requestState, inputResponses: { 'toolgate/relay-1': { action: 'accept', content: {} } } };
    const winner = r.round(round(retry), run);
    await sleep(10);
    await expect(r.round(round(retry), run)).rejects.toThrow(/already answered/);
    release?.();
    await expect(winner).resolves.toEqual({ kind: 'done', value: 'ok' });
  });

  it(`holds at most ${MAX_SUSPENDED_PER_PRINCIPAL} suspended calls per principal; the next one's request is refused, other principals unaffected`, async () => {
    const r = relay();
    for (let i = 0; i < MAX_SUSPENDED_PER_PRINCIPAL; i += 1) expect((await r.round(round(), asking())).kind).toBe('input');
    await expect(r.round(round(), asking())).rejects.toThrow(/already has 8 calls waiting/);
    expect((await r.round(round({ principal: BOB }), asking())).kind).toBe('input');
    expect(r.suspended).toBe(MAX_SUSPENDED_PER_PRINCIPAL + 1);
    r.close();
    expect(r.suspended).toBe(0);
  });

  it(`relays at most ${MAX_RELAYS_PER_CALL} requests per call`, async () => {
    const r = relay();
    let state: unknown;
    let answered: RelayRoundAnswers = {};
    const run = asking(MAX_RELAYS_PER_CALL + 1);
    let result = await r.round(round(), run);
    for (let n = 1; result.kind === 'input'; n += 1) {
      state = result.result.requestState;
      answered = { [`toolgate/relay-${n}`]: { action: 'cancel' } };
      result = await r.round(round({ requestState: state, inputResponses: answered }), run).catch((error: Error) => ({ kind: 'done' as const, value: error.message as never }));
    }
    expect(result.value).toMatch(new RegExp(`already relayed ${MAX_RELAYS_PER_CALL} requests`));
  });

  it('sends progress to the round running now and drops it while suspended', async () => {
    const r = relay();
    const got: string[] = [];
    let progress: ((u: ProgressUpdate) => void) | undefined;
    const run = async (relayed: RelayedRun) => {
      progress = relayed.invoke.progress;
      progress?.({ progress: 1 });
      await relayed.invoke.caller?.elicit?.({ message: 'q', requestedSchema: { type: 'object', properties: {} } }, relayed.signal);
      progress?.({ progress: 3 });
      return 'ok';
    };
    const first = await r.round(round({ progress: (u) => got.push(`round1:${u.progress}`) }), run);
    progress?.({ progress: 2 });
    if (first.kind !== 'input') throw new Error('expected input_required');
    await r.round(round({ progress: (u) => got.push(`round2:${u.progress}`), requestState: first.result.requestState, inputResponses: { 'toolgate/relay-1': { action: 'decline' } } }), run);
    expect(got).toEqual(['round1:1', 'round2:3']);
  });

  it('refuses a URL elicitation the client did not declare, without suspending', async () => {
    const r = relay();
    const run = async (relayed: RelayedRun) => relayed.invoke.caller?.elicit?.({ mode: 'url', message: 'open', url: 'https://example.org', elicitationId: 'x' }, relayed.signal);
    await expect(r.round(round(), run)).rejects.toThrow(/did not declare elicitation in url mode/);
    expect(r.suspended).toBe(0);
  });
});

type RelayRoundAnswers = Record<string, unknown>;

describe('2025-era relay ids', () => {
  function legacyCall(r: CallerRelay, caller: CallerClient = LEGACY) {
    const pushed: JSONRPCMessage[] = [];
    const result = r.round(round({ caller, push: async (m) => void pushed.push(m) }), async (run) =>
      run.invoke.caller?.elicit?.({ message: 'q', requestedSchema: { type: 'object', properties: {} } }, run.signal),
    );
    return { pushed, result };
  }

  it('pushes the request under an unguessable id that only the asked session can answer, once', async () => {
    const r = relay();
    const { pushed, result } = legacyCall(r);
    await expect.poll(() => pushed.length).toBe(1);
    const id = (pushed[0] as { id: string }).id;
    expect(id).toMatch(/^toolgate-elicit-[A-Za-z0-9_-]{22}$/);
    expect(r.settle('s:someone-else', id, { result: { action: 'accept', content: { who: 'forged' } } })).toBe(false);
    expect(r.settle(LEGACY.sessionKey, id.toUpperCase(), { result: { action: 'accept' } })).toBe(false);
    expect(r.settle(LEGACY.sessionKey, id, { result: { action: 'accept', content: { who: 'genuine' } } })).toBe(true);
    expect(r.settle(LEGACY.sessionKey, id, { result: { action: 'accept', content: { who: 'again' } } })).toBe(false);
    await expect(result).resolves.toEqual({ kind: 'done', value: { action: 'accept', content: { who: 'genuine' } } });
  });

  it('a JSON-RPC error answer fails the request with the flattened client text', async () => {
    const r = relay();
    const { pushed, result } = legacyCall(r);
    await expect.poll(() => pushed.length).toBe(1);
    r.settle(LEGACY.sessionKey, (pushed[0] as { id: string }).id, { error: { code: -1, message: 'user\nclosed\u001b the dialog' } });
    await expect(result).rejects.toThrow('the calling client refused the elicitation request: user closed  the dialog');
  });

  it.each([
    ['no action', { content: {} }],
    ['an unknown action', { action: 'approve' }],
    ['not an object', 'accept'],
    ['oversized', { action: 'accept', content: { big: 'x'.repeat(MAX_ANSWER_BYTES) } }],
  ])('refuses an answer with %s', async (_what, answer) => {
    const r = relay();
    const { pushed, result } = legacyCall(r);
    await expect.poll(() => pushed.length).toBe(1);
    r.settle(LEGACY.sessionKey, (pushed[0] as { id: string }).id, { result: answer });
    await expect(result).rejects.toMatchObject({ reason: 'RELAY_BAD_ANSWER' });
  });

  it('offers nothing to a client that declared nothing, and no caller at all without a stream', async () => {
    const r = relay();
    let seen: RelayedRun | undefined;
    await r.round(round({ caller: { ...LEGACY, capabilities: {} }, push: async () => undefined }), async (run) => void (seen = run));
    expect(seen?.invoke.caller).toBeUndefined();
    await r.round(round({ caller: LEGACY }), async (run) => void (seen = run));
    expect(seen?.invoke.caller).toBeUndefined();
  });
});

/** 200 000 levels of nesting: no recursive encoder (`JSON.stringify`) survives them. */
function deep(shape: 'arrays' | 'objects' | 'mixed', levels = 200_000): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = shape === 'arrays' || (shape === 'mixed' && i % 2 === 0) ? [value] : { a: value };
  return value;
}

describe('stack exhaustion by deep client input', () => {
  describe.each(['arrays', 'objects', 'mixed'] as const)('%s', (shape) => {
    it('a 2025-era answer nested 200 000 deep is refused as a bad answer, not a stack overflow', async () => {
      const r = relay();
      const pushed: JSONRPCMessage[] = [];
      const result = r.round(round({ caller: LEGACY, push: async (m) => void pushed.push(m) }), async (run) =>
        run.invoke.caller?.elicit?.({ message: 'q', requestedSchema: { type: 'object', properties: {} } }, run.signal),
      );
      await expect.poll(() => pushed.length).toBe(1);
      expect(r.settle(LEGACY.sessionKey, (pushed[0] as { id: string }).id, { result: { action: 'accept', content: { deep: deep(shape) } } })).toBe(true);
      await expect(result).rejects.toMatchObject({ reason: 'RELAY_BAD_ANSWER', message: "the calling client's elicitation answer is nested deeper than 64 levels" });
    });

    it('a 2026-07-28 retry whose answer is nested 200 000 deep fails that request with a bad answer', async () => {
      const r = relay();
      const first = await r.round(round(), asking());
      if (first.kind !== 'input') throw new Error('expected input_required');
      const failed = r.round(round({ requestState: first.result.requestState, inputResponses: { 'toolgate/relay-1': { action: 'accept', content: { deep: deep(shape) } } } }), asking());
      await expect(failed).rejects.toMatchObject({ reason: 'RELAY_BAD_ANSWER' });
    });

    it('a new call with arguments nested 200 000 deep runs on to the gateway (whose size gate refuses it); its request is not relayed', async () => {
      const r = relay();
      let asked: Promise<unknown> | undefined;
      const answer = await r.round(round({ args: { expression: deep(shape) } as JsonObject }), async (run) => {
        asked = (run.invoke.caller as CallerRequests).elicit!({ message: 'q', requestedSchema: { type: 'object', properties: {} } }, run.signal);
        await asked.catch(() => undefined);
        return 'ran';
      });
      expect(answer).toEqual({ kind: 'done', value: 'ran' });
      await expect(asked).rejects.toMatchObject({ reason: 'RELAY_REFUSED' });
      expect(r.suspended).toBe(0);
    });

    it('a retry with arguments nested 200 000 deep is a -32602 refusal naming the arguments, not an internal error', async () => {
      const r = relay();
      const first = await r.round(round(), asking());
      if (first.kind !== 'input') throw new Error('expected input_required');
      await expect(r.round(round({ requestState: first.result.requestState, args: { expression: deep(shape) } as JsonObject }), asking())).rejects.toThrow(
        /requestState refused: the arguments differ from those of the call it resumes/,
      );
    });
  });
});
