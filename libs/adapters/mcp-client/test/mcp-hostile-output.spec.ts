import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError, ToolNotReachedError } from '@toolgate/contracts';
import { PassThroughRunner, testToolContext, timeOnThread, watchLoopHold } from '@toolgate/testing';
import { McpToolSource } from '../src/index.js';
import { structuralCount } from '../src/json-structure.js';
import { STRUCTURED_NODES, toToolOutput } from '../src/mcp-tool-schema.js';
import { MCP_RESULT_TOO_LARGE } from '../src/oversized-message.js';
import { MAX_MESSAGE_NODES, ProcessGroupStdioTransport, UNASKED_MESSAGE_BYTES } from '../src/process-group-stdio-transport.js';

// Red team R2: one message under the 4 MiB bound froze the event loop for seconds (F2), the
// SDK's own outputSchema check was told as the server's refusal (F3), the mirror rule dropped
// data (F4), binary slipped past the base64 rule (F5).

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
let root: string;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-mcp-hostile-')));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

/** The worst hold of the event loop while `run` runs (load on the box not counted): what any other caller would wait. */
async function maxTimerGap(run: () => Promise<void>): Promise<number> {
  const watch = watchLoopHold(5);
  try {
    await run();
  } finally {
    watch.stop();
  }
  return watch.worstMs();
}

/** wire-server.mjs on the transport: it writes the lines asked for, then answers `say`. */
async function wire() {
  const received: JSONRPCMessage[] = [];
  const errors: string[] = [];
  const transport = new ProcessGroupStdioTransport({ command: process.execPath, args: [fixture('wire-server.mjs')], env: {}, cwd: root }, { killGraceMs: 200 });
  transport.onmessage = (m) => received.push(m);
  transport.onerror = (e) => errors.push(e.message);
  await transport.start();
  const answer = (id: number) => received.find((m) => 'id' in m && m.id === id && !('method' in m)) as { result?: unknown; error?: { code: number; message: string; data?: unknown } } | undefined;
  let next = 1000;
  /**
   * Has the peer write `lines`; resolves with the longest timer gap from when the request was
   * written (serialising it is the test's own cost, not the transport's) until its answer came.
   */
  const say = async (lines: string[][]): Promise<number> => {
    const id = next++;
    await transport.send({ jsonrpc: '2.0', id, method: 'say', params: { lines } } as JSONRPCMessage);
    return maxTimerGap(() => until(`say ${id}`, () => answer(id) !== undefined));
  };
  return { transport, received, errors, answer, say };
}

/** A flat object of `n` short keys (base-36 numbers), about 9 bytes a key: 360,000 fit in 3.3 MB. */
const manyKeys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"${i.toString(36)}":0`).join(',')}}`;

