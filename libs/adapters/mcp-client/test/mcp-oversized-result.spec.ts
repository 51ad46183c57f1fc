import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
// Stands in for the tier-1/tier-2 runners: the command unchanged with a minimal environment.
import { PassThroughRunner, testToolContext, threadSchedule } from '@toolgate/testing';
import { McpToolSource, type McpServerConfig } from '../src/index.js';
import { MCP_RESULT_TOO_LARGE } from '../src/oversized-message.js';
import { DEFAULT_MAX_MESSAGE_BYTES, ProcessGroupStdioTransport } from '../src/process-group-stdio-transport.js';

// Issue 12 defect 2: one message over the transport's bound used to close the server, failing
// every call in flight. Now exactly the call it answers fails (OUTPUT_TOO_LARGE), the stream
// resynchronises at the next line, and the server keeps serving: tested byte for byte against a
// raw peer, end to end against an SDK server, and against the real server-filesystem.

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const CAP = DEFAULT_MAX_MESSAGE_BYTES;

let root: string;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'toolgate-mcp-oversized-')));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A line part: literal text, or `bytes` bytes of one character (written by the peer in 64 KiB slices). */
type Part = string | { fill: string; bytes: number };

/** A raw peer (wire-server.mjs) on the transport, with everything the transport reports collected. */
class Wire {
  readonly received: JSONRPCMessage[] = [];
  readonly seen: JSONRPCMessage[] = [];
  readonly errors: string[] = [];
  readonly stderr: string[] = [];
  readonly transport: ProcessGroupStdioTransport;

  constructor(maxMessageBytes?: number) {
    this.transport = new ProcessGroupStdioTransport(
      { command: process.execPath, args: [fixture('wire-server.mjs')], env: {}, cwd: root },
      {
        killGraceMs: 200,
        onStderr: (chunk) => this.stderr.push(...chunk.toString('utf8').split('\n').filter(Boolean)),
        onReceived: (message) => this.seen.push(message),
        ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
      },
    );
    this.transport.onmessage = (message) => this.received.push(message);
    this.transport.onerror = (error) => this.errors.push(error.message);
  }

  async start(): Promise<this> {
    await this.transport.start();
    return this;
  }

  /** Sends a request the peer leaves unanswered, so an answer the peer writes later is awaited. */
  async hold(id: number, method = 'hold'): Promise<void> {
    await this.transport.send({ jsonrpc: '2.0', id, method, params: {} });
  }

  /** Has the peer write `lines` (in writes of `slice` bytes, if given), then answer this request; resolves with everything received until then. */
  async say(id: number, lines: Part[][], slice?: number): Promise<JSONRPCMessage[]> {
    await this.transport.send({ jsonrpc: '2.0', id, method: 'say', params: { lines, ...(slice ? { slice } : {}) } } as JSONRPCMessage);
    await until(`the answer to say ${id}`, () => this.answer(id) !== undefined, 60_000);
    return this.received;
  }

