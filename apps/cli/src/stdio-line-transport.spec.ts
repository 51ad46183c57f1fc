import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { StdioLineTransport } from './stdio-line-transport.js';

// Answers are arbitrary JSON-RPC that each test narrows with expect(); `any` keeps them terse.
/* eslint-disable @typescript-eslint/no-explicit-any */

function open(maxLineBytes?: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new StdioLineTransport({ stdin, stdout, ...(maxLineBytes ? { maxLineBytes } : {}) });
  const received: JSONRPCMessage[] = [];
  const answers: any[] = [];
  let buffer = '';
  stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let i = buffer.indexOf('\n'); i !== -1; i = buffer.indexOf('\n')) {
      answers.push(JSON.parse(buffer.slice(0, i)));
      buffer = buffer.slice(i + 1);
    }
  });
  transport.onmessage = (message) => received.push(message);
  return { stdin, stdout, transport, received, answers };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const ping = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`;

let opened: ReturnType<typeof open>[] = [];
afterEach(async () => {
  await Promise.all(opened.map((o) => o.transport.close()));
  opened = [];
});
function started(maxLineBytes?: number) {
  const o = open(maxLineBytes);
  opened.push(o);
  void o.transport.start();
  return o;
}

describe('StdioLineTransport framing', () => {
  it('delivers one message per line, however the writes split it, with CRLF and blank lines', async () => {
    const { stdin, received, answers } = started();
    const line = ping(1);
    stdin.write(line.slice(0, 5));
    stdin.write(line.slice(5, 20));
    stdin.write(`${line.slice(20)}\r\n\n${ping(2).replace('\n', '\r\n')}`);
    await settle();
    expect(received).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    expect(answers).toEqual([]);
  });

  it('writes each message as one line', async () => {
    const { transport, answers } = started();
    await transport.send({ jsonrpc: '2.0', id: 9, result: { text: 'a\nb' } } as JSONRPCMessage);
    await settle();
    expect(answers).toEqual([{ jsonrpc: '2.0', id: 9, result: { text: 'a\nb' } }]);
  });

  it('closes once stdin ends, and says so to onclose and `ended`', async () => {
    const { stdin, transport } = started();
    let closed = false;
    transport.onclose = () => (closed = true);
    stdin.end();
    await transport.ended;
    expect(closed).toBe(true);
    await expect(transport.send({ jsonrpc: '2.0', id: 1, result: {} } as JSONRPCMessage)).rejects.toThrow(/closed/);
  });
});

describe('malformed input', () => {
  it('answers a line that is not JSON with -32700 and id null, in several spellings', async () => {
    const { stdin, received, answers } = started();
    const spellings = ['not json', '{"jsonrpc":"2.0","id":1', "{'a':1}", '\u0000\u0001', '{"jsonrpc":"2.0",}', 'NaN'];
    for (const line of spellings) stdin.write(`${line}\n`);
    await settle();
    expect(answers).toEqual(spellings.map(() => ({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error/) } })));
    expect(received).toEqual([]);
  });

  it('answers JSON that is not one JSON-RPC message with -32600, naming its id when it has one', async () => {
    const { stdin, received, answers } = started();
    const cases: [string, string | number | null][] = [
      ['[]', null],
      [`[${ping(1).trim()},${ping(2).trim()}]`, null],
      ['{}', null],
      ['17', null],
      ['"ping"', null],
      ['null', null],
      ['{"jsonrpc":"1.0","id":5,"method":"ping"}', 5],
      ['{"jsonrpc":"2.0","id":"abc","method":42}', 'abc'],
      ['{"jsonrpc":"2.0","id":[1],"method":"ping"}', null],
    ];
    for (const [line] of cases) stdin.write(`${line}\n`);
    await settle();
    expect(answers).toEqual(cases.map(([, id]) => ({ jsonrpc: '2.0', id, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } })));
    expect(received).toEqual([]);
  });

  it('keeps serving after bad lines', async () => {
    const { stdin, received } = started();
    stdin.write(`garbage\n[]\n${ping(3)}`);
    await settle();
    expect(received).toEqual([{ jsonrpc: '2.0', id: 3, method: 'ping' }]);
  });

  it('refuses a line over the cap once, holds no more than the cap, and reads the next line', async () => {
    const { stdin, received, answers } = started(1024);
    for (let i = 0; i < 50; i++) stdin.write('x'.repeat(512));
    await settle();
    // Refused as soon as it crossed the cap, before its newline arrived.
    expect(answers).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: "message exceeds the bridge's limit of 1024 bytes" } }]);
    stdin.write(`tail of the long line\n${ping(4)}`);
    await settle();
    expect(answers).toHaveLength(1);
    expect(received).toEqual([{ jsonrpc: '2.0', id: 4, method: 'ping' }]);
  });

  it('takes a line of exactly the cap', async () => {
    const message = ping(5).trim();
    const { stdin, received, answers } = started(Buffer.byteLength(message));
    stdin.write(`${message}\n`);
    await settle();
    expect(answers).toEqual([]);
    expect(received).toHaveLength(1);
  });
});
