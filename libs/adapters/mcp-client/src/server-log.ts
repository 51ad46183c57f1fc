import type { Clock } from '@toolgate/contracts';
import { sanitiseMessage } from './mcp-tool-schema.js';

/** The operator log's levels, which the MCP server's own eight are mapped onto. */
export type OperatorLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The operator log as the adapter writes it: a line and, when it is not `info`, its level. */
export type OperatorLog = (message: string, level?: OperatorLogLevel) => void;

/** MCP's syslog levels (`notifications/message`) on the operator log's four. */
export const MCP_LOG_LEVELS: Readonly<Record<string, OperatorLogLevel>> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'error',
  alert: 'error',
  emergency: 'error',
};

/** How much of a server's `notifications/message` reaches the operator log. */
export const SERVER_LOG_LIMITS = {
  /** Characters of one message's text, after flattening. */
  messageChars: 500,
  /** Messages logged per second on average; the rest are counted and dropped. */
  perSecond: 20,
  /** Messages that may come at once before the rate applies. */
  burst: 50,
} as const;

/**
 * A sink for one server process's `notifications/message` params: each message on one line at
 * its level (`MCP_LOG_LEVELS`), naming the server and its logger, flattened and cut to
 * `SERVER_LOG_LIMITS.messageChars`; at most `perSecond` a second after a `burst`, with the number
 * dropped said once the rate allows again; and at most `limitBytes` characters of text per
 * process, after which one line says the rest is not logged. So a server that floods its log
 * cannot flood the operator's. The text is the server's: logged for the operator, never shown to agents.
 */
export function serverLogSink(server: string, limitBytes: number, log: OperatorLog, clock: Clock): (params: unknown) => void {
  let budget = limitBytes;
  let tokens: number = SERVER_LOG_LIMITS.burst;
  let refilledAt = clock.now();
  let dropped = 0;
  return (params) => {
    if (budget <= 0) return;
    const now = clock.now();
    tokens = Math.min(SERVER_LOG_LIMITS.burst, tokens + ((now - refilledAt) / 1000) * SERVER_LOG_LIMITS.perSecond);
    refilledAt = now;
    if (tokens < 1) {
      dropped += 1;
      return;
    }
    tokens -= 1;
    if (dropped > 0) {
      log(`MCP server '${server}': ${dropped} log message(s) dropped (more than ${SERVER_LOG_LIMITS.perSecond} a second)`, 'warn');
      dropped = 0;
    }
    const { level, logger, data } = (typeof params === 'object' && params !== null ? params : {}) as Record<string, unknown>;
    // Own keys only: a level such as `__proto__` must not find something inherited.
    const known = typeof level === 'string' && Object.hasOwn(MCP_LOG_LEVELS, level) ? level : undefined;
    const mapped = known === undefined ? 'info' : (MCP_LOG_LEVELS[known] ?? 'info');
    const shownLevel = known ?? 'unknown level';
    const from = typeof logger === 'string' && logger !== '' ? `, logger "${sanitiseMessage(logger, 60)}"` : '';
    const text = sanitiseMessage(textOf(data), SERVER_LOG_LIMITS.messageChars);
    budget -= text.length;
    log(`MCP server '${server}' log (${shownLevel}${from}): ${text}`, mapped);
    if (budget <= 0) log(`MCP server '${server}': more than ${limitBytes} characters of log messages; the rest is not logged`, 'warn');
  };
}

/** A container being written by `textOf`: its values (an object's keys with it) and the next one to write. */
type Frame = { readonly items: readonly unknown[]; readonly keys?: readonly string[]; next: number };

/**
 * A message's `data` as text: a string as it is, anything else as JSON, cut before flattening.
 * The JSON is written piece by piece, depth first with a stack of its own (a deep `data` cannot
 * overflow the call stack), and stops at the cut, so an array of a million values costs what its
 * first 2,000 characters do, not a stringify of all of it (red team F2). An object's keys are
 * listed whole when it is reached; the transport holds a notification to 64 KiB, which bounds them.
 */
function textOf(data: unknown): string {
  const max = SERVER_LOG_LIMITS.messageChars * 4;
  if (typeof data === 'string') return data.slice(0, max);
  if (data === undefined) return '';
  let out = '';
  const stack: Frame[] = [];
  // Writes one value, or opens it: a container goes on the stack and is written from there.
  const open = (value: unknown): void => {
    if (Array.isArray(value)) {
      out += '[';
      stack.push({ items: value, next: 0 });
    } else if (typeof value === 'object' && value !== null) {
      out += '{';
      const keys = Object.keys(value);
      stack.push({ items: keys.map((key) => (value as Record<string, unknown>)[key]), keys, next: 0 });
    } else out += JSON.stringify(value) ?? 'null';
  };
  open(data);
  while (stack.length > 0 && out.length < max) {
    const frame = stack[stack.length - 1] as Frame;
    if (frame.next >= frame.items.length) {
      out += frame.keys === undefined ? ']' : '}';
      stack.pop();
      continue;
    }
    const at = frame.next++;
    if (at > 0) out += ',';
    if (frame.keys !== undefined) out += `${JSON.stringify(frame.keys[at])}:`;
    open(frame.items[at]);
  }
  return out.slice(0, max);
}
