import { describe, expect, it } from 'vitest';
import { timeOnThread } from '@toolgate/testing';
import { MCP_LOG_LEVELS, SERVER_LOG_LIMITS, serverLogSink, type OperatorLogLevel } from '../src/server-log.js';

function sink(limitChars = 16 * 1024) {
  const lines: { message: string; level: OperatorLogLevel | undefined }[] = [];
  let now = 1_000_000;
  const clock = { now: () => now };
  const write = serverLogSink('files', limitChars, (message, level) => lines.push({ message, level }), clock);
  return { lines, write, advance: (ms: number) => (now += ms) };
}

describe('serverLogSink', () => {
  it('logs each of MCP’s eight levels at the operator level it maps to, naming the server and logger', () => {
    const { lines, write } = sink();
    for (const level of ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']) write({ level, logger: 'db', data: `a ${level} line` });
    expect(lines).toEqual([
      { message: `MCP server 'files' log (debug, logger "db"): a debug line`, level: 'debug' },
      { message: `MCP server 'files' log (info, logger "db"): a info line`, level: 'info' },
      { message: `MCP server 'files' log (notice, logger "db"): a notice line`, level: 'info' },
      { message: `MCP server 'files' log (warning, logger "db"): a warning line`, level: 'warn' },
      { message: `MCP server 'files' log (error, logger "db"): a error line`, level: 'error' },
      { message: `MCP server 'files' log (critical, logger "db"): a critical line`, level: 'error' },
      { message: `MCP server 'files' log (alert, logger "db"): a alert line`, level: 'error' },
      { message: `MCP server 'files' log (emergency, logger "db"): a emergency line`, level: 'error' },
    ]);
    expect(Object.keys(MCP_LOG_LEVELS)).toHaveLength(8);
  });

  it('writes structured data as JSON on one line, and omits an absent logger', () => {
    const { lines, write } = sink();
    write({ level: 'info', data: { rows: 3, table: 'users' } });
    write({ level: 'info', data: null });
    expect(lines.map((l) => l.message)).toEqual([`MCP server 'files' log (info): {"rows":3,"table":"users"}`, `MCP server 'files' log (info): null`]);
  });

  describe('hostile log messages', () => {
    it.each([
      ['line breaks', 'ok\n\n[toolgate] error fake operator line', 'ok [toolgate] error fake operator line'],
      ['a carriage return', 'ok\rOVERWRITTEN', 'ok OVERWRITTEN'],
      // The whole sequence goes, not only its ESC (red team F7): no `]0;title` or `[31m` residue.
      ['a terminal escape', 'ok\u001b]0;title\u0007 then', 'ok then'],
      ['a colour escape', 'ok \u001b[31mred\u001b[0m then', 'ok red then'],
      ['an unterminated OSC', 'ok \u001b]8;;https://x', 'ok'],
      ['a bidi override', 'ok \u202egnp.exe\u202c then', 'ok gnp.exe then'],
      ['a bidi isolate and a zero-width space', 'ok \u2066a\u200bb\u2069 then', 'ok ab then'],
      ['a C1 CSI', 'ok \u009b31m then', 'ok 31m then'],
      ['U+2028', 'ok\u2028next', 'ok next'],
      ['NUL', 'ok\u0000next', 'ok next'],
    ])('flattens %s in the text', (_class, data, shown) => {
      const { lines, write } = sink();
      write({ level: 'info', logger: 'x', data });
      expect(lines[0]?.message).toBe(`MCP server 'files' log (info, logger "x"): ${shown}`);
    });

    it('flattens and cuts a logger name with line breaks', () => {
      const { lines, write } = sink();
      write({ level: 'info', logger: `a\nb${'c'.repeat(100)}`, data: 'x' });
      expect(lines[0]?.message).toMatch(/^MCP server 'files' log \(info, logger "a bc{40,60}…"\): x$/);
    });

    it('logs an unknown level as info, saying so, and params that are not an object as an empty message', () => {
      const { lines, write } = sink();
      write({ level: 'shout', data: 'x' });
      write({ level: '__proto__', data: 'y' });
      write('not params');
      expect(lines).toEqual([
        { message: `MCP server 'files' log (unknown level): x`, level: 'info' },
        { message: `MCP server 'files' log (unknown level): y`, level: 'info' },
        { message: `MCP server 'files' log (unknown level): `, level: 'info' },
      ]);
    });

    it('cuts one long message to the message bound, a huge string and huge data alike', () => {
      const { lines, write } = sink(10_000_000);
      write({ level: 'info', data: 'x'.repeat(1_000_000) });
      write({ level: 'info', data: { blob: 'y'.repeat(1_000_000) } });
      for (const line of lines) expect(line.message.length).toBeLessThan(SERVER_LOG_LIMITS.messageChars + 60);
    });
  });

  describe('event-loop freeze by a large data value (red team F2)', () => {
    it('serialises data only up to the cut: 1,000,000 values cost what their first 2,000 characters do', () => {
      const data = { rows: Array.from({ length: 1_000_000 }, (_, i) => ({ [i.toString(36)]: i })) };
      const { lines, write } = sink();
      const { ms: elapsed } = timeOnThread(() => write({ level: 'info', data }));
      expect(lines[0]?.message.startsWith(`MCP server 'files' log (info): {"rows":[{"0":0},{"1":1},{"2":2},`)).toBe(true);
      expect(lines[0]?.message.length).toBeLessThan(600);
      expect(elapsed).toBeLessThan(100);
    });

    it.each([
      ['nested objects and arrays', { a: [1, 'two', null, { b: true }], c: { d: [] as unknown[], e: {} } }],
      ['strings needing escapes in keys and values', { 'k"ey\\': 'v"al\\', u: '' }],
      ['an array of arrays', [[1, [2, [3]]], []]],
      ['a number', 42],
      ['a boolean', false],
    ])('writes %s exactly as JSON.stringify does', (_class, data) => {
      const { lines, write } = sink();
      write({ level: 'info', data });
      expect(lines[0]?.message).toBe(`MCP server 'files' log (info): ${JSON.stringify(data)}`);
    });

    it('does not overflow the stack on data nested 100,000 levels', () => {
      let data: unknown = 'leaf';
      for (let i = 0; i < 100_000; i++) data = [data];
      const { lines, write } = sink();
      write({ level: 'info', data });
      expect(lines[0]?.message).toBe(`MCP server 'files' log (info): ${'['.repeat(SERVER_LOG_LIMITS.messageChars - 1)}…`);
    });
  });

  describe('a server that floods its log', () => {
    it('logs a burst, drops the rest at the rate bound, and says how many were dropped once the rate allows', () => {
      const { lines, write, advance } = sink(10_000_000);
      for (let i = 0; i < 1000; i++) write({ level: 'info', data: `m${i}` });
      expect(lines).toHaveLength(SERVER_LOG_LIMITS.burst);
      advance(1000);
      write({ level: 'error', data: 'after the flood' });
      expect(lines.slice(SERVER_LOG_LIMITS.burst)).toEqual([
        { message: `MCP server 'files': ${1000 - SERVER_LOG_LIMITS.burst} log message(s) dropped (more than ${SERVER_LOG_LIMITS.perSecond} a second)`, level: 'warn' },
        { message: `MCP server 'files' log (error): after the flood`, level: 'error' },
      ]);
    });

    it('keeps to the rate over a long flood: about perSecond a second', () => {
      const { lines, write, advance } = sink(10_000_000);
      // 100 messages a second for 10 seconds.
      for (let i = 0; i < 1000; i++) {
        write({ level: 'info', data: `m${i}` });
        advance(10);
      }
      const logged = lines.filter((l) => l.message.includes(' log (info)')).length;
      expect(logged).toBeLessThanOrEqual(SERVER_LOG_LIMITS.burst + 10 * SERVER_LOG_LIMITS.perSecond + 1);
      expect(logged).toBeGreaterThanOrEqual(10 * SERVER_LOG_LIMITS.perSecond);
    });

    it('stops for good after the per-process budget, saying so once', () => {
      const { lines, write, advance } = sink(100);
      for (let i = 0; i < 50; i++) {
        write({ level: 'info', data: 'x'.repeat(30) });
        advance(1000);
      }
      expect(lines.filter((l) => l.message.includes(' log (info)'))).toHaveLength(4);
      expect(lines.filter((l) => l.message === `MCP server 'files': more than 100 characters of log messages; the rest is not logged`)).toHaveLength(1);
      expect(lines).toHaveLength(5);
    });
  });
});
