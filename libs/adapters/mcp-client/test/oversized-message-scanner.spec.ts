import { describe, expect, it } from 'vitest';
import { timeOnThread } from '@toolgate/testing';
import { MAX_ID_BYTES, MAX_METHOD_BYTES, OversizedMessageScanner, type SkippedMessage } from '../src/oversized-message.js';

// The scanner reads past a line the transport will not hold and must find what JSON.parse would:
// the top-level id and kind, never an id nested in the result or written inside a string. Every
// well-formed line below is checked against JSON.parse itself, fed whole, split in two at every
// byte, byte by byte and in random pieces: a piece boundary may fall anywhere.

type Found = Omit<SkippedMessage, 'bytes'>;

function scan(pieces: readonly Uint8Array[]): SkippedMessage {
  const scanner = new OversizedMessageScanner();
  for (const piece of pieces) scanner.feed(piece);
  return scanner.finish();
}

/** What the scan of `line` in one piece found, less its size. */
function scanned(line: string): Found {
  const { bytes, ...found } = scan([Buffer.from(line)]);
  expect(bytes).toBe(Buffer.byteLength(line));
  return found;
}

/** What JSON.parse says of a well-formed line. */
function oracle(line: string): Found {
  const value: unknown = JSON.parse(line);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'unknown' };
  const record = value as Record<string, unknown>;
  const id = record['id'];
  const usable = typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
  const kind = 'result' in record || 'error' in record ? 'response' : 'method' in record ? ('id' in record ? 'request' : 'notification') : 'unknown';
  const method = record['method'];
  return { kind, ...(usable ? { id: id as string | number } : {}), ...(typeof method === 'string' ? { method } : {}) };
}

/** Every way the test feeds one line: whole, each two-piece split, byte by byte, and seeded random pieces. */
function chunkings(bytes: Buffer): Buffer[][] {
  const ways: Buffer[][] = [[bytes]];
  for (let at = 0; at <= bytes.length; at++) ways.push([bytes.subarray(0, at), bytes.subarray(at)]);
  ways.push([...bytes].map((_, i) => bytes.subarray(i, i + 1)));
  let seed = bytes.length * 7919 + 17;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let round = 0; round < 8; round++) {
    const pieces: Buffer[] = [];
    for (let at = 0; at < bytes.length; ) {
      const size = 1 + (next() % 7);
      pieces.push(bytes.subarray(at, at + size));
      at += size;
    }
    ways.push(pieces);
  }
  return ways;
}

/** Asserts the scan of `line` in every chunking equals `expected` (JSON.parse's reading unless given). */
function expectScan(line: string, expected: Found = oracle(line)): void {
  const bytes = Buffer.from(line, 'utf8');
  for (const pieces of chunkings(bytes)) {
    expect(scan(pieces), `${JSON.stringify(line)} in ${pieces.length} piece(s)`).toEqual({ bytes: bytes.length, ...expected });
  }
}