  answer(id: string | number): (JSONRPCMessage & { result?: unknown; error?: { code: number; message: string; data?: unknown } }) | undefined {
    return this.received.find((m) => 'id' in m && m.id === id && !('method' in m)) as never;
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

/** The SDK's error for a JSON-RPC error response, as the client hands it to the tool source. */
function asMcpError(message: JSONRPCMessage | undefined): McpError {
  const error = (message as { error?: { code: number; message: string; data?: unknown } } | undefined)?.error;
  if (!error) throw new Error(`not an error response: ${JSON.stringify(message)}`);
  return new McpError(error.code, error.message, error.data);
}

const x = (bytes: number): Part => ({ fill: 'x', bytes });

/** Bytes of a line of `parts`, without its newline. */
const sizeOf = (parts: readonly Part[]): number => parts.reduce((sum: number, p) => sum + (typeof p === 'string' ? Buffer.byteLength(p) : p.bytes), 0);

describe('ProcessGroupStdioTransport with a line over its bound', { timeout: 60_000 }, () => {
  const bound = 64 * 1024;

  it('answers the awaited request an oversized result is for with MCP_RESULT_TOO_LARGE, naming the bound, and reads the next line normally', async () => {
    const wire = await new Wire(bound).start();
    try {
      await wire.hold(2);
      const line = ['{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"', x(3 * bound), '"}]},"id":2}'];
      await wire.say(1, [line]);
      const dropped = wire.answer(2);
      expect(dropped?.error?.code).toBe(MCP_RESULT_TOO_LARGE);
      expect(dropped?.error?.message).toBe(`the result was larger than ${bound} bytes, the most one message from the server may carry; it was dropped`);
      expect(JSON.stringify(dropped)).not.toContain('xxx');
      expect(wire.transport.oversizedLimitOf(asMcpError(dropped))).toBe(bound);
      // The line after it is read as usual, and nothing else was lost.
      expect(wire.answer(1)).toMatchObject({ result: { said: 1 } });
      expect(wire.errors).toEqual([`a result of more than ${bound} bytes for request 2 was dropped (${sizeOf(line)} bytes); that call fails, the server keeps serving`]);
      expect(wire.transport.exit).toBeUndefined();
      expect(wire.transport.heldBytes).toBe(0);
    } finally {
      await wire.close();
    }
  });

  describe('the bound is exact (a line of exactly the bound is read, one byte more is not)', () => {
    const head = '{"jsonrpc":"2.0","id":2,"result":{"t":"';
    const tail = '"}}';
    it.each<[string, number, boolean, string]>([
      ['exactly the bound', 0, false, ''],
      ['one byte under', -1, false, ''],
      ['one byte over', 1, true, ''],
      // A CRLF's `\r` is not part of the message (red team F7): the bound is the same with either ending.
      ['exactly the bound, with a CR before the newline', 0, false, '\r'],
      ['one byte over, with a CR before the newline', 1, true, '\r'],
    ])('%s', async (_, delta, dropped, suffix) => {
      const wire = await new Wire(bound).start();
      try {
        await wire.hold(2);
        const fill = bound - head.length - tail.length + delta;
        await wire.say(1, [[head, x(fill), tail + suffix]]);
        const answer = wire.answer(2);
        if (dropped) expect(answer?.error?.code).toBe(MCP_RESULT_TOO_LARGE);
        else expect((answer?.result as { t: string }).t).toHaveLength(fill);
      } finally {
        await wire.close();
      }
    });
  });

  describe('forged oversize errors (a server using the code is not taken for the transport)', () => {
    it.each([
      ['no data', '{"code":-32080,"message":"the result was larger than 1 bytes"}'],
      ['a limit but no marker', '{"code":-32080,"message":"x","data":{"limit":4194304}}'],
      ['a guessed marker', '{"code":-32080,"message":"x","data":{"limit":4194304,"marker":"00000000-0000-4000-8000-000000000000"}}'],
      ['a marker that is not a string', '{"code":-32080,"message":"x","data":{"limit":4194304,"marker":true}}'],
    ])('%s', async (_, error) => {
      const wire = await new Wire(bound).start();
      try {
        await wire.hold(2);
        await wire.say(1, [[`{"jsonrpc":"2.0","id":2,"error":${error}}`]]);
        const answer = wire.answer(2);
        expect(answer?.error?.code).toBe(MCP_RESULT_TOO_LARGE);
        expect(wire.transport.oversizedLimitOf(asMcpError(answer))).toBeUndefined();
        expect(wire.errors).toEqual([]);
      } finally {
        await wire.close();
      }
    });

    it("another transport's own answer (its marker) is not this one's", async () => {
      const [one, two] = await Promise.all([new Wire(bound).start(), new Wire(bound).start()]);
      try {
        await one.hold(2);
        await one.say(1, [['{"jsonrpc":"2.0","id":2,"result":{"t":"', x(2 * bound), '"}}']]);
        const theirs = asMcpError(one.answer(2));
        expect(one.transport.oversizedLimitOf(theirs)).toBe(bound);
        expect(two.transport.oversizedLimitOf(theirs)).toBeUndefined();
      } finally {
        await Promise.all([one.close(), two.close()]);
      }
    });
  });

  describe('fragmented lines (written a few bytes at a time, the id split across reads)', () => {
    it('reads a line under the bound written 7 bytes at a time whole, holding no more than the line', async () => {
      const wire = await new Wire(bound).start();
      let maxHeld = 0;
      const timer = setInterval(() => (maxHeld = Math.max(maxHeld, wire.transport.heldBytes)), 1);
      try {
        await wire.hold(12_345);
        const line = ['{"jsonrpc":"2.0","result":{"t":"', x(20_000), '"},"id":12345}'];
        await wire.say(1, [line], 7);
        expect((wire.answer(12_345)?.result as { t: string }).t).toHaveLength(20_000);
        expect(maxHeld).toBeLessThanOrEqual(sizeOf(line));
      } finally {
        clearInterval(timer);
        await wire.close();
      }
    });

    it('finds the id of an oversized line written 7 bytes at a time', async () => {
      const wire = await new Wire(bound).start();
      try {
        await wire.hold(12_345);
        await wire.say(1, [['{"jsonrpc":"2.0","result":{"t":"', x(bound + 100), '"},"\\u0069d":12345}']], 7);
        expect(wire.answer(12_345)?.error?.code).toBe(MCP_RESULT_TOO_LARGE);
        expect(wire.answer(1)).toMatchObject({ result: { said: 1 } });
      } finally {
        await wire.close();
      }
    });
  });

  it('takes an answer whose id is the string spelling of the request as its answer, so a later answer with that id is unasked and held to 64 KiB (red team R4)', async () => {
    const wire = await new Wire().start();
    try {
      await wire.hold(7);
      await wire.say(1, [['{"jsonrpc":"2.0","id":"7","result":{"t":"first"}}']]);
      await wire.say(2, [['{"jsonrpc":"2.0","id":"7","result":{"t":"', x(200_000), '"}}']]);
      expect(wire.errors).toEqual([`a result of more than 65536 bytes for request "7", which is no longer awaited, was dropped (200044 bytes)`]);
      expect(wire.seen.filter((m) => 'id' in m && m.id === '7' && 'result' in m)).toHaveLength(1);
    } finally {
      await wire.close();
    }
  });

  it('drops an oversized answer to a cancelled request with a log line; the bridge still sees that the server answered', async () => {
    const wire = await new Wire(bound).start();
    try {
      await wire.hold(3);
      await wire.transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'gone' } });
      const line = ['{"jsonrpc":"2.0","result":{"t":"', x(2 * bound), '"},"id":3}'];
      await wire.say(1, [line]);
      expect(wire.answer(3)).toBeUndefined();
      expect(wire.seen.find((m) => 'id' in m && m.id === 3)).toMatchObject({ error: { code: MCP_RESULT_TOO_LARGE } });
      expect(wire.errors).toEqual([`a result of more than ${bound} bytes for request 3, which is no longer awaited, was dropped (${sizeOf(line)} bytes)`]);
    } finally {
      await wire.close();
    }
  });