describe('event-loop freeze by one message under the byte bound (F2)', { timeout: 120_000 }, () => {
  it.each([
    // Built in the test, not when the file loads: megabytes of the test's own strings alive at
    // once would make the collector, not the transport, stall the timer.
    ['a flat object of 360,000 keys', () => manyKeys(360_000)],
    ['an array of 1,000,000 zeros', () => `{"a":[${'0,'.repeat(999_999)}0]}`],
    ['1,000,000 empty objects', () => `{"a":[${'{},'.repeat(999_999)}{}]}`],
    ['nested arrays 100,000 deep (closed)', () => `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
    ['200,000 colons in keys of nested objects', () => `{${'"a":{'.repeat(60)}${Array.from({ length: 200_000 }, (_, i) => `"${i.toString(36)}":1`).join(',')}${'}'.repeat(60)}}`],
  ])('an awaited result holding %s is answered MCP_RESULT_TOO_LARGE unparsed, and a timer keeps firing', async (_class, build) => {
    const structured = build();
    const w = await wire();
    try {
      await w.transport.send({ jsonrpc: '2.0', id: 7, method: 'hold', params: {} });
      const line = `{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":${structured}}}`;
      expect(Buffer.byteLength(line)).toBeLessThan(4 * 1024 * 1024);
      const gap = await w.say([[line]]);
      const dropped = w.answer(7);
      expect(dropped?.error?.code).toBe(MCP_RESULT_TOO_LARGE);
      expect(dropped?.error?.message).toBe(`the result held more than ${MAX_MESSAGE_NODES} JSON values, the most one message from the server may hold; it was dropped unread`);
      expect(w.transport.overStructuredLimitOf({ ...dropped?.error })).toBe(MAX_MESSAGE_NODES);
      expect(w.transport.oversizedLimitOf({ ...dropped?.error })).toBeUndefined();
      expect(w.errors.join('\n')).toContain('for request 7 was dropped');
      expect(gap).toBeLessThan(100);
      expect(w.transport.exit).toBeUndefined();
    } finally {
      await w.transport.close();
    }
  });

  it.each([
    ['a 4 MiB notifications/message with 360,000 keys in data', () => `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${manyKeys(360_000)}}}`, 'a notification "notifications/message" of more than'],
    ['a 200 KB progress notification of plain text', () => `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"message":"${'p'.repeat(200_000)}"}}`, 'a notification "notifications/progress" of more than'],
    ['a 1 MB answer to an id nobody awaits', () => `{"jsonrpc":"2.0","id":424242,"result":{"t":"${'r'.repeat(1_000_000)}"}}`, 'which is no longer awaited'],
    ['a 1 MB answer to an id nobody awaits, the id spelled as a string', () => `{"jsonrpc":"2.0","id":"99","result":{"t":"${'r'.repeat(1_000_000)}"}}`, 'which is no longer awaited'],
    ['a 1 MB line with no id', () => `{"jsonrpc":"2.0","result":{"t":"${'r'.repeat(1_000_000)}"}}`, 'with no id that could be read'],
  ])('%s is dropped at the unasked bound, not delivered, and the server keeps serving', async (_class, build, said) => {
    const line = build();
    const w = await wire();
    try {
      const gap = await w.say(Array.from({ length: 5 }, () => [line]));
      expect(w.received.filter((m) => 'method' in m)).toEqual([]);
      expect(w.errors).toHaveLength(5);
      expect(w.errors[0]).toContain(said);
      expect(w.errors[0]).toContain(`${UNASKED_MESSAGE_BYTES} bytes`);
      expect(gap).toBeLessThan(100);
      await w.transport.send({ jsonrpc: '2.0', id: 9, method: 'echo', params: { ok: true } });
      await until('the echo', () => w.answer(9) !== undefined);
      expect(w.answer(9)?.result).toEqual({ ok: true });
    } finally {
      await w.transport.close();
    }
  });

  it('still delivers an awaited large-but-plain result whole (3 MB of text with commas and colons in it) and a small notification', async () => {
    const w = await wire();
    try {
      await w.transport.send({ jsonrpc: '2.0', id: 7, method: 'hold', params: {} });
      const text = 'a,b:c{d[e '.repeat(300_000);
      const line = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"${text}"}],"structuredContent":${manyKeys(2000)}}}`;
      await w.say([['{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}'], [line]]);
      expect((w.answer(7)?.result as { content: { text: string }[] }).content[0]?.text).toBe(text);
      expect(w.received.some((m) => 'method' in m && m.method === 'notifications/message')).toBe(true);
      expect(w.errors).toEqual([]);
    } finally {
      await w.transport.close();
    }
  });

  it('structuralCount counts only outside strings, escaped quotes included, and stops past its bound', () => {
    expect(structuralCount(Buffer.from('{"a,:[{":"\\",:[{","b":[1,2]}'))).toBe(6);
    expect(structuralCount(Buffer.from('"unterminated ,,,,'))).toBe(0);
    expect(structuralCount(Buffer.from(','.repeat(1000)), 10)).toBe(11);
  });

  it('toToolOutput stays linear on a flat object of 200,000 keys and a text item claiming to mirror it', () => {
    const structured = JSON.parse(manyKeys(200_000)) as Record<string, unknown>;
    const { value: out, ms: elapsed } = timeOnThread(() =>
      toToolOutput({ content: [{ type: 'text', text: `{${'"x":1,'.repeat(300_000)}"y":2}` }], structuredContent: structured }),
    );
    const kept = out['structuredContent'] as Record<string, unknown>;
    expect(Object.keys(kept)).toHaveLength(STRUCTURED_NODES);
    expect(kept['[not passed on by Toolgate]']).toBe(`more than ${STRUCTURED_NODES} values in structuredContent: the rest of this object not passed on by Toolgate`);
    expect((out['content'] as { text?: string }[])[0]?.text).toContain('"y":2');
    expect(elapsed).toBeLessThan(1000);
  });
});

describe('mirror rule dropping data (F4)', () => {
  const nested = (depth: number, leaf: unknown): Record<string, unknown> => {
    let value: unknown = leaf;
    for (let i = 0; i < depth; i++) value = { d: value };
    return value as Record<string, unknown>;
  };
  it.each([
    ['compact JSON', (sc: unknown) => JSON.stringify(sc)],
    ['pretty JSON', (sc: unknown) => JSON.stringify(sc, null, 2)],
  ])('keeps a text item (%s) of structuredContent nested 70 levels, since the copy passed on is cut', (_class, spell) => {
    const sc = nested(70, 'NEEDED');
    const out = toToolOutput({ content: [{ type: 'text', text: spell(sc) }], structuredContent: sc });
    expect(JSON.stringify(out['structuredContent'])).not.toContain('NEEDED');
    expect((out['content'] as { text?: string }[])[0]?.text).toContain('NEEDED');
  });

  it('names the top-level string a text item mirrors, both one passed on as it is (hex) and one summarised as binary', () => {
    const word = 'ABCDEFGHabcdefgh01234567'.repeat(50);
    const hex = 'deadbeef0123456789abcdef'.repeat(100);
    const out = toToolOutput({ content: [{ type: 'text', text: hex }, { type: 'text', text: word }], structuredContent: { hex, word } });
    const content = out['content'] as { text?: string; summary?: string }[];
    expect(content[0]?.summary).toBe(`same text as structuredContent.hex (${hex.length} characters)`);
    expect(content[1]?.summary).toBe(`same text as structuredContent.word (${word.length} characters)`);
    expect(JSON.stringify(out)).not.toContain(word);
    expect(JSON.stringify(out)).toContain(hex);
  });

  it('still summarises a mirror whose copy changed only by binary summaries', () => {
    const binary = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 37 + 11) % 256)).toString('base64');
    const sc = { name: 'a.png', thumbnail: binary };
    const out = toToolOutput({ content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc });
    expect((out['content'] as { summary?: string }[])[0]?.summary).toMatch(/^same text as structuredContent \(/);
    expect(JSON.stringify(out)).not.toContain(binary.slice(0, 64));
  });
});

describe('binary past the base64 rule (F5)', () => {
  const binary = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 37 + 11) % 256)).toString('base64');
  it.each([
    ['wrapped with spaces every 76 characters', binary.replace(/(.{76})/g, '$1 ')],
    ['wrapped with tabs', binary.replace(/(.{64})/g, '$1\t')],
    ['wrapped with CR-only line breaks', binary.replace(/(.{76})/g, '$1\r')],
    ['wrapped with CRLF and a trailing newline', `${binary.replace(/(.{76})/g, '$1\r\n')}\n`],
  ])('summarises base64 %s in structuredContent and as a text item', (_class, text) => {
    const out = toToolOutput({ content: [{ type: 'text', text }], structuredContent: { files: [text], url: `data:image/png;base64,${text}` } });
    const json = JSON.stringify(out);
    expect(json).not.toContain(binary.slice(1000, 1060));
    expect(json).toContain('[binary data not passed on by Toolgate: 300000 bytes]');
    expect(json).toContain('[data: URL (image/png, 300000 bytes) not passed on by Toolgate]');
    expect((out['content'] as { summary?: string }[])[0]?.summary).toBe('text item holding binary data not passed on by Toolgate: 300000 bytes');
  });

  it('summarises an array of equal base64 chunks and a base64 object key', () => {
    const chunks = binary.match(/.{1,1000}/g) as string[];
    const out = toToolOutput({ content: [], structuredContent: { chunks, map: { [binary.slice(0, 4000)]: 1, [binary.slice(4000, 8000)]: 2 } } });
    const json = JSON.stringify(out);
    expect(json).not.toContain(binary.slice(0, 64));
    expect(json).not.toContain(binary.slice(4000, 4064));
    expect((out['structuredContent'] as { chunks: unknown }).chunks).toBe(`[binary data in ${chunks.length} chunks not passed on by Toolgate: 300000 bytes]`);
    expect(Object.values((out['structuredContent'] as { map: object }).map)).toEqual([1, 2]);
  });

  it.each([
    ['prose with spaces', 'The Quick Brown Fox 42 jumps '.repeat(100)],
    ['a list of equal-length words with digits', 'Abcdefgh12345678 '.repeat(100).slice(0, 1500)],
    ['lines of a CSV', 'id,Name,Value2\n'.repeat(200)],
    ['short string chunks', ['aB1', 'cD2', 'eF3']],
  ])('keeps %s as it is', (_class, value) => {
    const out = toToolOutput({ content: [], structuredContent: { value } });
    expect((out['structuredContent'] as { value: unknown }).value).toEqual(value);
  });
});

describe("the SDK's local outputSchema check worded as Toolgate's (F3)", { timeout: 60_000 }, () => {
  it('says the server answered against its own outputSchema (MCP_BAD_RESPONSE, not a refusal, not unreached)', async () => {
    const logs: string[] = [];
    const source = await McpToolSource.start(
      { name: 'bad-out', command: process.execPath, args: [fixture('hostile-output-server.mjs')], env: {}, tier: 'unisolated' },
      new PassThroughRunner(),
      { workspaceRoot: root, stopGraceMs: 200, log: (m) => logs.push(m) },
    );
    try {
      const ctx = testToolContext({ principal: { id: 'alice', tenant: 't1', roles: ['worker'] }, workspaceRoot: root });
      const invoke = async (tool: string) => {
        const def = source.tools().find((d) => d.manifest.name === `bad_out__${tool}`);
        if (!def) throw new Error(`no ${tool}`);
        try {
          return await def.handler.invoke({} as never, ctx);
        } catch (error) {
          return error;
        }
      };
      const wrong = (await invoke('wrong_shape')) as ToolError;
      expect(wrong).toBeInstanceOf(ToolError);
      expect(wrong).not.toBeInstanceOf(ToolNotReachedError);
      expect(wrong.reason).toBe('MCP_BAD_RESPONSE');
      expect(wrong.message).toMatch(/^MCP server 'bad-out' answered 'bad_out__wrong_shape' with structured content that does not match its own outputSchema: .*must be number/);
      expect(wrong.message).not.toContain('refused');
      expect(wrong.message).not.toContain('\u001b');
      const missing = (await invoke('no_structured')) as ToolError;
      expect(missing).not.toBeInstanceOf(ToolNotReachedError);
      expect(missing.reason).toBe('MCP_BAD_RESPONSE');
      expect(missing.message).toBe("MCP server 'bad-out' answered 'bad_out__no_structured' without the structured content its own outputSchema requires");
      expect(await invoke('fine')).toMatchObject({ structuredContent: { n: 1 } });
    } finally {
      await source.close();
    }
  });
});