describe('OversizedMessageScanner', () => {
  describe('nested ids (an id inside result, error or params is not the message id)', () => {
    it.each([
      '{"jsonrpc":"2.0","result":{"id":99},"id":7}',
      '{"jsonrpc":"2.0","id":7,"result":{"id":99,"deeper":{"id":98,"list":[{"id":97},[{"id":96}]]}}}',
      '{"result":{"content":[{"type":"text","id":5}]},"jsonrpc":"2.0"}',
      '{"result":[{"id":1},{"id":2}],"id":3}',
      '{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"x","data":{"id":5}}}',
      '{"params":{"id":1},"method":"notifications/message","jsonrpc":"2.0"}',
      '{"jsonrpc":"2.0","method":"sampling/createMessage","params":{"id":8,"messages":[{"id":9}]},"id":"srv-1"}',
      `{"result":${'['.repeat(500)}{"id":1}${']'.repeat(500)},"id":2}`,
      `{"result":${'{"a":'.repeat(300)}{"id":1}${'}'.repeat(300)},"id":2}`,
    ])('%s', (line) => expectScan(line));
  });

  describe('ids inside strings (keys and values that contain the text "id")', () => {
    it.each([
      '{"result":{"text":"\\"id\\":5,"},"note":"\\"id\\": 6","id":7}',
      '{"result":{"text":"{\\"id\\":5}"},"jsonrpc":"2.0"}',
      '{"jsonrpc":"2.0","result":{"\\"id\\"":5},"id":"id"}',
      '{"\\"id\\"":1,"result":{}}',
      '{"result":{},"text":"id","id":"\\"id\\":9"}',
      '{"result":"\\"},\\"id\\":5,\\"x\\":{\\"","id":6}',
    ])('%s', (line) => expectScan(line));
  });

  describe('escaped quotes and backslash runs (a quote after an odd run of backslashes is escaped)', () => {
    it.each([
      '{"result":{"t":"a\\"b"},"id":1}',
      '{"result":{"t":"a\\\\"},"id":2}',
      '{"result":{"t":"a\\\\\\"b"},"id":3}',
      '{"result":{"t":"\\\\\\\\\\\\\\\\"},"id":4}',
      '{"result":{"t":"\\\\\\\\\\\\\\"\\""},"id":5}',
      '{"result":{"t":"\\"\\"\\"\\\\"},"id":6}',
      '{"result":{"t":"\\\\"},"id":"\\\\"}',
      '{"result":{"t":"x"},"id":"q\\"uote\\\\"}',
      '{"result":{"t":"\\/\\b\\f\\n\\r\\t"},"id":7}',
      '{"result":{"\\\\":"\\\\","\\"":"\\""},"id":8}',
    ])('%s', (line) => expectScan(line));
  });

  describe('unicode escapes and UTF-8 (keys compared as decoded; multi-byte sequences split anywhere)', () => {
    it.each([
      '{"\\u0069d":7,"result":{}}',
      '{"i\\u0064":7,"result":{}}',
      '{"\\u0069\\u0064":"x","\\u0072esult":{}}',
      '{"\\u0049D":7,"result":{}}',
      '{"result":{},"id":"\\u00e9t\\u00e9"}',
      '{"result":{},"id":"\\ud83d\\ude00"}',
      '{"result":{"t":"é😀中"},"id":"é😀中"}',
      '{"r\\u00e9sult":{},"id":1}',
      '{"m\\u0065thod":"notifications\\/message"}',
      '{"result":{"😀":"😀","id😀":1},"id😀":2,"id":3}',
    ])('%s', (line) => expectScan(line));
  });

  describe('whitespace between tokens (spaces, tabs, CR, before and after every token)', () => {
    it.each([
      ' \t{ "id" :\r 7 , "result" : { } } \r',
      '{"result":{}\t,\t"id"\t:\t"a"\t}',
      '\r\r{\r"id"\r:\r-1\r,\r"error"\r:\r{\r}\r}\r',
      '{ "method" : "notifications/message" , "params" : [ 1 , 2 ] }',
      '{"result" :[ ] ,"id":0 }',
    ])('%s', (line) => expectScan(line));
  });

  describe('the id before or after the result', () => {
    const result = '{"content":[{"type":"text","text":"hello"}],"structuredContent":{"id":1}}';
    it.each([
      `{"jsonrpc":"2.0","id":42,"result":${result}}`,
      `{"jsonrpc":"2.0","result":${result},"id":42}`,
      `{"id":42,"result":${result},"jsonrpc":"2.0"}`,
      `{"result":${result},"jsonrpc":"2.0","id":42}`,
    ])('%s', (line) => expectScan(line));
  });

  describe('numeric and string ids', () => {
    it.each(['0', '-1', '7', '12345678901', '1e3', '1E+2', '7.0', '-0', '""', '"7"', '"abc"', '"a b"', '"a\\nb"', '"550e8400-e29b-41d4-a716-446655440000"'])(
      'id %s',
      (id) => {
        expectScan(`{"jsonrpc":"2.0","result":{},"id":${id}}`);
        expectScan(`{"jsonrpc":"2.0","id":${id},"result":{}}`);
      },
    );

    it.each(['1.5', '1e-1', 'null', 'true', 'false', '{}', '[]', '{"id":1}', '[1]'])('reports no id for id %s (not a string or an integer)', (id) => {
      expectScan(`{"jsonrpc":"2.0","result":{},"id":${id}}`);
      expectScan(`{"jsonrpc":"2.0","id":${id},"result":{"id":3}}`);
    });
  });

  describe('repeated ids (the last one counts, as for JSON.parse)', () => {
    it.each([
      '{"id":1,"result":{},"id":2}',
      '{"id":1,"id":null,"result":{}}',
      '{"id":null,"result":{},"id":"x"}',
      '{"\\u0069d":1,"id":2,"i\\u0064":3,"result":{}}',
      '{"id":{"id":1},"result":{},"id":4}',
    ])('%s', (line) => expectScan(line));
  });

  describe('requests and notifications of the server', () => {
    it.each([
      '{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"maxTokens":5}}',
      '{"params":{"maxTokens":5},"method":"elicitation/create","jsonrpc":"2.0","id":"e1"}',
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}',
      '{"jsonrpc":"2.0","method":"notifications\\/progress","params":{"progressToken":1}}',
      '{"jsonrpc":"2.0","method":"x","id":null}',
      '{"jsonrpc":"2.0","method":7,"id":1}',
      '{"jsonrpc":"2.0","method":"x","result":{},"id":1}',
      '{"jsonrpc":"2.0","method":"a","method":"b"}',
    ])('%s', (line) => expectScan(line));
  });

  describe('not one JSON object (nothing to answer)', () => {
    it.each(['[{"jsonrpc":"2.0","id":1,"result":{}}]', '"id"', '7', 'null', 'true', '{}', '{"jsonrpc":"2.0"}'])('well-formed %s', (line) => expectScan(line));

    it.each([
      ['truncated in a string', '{"jsonrpc":"2.0","id":1,"result":{"text":"abc'],
      ['truncated after a value', '{"jsonrpc":"2.0","id":1,"result":{}'],
      ['truncated in an id', '{"result":{},"id":12'],
      ['trailing text', '{"id":1,"result":{}} x'],
      ['two objects on one line', '{"id":1,"result":{}}{"id":2,"result":{}}'],
      ['a missing colon', '{"id" 1,"result":{}}'],
      ['a missing comma', '{"id":1 "result":{}}'],
      ['a trailing comma', '{"id":1,"result":{},}'],
      ['a leading comma', '{,"id":1,"result":{}}'],
      ['an unquoted key', '{id:1,"result":{}}'],
      ['an invalid escape in a key', '{"\\x69d":1,"result":{}}'],
      ['an invalid escape in the id', '{"result":{},"id":"a\\qb"}'],
      ['a misspelt literal as the id', '{"result":{},"id":nul}'],
      ['an extra closing bracket', '{"id":1,"result":{}}}'],
      ['an empty line', ''],
      ['only whitespace', ' \t\r'],
    ])('%s', (_, line) => expectScan(line, { kind: 'unknown' }));
  });

  describe('bounded capture (an id or method too long to keep counts as none; a long key is no member)', () => {
    it('keeps an id of exactly the bound and none longer', () => {
      const fits = 'a'.repeat(MAX_ID_BYTES);
      expectScan(`{"result":{},"id":"${fits}"}`, { kind: 'response', id: fits });
      expect(scanned(`{"result":{},"id":"${fits}b"}`)).toEqual({ kind: 'response' });
      const one = `1.${'0'.repeat(MAX_ID_BYTES - 2)}`;
      expect(scanned(`{"result":{},"id":${one}}`)).toEqual({ kind: 'response', id: 1 });
      expect(scanned(`{"result":{},"id":${one}0}`)).toEqual({ kind: 'response' });
      // A number too large for a double is no integer id either.
      expect(scanned(`{"result":{},"id":1${'0'.repeat(400)}}`)).toEqual({ kind: 'response' });
    });

    it('keeps a method of exactly the bound and none longer, still telling a request from a notification', () => {
      const fits = 'm'.repeat(MAX_METHOD_BYTES);
      expect(scanned(`{"method":"${fits}","id":1}`)).toEqual({ kind: 'request', id: 1, method: fits });
      expect(scanned(`{"method":"${fits}x","id":1}`)).toEqual({ kind: 'request', id: 1 });
      expect(scanned(`{"method":"${fits}x"}`)).toEqual({ kind: 'notification' });
    });

    it('reads a 1 MiB key as no member, and the id after it', () => {
      expect(scanned(`{"${'k'.repeat(1024 * 1024)}":1,"result":{},"id":5}`)).toEqual({ kind: 'response', id: 5 });
    });
  });

  describe('catastrophic input (the scan stays linear, whatever the text)', () => {
    // 16 MiB each: a quadratic scan would take hours; a linear one takes tens of milliseconds.
    const size = 16 * 1024 * 1024;
    const cases: [string, () => string][] = [
      ['escaped quotes', () => '\\"'.repeat(size / 2)],
      ['escaped backslashes', () => '\\\\'.repeat(size / 2)],
      ['backslash runs before quotes', () => '\\\\\\\\\\\\\\"'.repeat(size / 8)],
      ['text with an escape every other byte', () => 'a\\n'.repeat(size / 3)],
      ['one run of plain text', () => 'x'.repeat(size)],
    ];
    it.each(cases)('%s', (_, text) => {
      const line = Buffer.from(`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"${text()}"}]},"id":11}`);
      const pieces: Buffer[] = [];
      for (let at = 0; at < line.length; at += 65_536) pieces.push(line.subarray(at, at + 65_536));
      const { value, ms } = timeOnThread(() => scan(pieces));
      expect(value).toEqual({ bytes: line.length, kind: 'response', id: 11 });
      expect(ms).toBeLessThan(1500);
    });

    it('nested brackets 100 000 deep', () => {
      const line = Buffer.from(`{"result":${'['.repeat(100_000)}${']'.repeat(100_000)},"id":12}`);
      const { value, ms } = timeOnThread(() => scan([line]));
      expect(value).toEqual({ bytes: line.length, kind: 'response', id: 12 });
      expect(ms).toBeLessThan(1500);
    });
  });
});