  it("refuses the server's own oversized request by its id, drops oversized notifications and lines with no id, and loses nothing else", async () => {
    const wire = await new Wire(bound).start();
    try {
      await wire.hold(2);
      const lines = [
        ['{"jsonrpc":"2.0","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"', x(2 * bound), '"}}]},"id":"srv-9"}'],
        ['{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"', x(2 * bound), '"}}'],
        ['{"jsonrpc":"2.0","result":{"id":2,"t":"', x(2 * bound), '"}}'],
        ['["', x(2 * bound), '"]'],
        ['{"jsonrpc":"2.0","id":2,"result":{"t":"', x(2 * bound), '"'],
        ['{"jsonrpc":"2.0","id":2,"result":{"t":"small"}}'],
      ];
      await wire.say(1, lines);
      const size = lines.map(sizeOf);
      // The truncated line (no closing brace) names no id that can be trusted: request 2 gets the
      // well-formed small answer after it.
      expect(wire.answer(2)).toMatchObject({ result: { t: 'small' } });
      expect(wire.answer(1)).toMatchObject({ result: { said: 6 } });
      expect(wire.errors).toEqual([
        `a request "sampling/createMessage" of more than ${bound} bytes (id "srv-9") was dropped and refused (${size[0]} bytes)`,
        `a notification "notifications/message" of more than ${bound} bytes was dropped (${size[1]} bytes)`,
        `a result of more than ${bound} bytes with no id that could be read was dropped (${size[2]} bytes)`,
        `a message of more than ${bound} bytes with no id that could be read was dropped (${size[3]} bytes)`,
        `a message of more than ${bound} bytes with no id that could be read was dropped (${size[4]} bytes)`,
      ]);
      await until('the peer reports the refusal', () => wire.stderr.some((l) => l.includes('"id":"srv-9"')));
      const refusal = JSON.parse(wire.stderr.find((l) => l.includes('"id":"srv-9"'))!.replace('wire-server: received ', '')) as unknown;
      expect(refusal).toEqual({
        jsonrpc: '2.0',
        id: 'srv-9',
        error: { code: MCP_RESULT_TOO_LARGE, message: `the request was larger than ${bound} bytes, the most one message to this client may carry; it was not read` },
      });
    } finally {
      await wire.close();
    }
  });

