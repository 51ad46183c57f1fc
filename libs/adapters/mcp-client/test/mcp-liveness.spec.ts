import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError, ToolNotReachedError, type ToolContext, type ToolDefinition } from '@toolgate/contracts';
// Stands in for the tier-1/tier-2 runners: the command unchanged with a minimal environment.
import { PassThroughRunner, testToolContext } from '@toolgate/testing';
import { McpToolSource, type McpServerConfig, type McpToolSourceOptions } from '../src/index.js';

const fixture = fileURLToPath(new URL('./fixtures/liveness-server.mjs', import.meta.url));
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'toolgate-mcp-liveness-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ctx = (): ToolContext => testToolContext({ signal: new AbortController().signal, principal: { id: 'alice', tenant: 't1', roles: ['worker'] }, workspaceRoot: root });

const server = (overrides: Partial<McpServerConfig> = {}): McpServerConfig => ({
  name: 'live',
  command: process.execPath,
  args: [fixture],
  env: {},
  tier: 'unisolated',
  timeoutMs: 5_000,
  ...overrides,
});

async function start(config: McpServerConfig, opts: Partial<McpToolSourceOptions> = {}) {
  const logs: string[] = [];
  const source = await McpToolSource.start(config, new PassThroughRunner(), {
    workspaceRoot: root,
    stopGraceMs: 200,
    backoff: { initialMs: 100, maxMs: 400, stableMs: 60_000 },
    log: (m) => logs.push(m),
    ...opts,
  });
  return { source, logs };
}

function tool(source: McpToolSource, name: string): ToolDefinition {
  const def = source.tools().find((d) => d.manifest.name === `live__${name}`);
  if (!def) throw new Error(`live__${name} is not registered`);
  return def;
}

const text = (out: unknown) => (out as { content: { text: string }[] }).content[0]?.text ?? '';

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error('expected the call to fail');
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (check()) return Date.now() - started;
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

describe('a server error coded like a closed connection (-32000 and the rest of the server-error range)', { timeout: 30_000 }, () => {
  it('is the server refusing the call, with its text, not an exit: the source stays up and serves on', async () => {
    const { source, logs } = await start(server());
    try {
      const pid = Number(text(await tool(source, 'pid').handler.invoke({}, ctx())));
      for (const code of [-32000, -32001, -32002, -32050, -32099]) {
        const error = await failure(tool(source, 'refuse').handler.invoke({ code }, ctx()));
        expect(error.reason, String(code)).toBe('MCP_PROTOCOL_ERROR');
        expect(error.message, String(code)).toBe(`MCP server 'live' refused the call (error ${code}): busy: try later`);
        expect(source.status().state, String(code)).toBe('up');
      }
      // The same process: nothing restarted, nothing logged as a stop.
      expect(Number(text(await tool(source, 'pid').handler.invoke({}, ctx())))).toBe(pid);
      expect(alive(pid)).toBe(true);
      expect(logs.some((l) => l.includes('stopped unexpectedly') || l.includes('restart attempt'))).toBe(false);
    } finally {
      await source.close();
    }
  });
});

describe('a server error coded like a closed connection, at start-up', { timeout: 30_000 }, () => {
  it('fails the start with the server text, not "exited" nor "did not answer in time"', async () => {
    for (const code of ['-32000', '-32001']) {
      const started = McpToolSource.start(server({ env: { FIXTURE_LIST_ERROR_CODE: code } }), new PassThroughRunner(), { workspaceRoot: root, stopGraceMs: 200, log: () => undefined });
      await expect(started, code).rejects.toThrow(`MCP server 'live' failed to start: MCP error ${code}: busy: try later`);
    }
  });
});

