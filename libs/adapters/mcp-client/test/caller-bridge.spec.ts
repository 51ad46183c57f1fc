import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ElicitResultSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { CallerRequestKind, JsonObject, ToolContext } from '@toolgate/contracts';
import { testToolContext } from '@toolgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallerBridge, QUARANTINE_REASON, UPSTREAM_CLIENT_CAPABILITIES } from '../src/caller-bridge.js';

const DEADLINE_MS = 150;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A real SDK client and server linked in memory; the test plays the wire the bridge sees, message by message. */
let client: Client;
let server: Server;
let bridge: CallerBridge;
beforeEach(async () => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  server = new Server({ name: 'upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
  client = new Client({ name: 'toolgate', version: '0.1.0' }, { capabilities: UPSTREAM_CLIENT_CAPABILITIES });
  bridge = new CallerBridge('up', DEADLINE_MS);
  bridge.attach(client);
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
});
afterEach(async () => {
  bridge.dispose();
  await client.close();
});

/** A call's context whose caller answers every elicitation, recording what it asked and what was refused. */
function caller() {
  const asked: JsonObject[] = [];
  const refused: { kind: CallerRequestKind; reason: string }[] = [];
  const ctx: ToolContext = testToolContext({
    caller: { elicit: async (p) => (asked.push(p), { action: 'accept', content: { ok: true } }), refused: (kind, reason) => void refused.push({ kind, reason }) },
  });
  return { ctx, asked, refused };
}

const toolsCall = (id: string | number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x', arguments: {} } });
const answer = (id: string | number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { content: [] } });
/** What the server's elicitation got: the answer, or the refusal's text. */
const elicit = () =>
  server.request({ method: 'elicitation/create', params: { message: 'ok?', requestedSchema: { type: 'object', properties: {} } } }, ElicitResultSchema).then(
    (result) => `answered ${JSON.stringify(result)}`,
    (error: Error) => `refused: ${error.message}`,
  );

describe('unanswered tools/call requests counted from the wire', () => {
  it('relays only when exactly one call is in flight here and exactly one tools/call is unanswered upstream', async () => {
    const one = caller();
    const tracked = bridge.track(one.ctx);
    bridge.sent(toolsCall(1));
    tracked.sentAs(1);
    // A second tools/call on the wire that no call here owns (the two sides disagree): whose request it is cannot be told.
    bridge.sent(toolsCall(2));
    expect(await elicit()).toMatch(/refused: .*2 tool calls are unanswered on this connection/);
    expect(one.asked).toEqual([]);
    expect(one.refused).toEqual([{ kind: 'elicitation', reason: '2 tool calls are unanswered on this connection' }]);
    bridge.received(answer(2));
    expect(await elicit()).toBe('answered {"action":"accept","content":{"ok":true}}');
    expect(one.asked).toHaveLength(1);
    tracked.end();
  });

  it('refuses while a call is in flight here but none is unanswered upstream', async () => {
    const one = caller();
    const tracked = bridge.track(one.ctx);
    expect(await elicit()).toMatch(/refused: .*0 tool calls are unanswered/);
    expect(one.asked).toEqual([]);
    tracked.end();
  });
});

describe('quarantine after an abandoned call', () => {
  it("is lifted only by an answer with the call's own id: not another type's spelling of it, nor another id", async () => {
    const alice = bridge.track(caller().ctx);
    bridge.sent(toolsCall(7));
    alice.sentAs(7);
    alice.end();
    expect(bridge.quarantined).toBe(true);
    for (const spoof of ['7', 7.5, 8, '07']) bridge.received(answer(spoof));
    // A request, or a notification, that merely names the id lifts nothing either.
    bridge.received({ jsonrpc: '2.0', id: 7, method: 'ping' } as JSONRPCMessage);
    bridge.received({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 7, progress: 1 } } as JSONRPCMessage);
    expect(bridge.quarantined).toBe(true);
    const bob = caller();
    const bobs = bridge.track(bob.ctx);
    bridge.sent(toolsCall(9));
    bobs.sentAs(9);
    expect(await elicit()).toMatch(new RegExp(`refused: .*${QUARANTINE_REASON}`));
    expect(bob.refused).toEqual([{ kind: 'elicitation', reason: QUARANTINE_REASON }]);
    expect(bob.asked).toEqual([]);
    bridge.received({ jsonrpc: '2.0', id: 7, error: { code: -1, message: 'late failure' } });
    // A question the server writes after that answer reaches the bridge in a later turn.
    await new Promise((resolve) => setImmediate(resolve));
    expect(bridge.quarantined).toBe(false);
    expect(await elicit()).toMatch(/^answered /);
    bobs.end();
  });

  it('a question read in the same batch as the late answer, before it, is still refused (judged as it arrived)', async () => {
    const alice = bridge.track(caller().ctx);
    bridge.sent(toolsCall(7));
    alice.sentAs(7);
    alice.end();
    const bob = caller();
    const tracked = bridge.track(bob.ctx);
    bridge.sent(toolsCall(8));
    tracked.sentAs(8);
    // The question is on its way to the handler when the late answer is read in the same turn.
    const asked = elicit();
    bridge.received(answer(7));
    expect(await asked).toMatch(new RegExp(`refused: .*${QUARANTINE_REASON}`));
    expect(bob.asked).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(bridge.quarantined).toBe(false);
    tracked.end();
  });

  it('a call answered before it ended quarantines nothing; one that sent nothing quarantines nothing', () => {
    const answered = bridge.track(caller().ctx);
    bridge.sent(toolsCall(1));
    answered.sentAs(1);
    bridge.received(answer(1));
    answered.end();
    bridge.track(caller().ctx).end();
    expect(bridge.quarantined).toBe(false);
  });

  it('a call whose id is not known is held to the deadline, and then no longer counts as unanswered', async () => {
    const lost = bridge.track(caller().ctx);
    bridge.sent(toolsCall(3));
    lost.sentAs('unknown');
    lost.end();
    expect(bridge.quarantined).toBe(true);
    bridge.received(answer(99));
    expect(bridge.quarantined).toBe(true);
    await sleep(DEADLINE_MS + 50);
    expect(bridge.quarantined).toBe(false);
    const next = caller();
    const tracked = bridge.track(next.ctx);
    bridge.sent(toolsCall(4));
    tracked.sentAs(4);
    // Only the new call is unanswered now: the lost one was forgotten at its deadline.
    expect(await elicit()).toMatch(/^answered /);
    tracked.end();
  });
});