  it('holds the answers of requests sent under limitMessages to its bound, and nothing else: tool calls and other messages keep the cap', async () => {
    const wire = await new Wire(bound).start();
    try {
      wire.transport.limitMessages(1000);
      await wire.hold(5, 'tools/list');
      await wire.hold(6, 'tools/call');
      await wire.hold(7, 'tools/list');
      wire.transport.limitMessages(undefined);
      await wire.hold(8, 'tools/list');
      await wire.say(1, [
        ['{"jsonrpc":"2.0","id":6,"result":{"t":"', x(2000), '"}}'],
        ['{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"', x(2000), '"}}'],
        ['{"jsonrpc":"2.0","id":7,"result":{"t":"', x(900), '"}}'],
        ['{"jsonrpc":"2.0","id":8,"result":{"t":"', x(2000), '"}}'],
        ['{"jsonrpc":"2.0","result":{"t":"', x(2000), '"},"id":5}'],
      ]);
      expect((wire.answer(6)?.result as { t: string }).t).toHaveLength(2000);
      expect(wire.received.some((m) => 'method' in m && m.method === 'notifications/message')).toBe(true);
      expect((wire.answer(7)?.result as { t: string }).t).toHaveLength(900);
      expect((wire.answer(8)?.result as { t: string }).t).toHaveLength(2000);
      const refused = wire.answer(5);
      expect(refused?.error?.code).toBe(MCP_RESULT_TOO_LARGE);
      expect(wire.transport.oversizedLimitOf(asMcpError(refused))).toBe(1000);
      expect(wire.transport.refusal).toBe('the server sent a message larger than 1000 bytes');
      expect(wire.errors).toEqual(['the server sent a message larger than 1000 bytes']);
      // The server was not closed for it.
      expect(wire.transport.exit).toBeUndefined();
      await wire.say(9, []);
    } finally {
      await wire.close();
    }
  });