describe('a wedged server (its thread blocked by Atomics.wait)', { timeout: 30_000 }, () => {
  it('stops being up within the ping bound after a call times out, its tools are not offered, and it is killed and restarted', async () => {
    const { source, logs } = await start(server({ timeoutMs: 1_000 }), { ping: { intervalMs: 60_000, timeoutMs: 300 } });
    try {
      const pid = Number(text(await tool(source, 'pid').handler.invoke({}, ctx())));
      const started = Date.now();
      const timedOut = await failure(tool(source, 'wedge').handler.invoke({}, ctx()));
      expect(timedOut.reason).toBe('TIMEOUT');
      // The call's deadline (1 s), then one ping's bound (300 ms), with room for a loaded machine.
      await until('the source is no longer up', () => source.status().state !== 'up', 4_000);
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(source.status().state).toBe('restarting');
      // A source that is not up is offered to nobody by the registry; a call meanwhile is not reached.
      const down = await failure(tool(source, 'pid').handler.invoke({}, ctx()));
      expect(down).toBeInstanceOf(ToolNotReachedError);
      expect(down.reason).toBe('MCP_SERVER_RESTARTING');
      expect(logs).toContain(`MCP server 'live' (pid ${pid}) did not answer a ping within 300 ms; its tools are not offered, its process group is stopped and it is restarted`);
      await until('the wedged process is killed', () => !alive(pid), 5_000);
      await until('it is up again', () => source.status().state === 'up', 10_000);
      const again = Number(text(await tool(source, 'pid').handler.invoke({}, ctx())));
      expect(again).not.toBe(pid);
      expect(logs.some((l) => l.startsWith("MCP server 'live': restart attempt 1 in "))).toBe(true);
    } finally {
      await source.close();
    }
  });

  it('is noticed while idle, by the periodic ping, without any call', async () => {
    // Bounds with room for a loaded machine: a ping a busy but healthy child answers late is not a wedge.
    const { source } = await start(server(), { ping: { intervalMs: 150, timeoutMs: 1_000 } });
    try {
      const pid = Number(text(await tool(source, 'pid').handler.invoke({}, ctx())));
      expect(text(await tool(source, 'wedge_soon').handler.invoke({}, ctx()))).toBe('wedging soon');
      await until('the idle wedged source is no longer up', () => source.status().state !== 'up', 5_000);
      await until('the wedged process is killed', () => !alive(pid), 5_000);
    } finally {
      await source.close();
    }
  });

  it('leaves a call in flight to its own deadline (the periodic ping waits for idle), then restarts the server', async () => {
    // A thread blocked inside a call looks like a long synchronous computation until the call's
    // deadline; the periodic ping does not cut it short. The deadline's own ping then finds it wedged.
    const { source, logs } = await start(server({ timeoutMs: 1_500 }), { ping: { intervalMs: 100, timeoutMs: 500 } });
    try {
      const started = Date.now();
      const error = await failure(tool(source, 'wedge').handler.invoke({}, ctx()));
      expect(error.reason).toBe('TIMEOUT');
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
      await until('the source is no longer up', () => source.status().state !== 'up', 4_000);
      expect(logs.some((l) => l.includes('did not answer a ping within 500 ms'))).toBe(true);
    } finally {
      await source.close();
    }
  });
});

describe('a slow but responsive server', { timeout: 30_000 }, () => {
  it('stays up through a long call, pinged again once idle, and through a call that timed out', async () => {
    const { source, logs } = await start(server({ timeoutMs: 3_000 }), { ping: { intervalMs: 100, timeoutMs: 1_000 } });
    try {
      const pings = async () => (JSON.parse(text(await tool(source, 'pings').handler.invoke({}, ctx()))) as { pings: number }).pings;
      const before = await pings();
      expect(text(await tool(source, 'slow').handler.invoke({ ms: 1_200 }, ctx()))).toBe('slept 1200 ms');
      expect(source.status().state).toBe('up');
      // No periodic ping while a call is in flight (at most one that was already out when it began).
      expect((await pings()) - before).toBeLessThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 600));
      expect((await pings()) - before).toBeGreaterThanOrEqual(2);
      const late = await failure(tool(source, 'slow').handler.invoke({ ms: 4_000 }, ctx()));
      expect(late.reason).toBe('TIMEOUT');
      await new Promise((r) => setTimeout(r, 600));
      expect(source.status().state).toBe('up');
      expect(logs.some((l) => l.includes('did not answer a ping'))).toBe(false);
    } finally {
      await source.close();
    }
  });
});

describe('a server that blocks its thread inside a call for longer than a ping may take', { timeout: 30_000 }, () => {
  it('answers the call and stays up: only an idle server or one whose call timed out is pinged', async () => {
    const { source, logs } = await start(server({ timeoutMs: 5_000 }), { ping: { intervalMs: 50, timeoutMs: 300 } });
    try {
      const pid = text(await tool(source, 'pid').handler.invoke({}, ctx()));
      expect(text(await tool(source, 'busy').handler.invoke({ ms: 1_500 }, ctx()))).toBe('busy for 1500 ms');
      expect(source.status().state).toBe('up');
      expect(text(await tool(source, 'pid').handler.invoke({}, ctx()))).toBe(pid);
      expect(logs.some((l) => l.includes('did not answer a ping'))).toBe(false);
    } finally {
      await source.close();
    }
  });
});

describe('ping floods', { timeout: 30_000 }, () => {
  it('never has two pings out at once, however many calls time out and however short the interval', async () => {
    // Each ping is answered after 200 ms; the interval is 10 ms, and eight calls time out together.
    const { source } = await start(server({ timeoutMs: 100, env: { FIXTURE_PING_DELAY_MS: '200' } }), { ping: { intervalMs: 10, timeoutMs: 2_000 } });
    try {
      const calls = Array.from({ length: 8 }, () => failure(tool(source, 'slow').handler.invoke({ ms: 1_000 }, ctx())));
      for (const error of await Promise.all(calls)) expect(error.reason).toBe('TIMEOUT');
      await new Promise((r) => setTimeout(r, 1_000));
      const seen = JSON.parse(text(await tool(source, 'pings').handler.invoke({}, ctx()))) as { pings: number; mostOut: number };
      expect(seen.mostOut).toBe(1);
      // About 1.1 s of pinging at one per 200 ms at most, not one per 10 ms nor one per call.
      expect(seen.pings).toBeGreaterThanOrEqual(2);
      expect(seen.pings).toBeLessThanOrEqual(9);
      expect(source.status().state).toBe('up');
    } finally {
      await source.close();
    }
  });
});
