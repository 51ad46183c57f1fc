import { sanitiseMessage } from './mcp-tool-schema.js';

/**
 * A sink that logs one process's stderr line by line, up to `limitBytes`, and drops the rest, so
 * a chatty or hostile server cannot flood the operator log. Its text is sanitised, never shown
 * to agents.
 */
export function stderrLogSink(server: string, limitBytes: number, log: (message: string) => void): (chunk: Buffer) => void {
  let budget = limitBytes;
  let pending = '';
  const flush = (line: string) => {
    const text = sanitiseMessage(line, 500);
    if (text) log(`MCP server '${server}' stderr: ${text}`);
  };
  return (chunk) => {
    if (budget <= 0) return;
    const text = chunk.toString('utf8');
    budget -= chunk.length;
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    lines.forEach(flush);
    // A line without an end is logged in pieces rather than buffered without bound.
    if (pending.length > 500 || budget <= 0) {
      flush(pending);
      pending = '';
    }
    if (budget <= 0) {
      log(`MCP server '${server}': more than ${limitBytes} bytes of stderr; the rest is not logged`);
    }
  };
}