  // Stalling the event loop: the line is read past one pipe read per turn; the text is plain, or
  // dense in escaped quotes (the scanner's slowest input), or in escaped newlines (a text file's).
  it.each([
    ['plain text', 'x'],
    ['escaped quotes', '\\"'],
    ['escaped newlines', '\\n'],
  ])('streams a 100 MB line of %s past in bounded slices: memory stays within the bound, a timer keeps firing, and the next request is answered', { timeout: 120_000 }, async (kind, fill) => {
    const wire = await new Wire().start();
    let maxHeld = 0;
    let worstLag = 0;
    const baseline = process.memoryUsage();
    let peakExternal = 0;
    let last = performance.now();
    let waited = threadSchedule().waitedMs;
    const timer = setInterval(() => {
      const now = performance.now();
      const wait = threadSchedule().waitedMs;
      // Time the box kept this thread off a CPU is its load, not the transport's hold.
      worstLag = Math.max(worstLag, now - last - 5 - (wait - waited));
      last = now;
      waited = wait;
      maxHeld = Math.max(maxHeld, wire.transport.heldBytes);
      const usage = process.memoryUsage();
      peakExternal = Math.max(peakExternal, usage.arrayBuffers - baseline.arrayBuffers);
    }, 5);
    try {
      await wire.hold(2);
      const began = performance.now();
      await wire.say(1, [['{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"', { fill, bytes: 100 * 1024 * 1024 }, '"}]},"id":2}']]);
      console.log(
        `100 MB line of ${kind} skipped in ${(performance.now() - began).toFixed(0)} ms; worst event-loop hold ${worstLag.toFixed(1)} ms, most held ${maxHeld} bytes, peak array buffers +${(peakExternal / 1024 / 1024).toFixed(1)} MiB`,
      );
      expect(wire.answer(2)?.error?.code).toBe(MCP_RESULT_TOO_LARGE);
      expect(wire.answer(1)).toMatchObject({ result: { said: 1 } });
      expect(maxHeld).toBeLessThanOrEqual(CAP);
      expect(worstLag).toBeLessThan(100);
      // Pipe reads come in 64 KiB buffers that are collected as they go; 100 MB held would show.
      expect(peakExternal).toBeLessThan(64 * 1024 * 1024);
      await wire.transport.send({ jsonrpc: '2.0', id: 3, method: 'echo', params: { after: true } });
      await until('the echo after the long line', () => wire.answer(3) !== undefined);
      expect(wire.answer(3)).toMatchObject({ result: { after: true } });
    } finally {
      clearInterval(timer);
      await wire.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// End to end: McpToolSource, the SDK client and an SDK server (oversized-server.mjs).

function ctx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return testToolContext({ signal, principal: { id: 'alice', tenant: 't1', roles: ['worker'] }, workspaceRoot: root });
}

function find(source: McpToolSource, name: string): ToolDefinition {
  const def = source.tools().find((d) => d.manifest.name === name);
  if (!def) throw new Error(`${name} is not registered; have ${source.tools().map((d) => d.manifest.name).join(', ')}`);
  return def;
}

async function rejection(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error('expected the call to fail');
}

/** The text of a result: its first text item, or, where the source left that out as a copy of structuredContent, the mirrored string. */
function text(output: unknown): string {
  const { content, structuredContent } = output as { content: { text?: string }[]; structuredContent?: Record<string, unknown> };
  const first = content[0]?.text;
  if (first !== undefined) return first;
  const mirrored = Object.values(structuredContent ?? {}).find((v) => typeof v === 'string');
  return typeof mirrored === 'string' ? mirrored : '';
}

/** The pid the source logged when the server came up. */
function upPids(logs: readonly string[], server: string): number[] {
  return logs.flatMap((l) => {
    const match = new RegExp(`^MCP server '${server}' is up \\(pid (\\d+)\\)`).exec(l);
    return match ? [Number(match[1])] : [];
  });
}

const tooLarge = (tool: string) => `'${tool}' answered with more than ${CAP} bytes, the most one MCP message may carry; the answer was dropped`;

describe('McpToolSource with a server that answers more than the transport holds', { timeout: 120_000 }, () => {
  const logs: string[] = [];
  let source: McpToolSource;
  let pid: number;
  const config: McpServerConfig = { name: 'big', command: process.execPath, args: [fixture('oversized-server.mjs')], env: {}, tier: 'unisolated' };

  beforeAll(async () => {
    source = await McpToolSource.start(config, new PassThroughRunner(), { workspaceRoot: root, stopGraceMs: 200, log: (m) => logs.push(m) });
    pid = Number(text(await find(source, 'big__pid').handler.invoke({}, ctx())));
  });
  afterAll(() => source.close());

  /** The server is the one that started, up, never restarted, and nothing logged that it stopped. */
  async function stillTheSameServer(): Promise<void> {
    expect(Number(text(await find(source, 'big__pid').handler.invoke({}, ctx())))).toBe(pid);
    expect(alive(pid)).toBe(true);
    expect(source.status()).toMatchObject({ state: 'up', attempt: 0 });
    expect(upPids(logs, 'big')).toEqual([pid]);
    expect(logs.filter((l) => l.includes('stopped unexpectedly'))).toEqual([]);
  }

  it('fails exactly that call with OUTPUT_TOO_LARGE (3 MB of text plus structuredContent), while the calls in flight beside it succeed', async () => {
    const slow = find(source, 'big__slow').handler.invoke({ ms: 1500 }, ctx());
    const echo = find(source, 'big__echo').handler.invoke({ text: 'beside' }, ctx());
    const failure = await rejection(find(source, 'big__big').handler.invoke({ bytes: 3_000_000 }, ctx()));
    expect(failure.reason).toBe('OUTPUT_TOO_LARGE');
    expect(failure.message).toBe(tooLarge('big__big'));
    expect(text(await slow)).toBe('slept 1500 ms');
    expect(text(await echo)).toBe('beside');
    expect(logs.some((l) => new RegExp(`^MCP server 'big': a result of more than ${CAP} bytes for request \\d+ was dropped \\(\\d+ bytes\\); that call fails, the server keeps serving$`).test(l))).toBe(true);
    await stillTheSameServer();
  });

  it('answers a result just under the bound whole', async () => {
    // 2 MB of text, twice (content and structuredContent): about 4 MB on the wire, under 4 MiB.
    const output = await find(source, 'big__big').handler.invoke({ bytes: 2_000_000 }, ctx());
    expect(text(output)).toHaveLength(2_000_000);
    await stillTheSameServer();
  });

  describe('answer spellings on the wire (the id found wherever and however the server writes it)', () => {
    it.each([
      ['the id after the result', undefined, false],
      ['the id before the result', 'id-first', false],
      ['the id key escaped (\\u0069\\u0064) after decoy ids in strings', 'escaped-key', false],
      ['decoy ids nested in the result', 'nested-decoy', false],
      ['whitespace, tabs and CRs between the tokens', 'spaced', false],
      ['an oversized JSON-RPC error instead of a result', 'error', false],
      ['the id echoed as a string', undefined, true],
    ] as const)('%s', async (_, spelling, stringId) => {
      const beside = find(source, 'big__slow').handler.invoke({ ms: 300 }, ctx());
      const failure = await rejection(
        find(source, 'big__wire').handler.invoke({ bytes: CAP + 1, ...(spelling ? { spelling } : {}), ...(stringId ? { stringId } : {}) }, ctx()),
      );
      expect(failure.reason).toBe('OUTPUT_TOO_LARGE');
      expect(failure.message).toBe(tooLarge('big__wire'));
      expect(text(await beside)).toBe('slept 300 ms');
      await stillTheSameServer();
    });
  });

  it("drops the server's own oversized messages, refuses its oversized request, and the call that sent them answers", async () => {
    const output = await find(source, 'big__flood').handler.invoke({ bytes: CAP }, ctx());
    expect(text(output)).toBe('flooded');
    await until('the server reports the refusal', () => logs.some((l) => l.includes('srv-1 answered')));
    expect(logs).toContain(
      `MCP server 'big' stderr: oversized-server: srv-1 answered with error ${MCP_RESULT_TOO_LARGE}: the request was larger than ${CAP} bytes, the most one message to this client may carry; it was not read`,
    );
    const said = (pattern: RegExp) => logs.some((l) => pattern.test(l));
    expect(said(new RegExp(`^MCP server 'big': a notification "notifications/message" of more than ${CAP} bytes was dropped \\(\\d+ bytes\\)$`))).toBe(true);
    expect(said(new RegExp(`^MCP server 'big': a request "sampling/createMessage" of more than ${CAP} bytes \\(id "srv-1"\\) was dropped and refused \\(\\d+ bytes\\)$`))).toBe(true);
    expect(said(new RegExp(`^MCP server 'big': a result of more than ${CAP} bytes with no id that could be read was dropped \\(\\d+ bytes\\)$`))).toBe(true);
    expect(said(new RegExp(`^MCP server 'big': a message of more than ${CAP} bytes with no id that could be read was dropped \\(\\d+ bytes\\)$`))).toBe(true);
    await stillTheSameServer();
  });
});

describe('the real server-filesystem reading a 3 MB file', { timeout: 120_000 }, () => {
  const bin = fileURLToPath(new URL('../../../../node_modules/.bin/mcp-server-filesystem', import.meta.url));
  const logs: string[] = [];
  let source: McpToolSource;
  let files: string;

  beforeAll(async () => {
    files = mkdtempSync(join(root, 'files-'));
    // About 6 MB on the wire: the text in content and again in structuredContent.
    writeFileSync(join(files, 'big.txt'), 'a line of text in a large file\n'.repeat(100_000));
    writeFileSync(join(files, 'small.txt'), 'small file\n');
    const config: McpServerConfig = { name: 'fs', command: bin, args: [files], env: {}, tier: 'unisolated' };
    source = await McpToolSource.start(config, new PassThroughRunner(), { workspaceRoot: root, stopGraceMs: 500, log: (m) => logs.push(m) });
  });
  afterAll(() => source.close());

  it('fails read_text_file with OUTPUT_TOO_LARGE naming the bound, and the next call succeeds on the same process without a restart', async () => {
    const [pid] = upPids(logs, 'fs');
    expect(pid).toBeGreaterThan(0);
    const before = source.status();
    const failure = await rejection(find(source, 'fs__read_text_file').handler.invoke({ path: join(files, 'big.txt') }, ctx()));
    expect(failure.reason).toBe('OUTPUT_TOO_LARGE');
    expect(failure.message).toBe(tooLarge('fs__read_text_file'));
    expect(failure.message).not.toContain('a line of text');
    expect(logs.some((l) => new RegExp(`^MCP server 'fs': a result of more than ${CAP} bytes for request \\d+ was dropped \\(\\d+ bytes\\)`).test(l))).toBe(true);

    const small = await find(source, 'fs__read_text_file').handler.invoke({ path: join(files, 'small.txt') }, ctx());
    expect(text(small)).toBe('small file\n');
    expect(alive(pid!)).toBe(true);
    expect(upPids(logs, 'fs')).toEqual([pid]);
    expect(source.status()).toMatchObject({ state: 'up', attempt: before.attempt });
    expect(logs.filter((l) => l.includes('stopped unexpectedly'))).toEqual([]);
  });
});
