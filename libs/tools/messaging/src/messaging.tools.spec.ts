import {
  ToolError,
  type BusMessage,
  type JsonObject,
  type JsonValue,
  type MessageBus,
  type Principal,
  type PrincipalDirectory,
  type ToolDefinition,
} from '@toolgate/contracts';
import { LiteralDirectory, ManualClock, testMessageBus, testToolContext } from '@toolgate/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { createMessagingTools, MAX_MESSAGE_CHARS } from './messaging.tools.js';

/**
 * A bus for these tests (tools may not import adapters). It keeps per-reader, per-channel
 * cursors like the real adapters, and the same contract suite they run proves it below.
 */
class ListBus implements MessageBus {
  readonly messages: BusMessage[] = [];
  readonly #cursors = new Map<string, number>();
  #seq = 0;

  async publish(message: Omit<BusMessage, 'seq'>): Promise<BusMessage> {
    for (const field of ['id', 'tenant', 'channel', 'sender'] as const) {
      if (!message[field]) throw new TypeError(`${field} must not be empty`);
    }
    for (const field of ['id', 'tenant', 'channel', 'sender', 'body'] as const) {
      if (message[field].includes('\u0000') || /\p{Cs}/u.test(message[field])) throw new TypeError(`${field} must be well-formed Unicode text without NUL characters`);
    }
    const stored = { ...message, seq: ++this.#seq };
    this.messages.push(stored);
    return stored;
  }

  async readNew(tenant: string, reader: string, options: { channels?: readonly string[]; limit: number }): Promise<readonly BusMessage[]> {
    if (!Number.isInteger(options.limit) || options.limit < 1) throw new RangeError('limit must be a positive integer');
    const key = (channel: string) => `${tenant}\u0000${reader}\u0000${channel}`;
    const chosen = this.messages
      .filter((m) => m.tenant === tenant && (!options.channels || options.channels.includes(m.channel)))
      .filter((m) => m.seq > (this.#cursors.get(key(m.channel)) ?? 0))
      .slice(0, options.limit);
    for (const m of chosen) this.#cursors.set(key(m.channel), m.seq);
    return chosen;
  }
}

describe('the test bus keeps the MessageBus contract', () => {
  testMessageBus(async () => ({ bus: new ListBus() }));
});

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);

function who(id: string, tenant = 'acme'): Principal {
  return { id, tenant, roles: ['worker'] };
}

describe('messaging tools', () => {
  let bus: ListBus;
  let clock: ManualClock;
  let ids: number;
  let tools: Map<string, ToolDefinition>;

  const make = (extra: { directory?: PrincipalDirectory } = {}) =>
    new Map(
      createMessagingTools({ bus, clock, newId: () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`, ...extra }).map(
        (t) => [t.manifest.name, t],
      ),
    );

  beforeEach(() => {
    bus = new ListBus();
    clock = new ManualClock(T0);
    ids = 0;
    tools = make();
  });

  const call = (tool: string, principal: Principal, args: JsonObject): Promise<JsonValue> =>
    tools.get(tool)!.handler.invoke(args, testToolContext({ principal }));
  const send = (principal: Principal, channel: string, message: string) => call('send_message', principal, { channel, message });
  const read = (principal: Principal, args: JsonObject = {}) => call('read_messages', principal, args) as Promise<{ messages: string[]; more: boolean }>;

  async function toolError(promise: Promise<unknown>): Promise<ToolError> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }

  describe('manifests', () => {
    it('are low risk, in-process and ask for the messaging permission', () => {
      expect([...tools.keys()]).toEqual(['send_message', 'read_messages']);
      for (const { manifest } of tools.values()) {
        expect(manifest.risk).toBe('low');
        expect(manifest.tier).toBe('inprocess');
        expect(manifest.permissions.map((p) => p.type)).toEqual(['messaging']);
        expect(manifest.input['additionalProperties']).toBe(false);
      }
    });
  });

  describe('send_message puts an AS2 activity on the bus', () => {
    it('wraps text on a broadcast channel in an Announce', async () => {
      const result = await send(who('planner'), 'log', 'indexed 40 files');
      expect(result).toEqual({
        id: 'urn:uuid:00000000-0000-4000-8000-000000000001',
        channel: 'log',
        type: 'Announce',
        published: '2026-01-02T03:04:05.000Z',
      });
      expect(bus.messages).toHaveLength(1);
      const [stored] = bus.messages;
      expect(stored).toMatchObject({ id: 'urn:uuid:00000000-0000-4000-8000-000000000001', tenant: 'acme', channel: 'log', sender: 'planner', publishedAt: T0 });
      expect(JSON.parse(stored!.body)).toEqual({
        '@context': 'https://www.w3.org/ns/activitystreams',
        type: 'Announce',
        id: 'urn:uuid:00000000-0000-4000-8000-000000000001',
        actor: 'urn:toolgate:team:planner',
        summary: 'indexed 40 files',
        published: '2026-01-02T03:04:05.000Z',
      });
    });

    it('wraps a task in an Offer, addressed to the inbox owner on task:<principal>', async () => {
      await send(who('planner'), 'task', 'anyone: triage issue 12');
      const direct = await send(who('planner'), 'task:worker-1', 'summarise docs/api.md');
      expect(direct).toMatchObject({ type: 'Offer', channel: 'task:worker-1', to: ['worker-1'] });
      const [open, addressed] = bus.messages.map((m) => JSON.parse(m.body));
      expect(open).toMatchObject({ type: 'Offer', summary: 'anyone: triage issue 12' });
      expect(open).not.toHaveProperty('to');
      expect(addressed).toMatchObject({ type: 'Offer', actor: 'urn:toolgate:team:planner', to: ['urn:toolgate:team:worker-1'] });
    });

    it('addresses a control message to the principals it starts with', async () => {
      const result = await send(who('planner'), 'control', '@worker-1 @worker-2: stop after the current file');
      expect(result).toMatchObject({ type: 'Announce', to: ['worker-1', 'worker-2'] });
      expect(JSON.parse(bus.messages[0]!.body)).toMatchObject({
        to: ['urn:toolgate:team:worker-1', 'urn:toolgate:team:worker-2'],
        summary: '@worker-1 @worker-2: stop after the current file',
      });
      await send(who('planner'), 'control', 'everyone pause; email me @ noon');
      expect(JSON.parse(bus.messages[1]!.body)).not.toHaveProperty('to');
    });

    it('takes sender and tenant from the caller, never from the arguments', async () => {
      await call('send_message', who('mallory', 'evil'), { channel: 'log', message: 'hi', sender: 'planner', tenant: 'acme' });
      expect(bus.messages[0]).toMatchObject({ tenant: 'evil', sender: 'mallory' });
      expect(JSON.parse(bus.messages[0]!.body).actor).toBe('urn:toolgate:team:mallory');
    });

    it.each([
      ['random', /unknown channel 'random': use log, task, review, control, or task:<principal>/],
      ['LOG', /unknown channel 'LOG'/],
      ['task:', /'task:' does not name a principal/],
      ['task:two words', /'task:two words' does not name a principal/],
      ['task:../etc', /does not name a principal/],
      ['', /the channel is missing/],
    ])('refuses the channel %j clearly', async (channel, message) => {
      const error = await toolError(send(who('planner'), channel, 'x'));
      expect(error.reason).toBe('INVALID_CHANNEL');
      expect(error.message).toMatch(message);
      expect(bus.messages).toEqual([]);
    });

    it('refuses empty, oversized and non-text messages', async () => {
      expect((await toolError(send(who('planner'), 'log', '   '))).message).toMatch(/the message is empty/);
      expect((await toolError(send(who('planner'), 'log', 'x'.repeat(MAX_MESSAGE_CHARS + 1)))).message).toMatch(/at most 4000/);
      expect((await toolError(send(who('planner'), 'log', 'nul \u0000'))).reason).toBe('INVALID_MESSAGE');
      expect((await toolError(call('send_message', who('planner'), { channel: 'log', message: 42 }))).reason).toBe('INVALID_MESSAGE');
      expect(bus.messages).toEqual([]);
    });

    it('checks inbox owners and mentions against the directory when it has one', async () => {
      tools = make({ directory: new LiteralDirectory({ principals: [{ ...who('planner') }, { ...who('worker-1') }, { ...who('worker-9', 'other') }] }) });
      await send(who('planner'), 'task:worker-1', 'go');
      const inbox = await toolError(send(who('planner'), 'task:worker-9', 'go'));
      expect(inbox).toMatchObject({ reason: 'UNKNOWN_PRINCIPAL', message: "there is no principal 'worker-9' in your team" });
      expect((await toolError(send(who('planner'), 'control', '@wrker-1 stop'))).message).toMatch(/'wrker-1'/);
      expect(bus.messages).toHaveLength(1);
    });
  });

  describe('read_messages', () => {
    it('returns actor: summary lines once, oldest first', async () => {
      await send(who('planner'), 'log', 'first');
      await send(who('worker-2'), 'log', 'second');
      expect(await read(who('worker-1'), { channel: 'log' })).toEqual({ messages: ['planner: first', 'worker-2: second'], more: false });
      expect(await read(who('worker-1'), { channel: 'log' })).toEqual({ messages: [], more: false });
      // Another reader has its own cursor.
      expect((await read(who('reviewer'), { channel: 'log' })).messages).toHaveLength(2);
    });

    it('reads every channel meant for the caller, naming each, and skips nothing it did not return', async () => {
      await send(who('planner'), 'log', 'started');
      await send(who('planner'), 'task:worker-1', 'summarise docs/api.md');
      await send(who('planner'), 'task:worker-2', 'not for worker-1');
      await send(who('planner'), 'review', 'please review PR 7');
      expect(await read(who('worker-1'), { channel: 'task:worker-1' })).toEqual({ messages: ['planner: summarise docs/api.md'], more: false });
      expect(await read(who('worker-1'))).toEqual({
        messages: ['[log] planner: started', '[review] planner: please review PR 7'],
        more: false,
      });
      expect(await read(who('worker-2'))).toEqual({
        messages: ['[log] planner: started', '[task:worker-2] planner: not for worker-1', '[review] planner: please review PR 7'],
        more: false,
      });
    });

    it("refuses to read another principal's task inbox", async () => {
      await send(who('planner'), 'task:worker-2', 'private');
      const error = await toolError(read(who('worker-1'), { channel: 'task:worker-2' }));
      expect(error).toMatchObject({ reason: 'CHANNEL_NOT_YOURS', message: "'task:worker-2' is worker-2's task inbox; read your own with 'task:worker-1'" });
      expect((await toolError(read(who('worker-1'), { channel: 'inbox' }))).reason).toBe('INVALID_CHANNEL');
    });

    it('drops control messages addressed to others, keeps broadcasts and its own', async () => {
      await send(who('planner'), 'control', '@worker-2 stop now');
      await send(who('planner'), 'control', 'everyone: pause at 17:00');
      await send(who('planner'), 'control', '@worker-1, resume');
      await bus.publish({ id: 'x1', tenant: 'acme', channel: 'control', sender: 'ops-script', body: '@worker-2 plain text for worker-2', publishedAt: T0 });
      await bus.publish({ id: 'x2', tenant: 'acme', channel: 'control', sender: 'ops-script', body: '@worker-1 plain text for me', publishedAt: T0 });
      expect((await read(who('worker-1'), { channel: 'control' })).messages).toEqual([
        'planner: everyone: pause at 17:00',
        'planner: @worker-1, resume',
        'ops-script: @worker-1 plain text for me',
      ]);
      expect((await read(who('planner'), { channel: 'control' })).messages).toEqual(['planner: everyone: pause at 17:00']);
    });

    it('does not let dropped control traffic eat the limit', async () => {
      for (let i = 0; i < 12; i++) await send(who('planner'), 'control', `@worker-2 step ${i}`);
      await send(who('planner'), 'log', 'a');
      await send(who('planner'), 'log', 'b');
      expect(await read(who('worker-1'), { limit: 2 })).toEqual({ messages: ['[log] planner: a', '[log] planner: b'], more: true });
      expect(await read(who('worker-1'), { limit: 2 })).toEqual({ messages: [], more: false });
    });

    it('pages with limit and says when there may be more', async () => {
      for (let i = 1; i <= 5; i++) await send(who('planner'), 'log', `m${i}`);
      expect(await read(who('worker-1'), { channel: 'log', limit: 2 })).toEqual({ messages: ['planner: m1', 'planner: m2'], more: true });
      expect(await read(who('worker-1'), { channel: 'log', limit: 2 })).toEqual({ messages: ['planner: m3', 'planner: m4'], more: true });
      expect(await read(who('worker-1'), { channel: 'log', limit: 2 })).toEqual({ messages: ['planner: m5'], more: false });
      expect((await toolError(read(who('worker-1'), { limit: 0 }))).message).toMatch(/limit must be a whole number from 1 to 50/);
    });

    it('passes non-AS2 payloads through as text, and reads AS2 from other publishers', async () => {
      const publish = (body: string, sender = 'ci-bot') => bus.publish({ id: `id-${body.length}-${sender}`, tenant: 'acme', channel: 'log', sender, body, publishedAt: T0 });
      await publish('build 311 green');
      await publish('{"status":"not an activity"}');
      await publish('{"@context":"https://www.w3.org/ns/activitystreams","type":"Create","actor":{"type":"Service","name":"ci"},"object":{"type":"Note","content":"deployed v2"}}');
      await publish('{"@context":["https://www.w3.org/ns/activitystreams"],"type":"Announce","actor":"https://ci.example/bot","summary":"tests flaky"}');
      expect((await read(who('worker-1'), { channel: 'log' })).messages).toEqual([
        'ci-bot: build 311 green',
        'ci-bot: {"status":"not an activity"}',
        'ci: deployed v2',
        'https://ci.example/bot: tests flaky',
      ]);
    });

    it('never reads across tenants', async () => {
      await send(who('planner', 'acme'), 'log', 'acme only');
      await send(who('planner', 'acme'), 'task:worker-1', 'acme task');
      expect(await read(who('worker-1', 'globex'))).toEqual({ messages: [], more: false });
      expect(await read(who('worker-1', 'globex'), { channel: 'task:worker-1' })).toEqual({ messages: [], more: false });
      expect((await read(who('worker-1', 'acme'))).messages).toEqual(['[log] planner: acme only', '[task:worker-1] planner: acme task']);
    });
  });
});
