import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolContext } from '@toolgate/contracts';
// The tiers' own runners are tested elsewhere; this one runs the command as given.
import { PassThroughRunner, testToolContext, watchLoopHold } from '@toolgate/testing';
import { MCP_DISCOVERY_BUDGET, MCP_LISTING_MESSAGE_BYTES, McpToolSource, type McpServerConfig } from '../src/index.js';

const fixture = fileURLToPath(new URL('./fixtures/costly-server.mjs', import.meta.url));

/**
 * The worst hold of the event loop a turn of discovery may cost: one tool's schema compiled per
 * turn measures 20–65 ms here; what this suite guards against (a whole catalogue compiled in
 * one turn) holds it many times longer. Load on the box is not counted (`watchLoopHold`).
 */
const HOLD_BOUND_MS = 150;

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'toolgate-mcp-budget-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const costly = (env: Record<string, string>): McpServerConfig => ({
  name: 'costly',
  command: process.execPath,
  args: [fixture],
  env,
  tier: 'unisolated',
});

function ctx(): ToolContext {
  return testToolContext({ principal: { id: 'alice', tenant: 't1', roles: ['worker'] }, workspaceRoot: root });
}

/** Starts the server, returning its source, its log and the worst event-loop hold during start-up. */
async function started(env: Record<string, string>): Promise<{ source: McpToolSource; logs: string[]; lagMs: number; ms: number }> {
  const logs: string[] = [];
  const lag = watchLoopHold(5);
  const began = performance.now();
  const source = await McpToolSource.start(costly(env), new PassThroughRunner(), {
    workspaceRoot: root,
    stopGraceMs: 200,
    startTimeoutMs: 30_000,
    log: (m) => logs.push(m),
    backoff: { initialMs: 50, maxMs: 200, stableMs: 60_000 },
  });
  const ms = performance.now() - began;
  return { source, logs, lagMs: lag.stop(), ms };
}

const refusals = (logs: readonly string[], why: string) => logs.filter((l) => l.startsWith("MCP server 'costly': tool \"t") && l.endsWith(why));

describe('discovery that costs too much', { timeout: 120_000 }, () => {
  it("refuses the red team's catalogue (256 tools of 834 patterned properties, 2.4 MB pages of 40) at every restart after a crash, without holding the event loop", async () => {
    const flag = join(root, 'heavy.flag');
    const { source, logs } = await started({ FIXTURE_FLAG: flag, FIXTURE_TOOLS: '256', FIXTURE_PATTERNS: '834', FIXTURE_PAGE: '40' });
    try {
      expect(source.tools().map((d) => d.manifest.name)).toEqual(['costly__crash']);
      const lag = watchLoopHold(5);
      const began = performance.now();
      // It answers and exits 20 ms later; either outcome of the call is fine here.
      await source.tools()[0]!.handler.invoke({}, ctx()).catch(() => undefined);
      expect(existsSync(flag)).toBe(true);
      const failed = (l: string) => /^MCP server 'costly': restart attempt \d+ failed: the server sent a message larger than 1048576 bytes while its tools were listed; none is registered$/.test(l);
      await until('three restarts refused', () => logs.filter(failed).length >= 3);
      const worst = lag.stop();
      console.log(`red-team catalogue: 3 restarts refused in ${(performance.now() - began).toFixed(0)} ms, worst event-loop hold ${worst.toFixed(1)} ms`);
      expect(worst).toBeLessThan(HOLD_BOUND_MS);
      expect(source.status().state).toBe('restarting');
      expect(logs).toContain(`MCP server 'costly': the server sent a message larger than ${MCP_LISTING_MESSAGE_BYTES} bytes`);
    } finally {
      rmSync(flag, { force: true });
      await source.close();
    }
  });

  it("refuses each of the red team's tools in pages small enough to read (16 per page, under 1 MiB), after a crash, one per turn", async () => {
    const flag = join(root, 'heavy-small-pages.flag');
    const { source, logs } = await started({ FIXTURE_FLAG: flag, FIXTURE_TOOLS: '256', FIXTURE_PATTERNS: '834', FIXTURE_PAGE: '16' });
    try {
      const lag = watchLoopHold(5);
      const began = performance.now();
      await source.tools()[0]!.handler.invoke({}, ctx()).catch(() => undefined);
      await until('the restarted server is up', () => source.status().state === 'up' && source.status().attempt >= 1);
      const worst = lag.stop();
      console.log(`red-team catalogue in pages of 16: crash to up in ${(performance.now() - began).toFixed(0)} ms, worst event-loop hold ${worst.toFixed(1)} ms`);
      expect(worst).toBeLessThan(HOLD_BOUND_MS);
      expect(source.tools()).toEqual([]);
      const perTool = refusals(logs, `its input schema has patterns of weight 834, more than the ${MCP_DISCOVERY_BUDGET.patternsPerSchema} allowed per tool`);
      expect(perTool).toHaveLength(256);
    } finally {
      rmSync(flag, { force: true });
      await source.close();
    }
  });

  it('refuses a start-up listing with a page over the listing message limit, naming the limit', async () => {
    await expect(started({ FIXTURE_TOOLS: '40', FIXTURE_PATTERNS: '834', FIXTURE_PAGE: '40' })).rejects.toThrow(
      `MCP server 'costly' failed to start: the server sent a message larger than ${MCP_LISTING_MESSAGE_BYTES} bytes while its tools were listed; none is registered`,
    );
  });

  it('registers the first tools within the pattern budget and refuses the rest, at start-up, one tool per turn', async () => {
    // 32 patterns and 64 properties each: the per-tool bounds exactly; 31 fit the server's 1,000.
    const { source, logs, lagMs, ms } = await started({ FIXTURE_TOOLS: '256', FIXTURE_PATTERNS: '32', FIXTURE_PLAIN: '32', FIXTURE_PAGE: '40' });
    try {
      console.log(`pattern-maximal catalogue: started in ${ms.toFixed(0)} ms, worst event-loop hold ${lagMs.toFixed(1)} ms`);
      expect(lagMs).toBeLessThan(HOLD_BOUND_MS);
      const names = source.tools().map((d) => d.manifest.name);
      expect(names).toEqual(Array.from({ length: 31 }, (_, k) => `costly__t${k}`));
      expect(refusals(logs, `the server's input schemas would exceed the discovery budget of pattern weight ${MCP_DISCOVERY_BUDGET.patterns} in total`)).toHaveLength(225);
      expect(logs).toContain(`MCP server 'costly': tool "t31" is not registered: the server's input schemas would exceed the discovery budget of pattern weight 1000 in total`);
    } finally {
      await source.close();
    }
  });

  it('refuses tools beyond the property budget (plain properties, no patterns)', async () => {
    const { source, logs, lagMs } = await started({ FIXTURE_TOOLS: '256', FIXTURE_PLAIN: '64', FIXTURE_PAGE: '100' });
    try {
      expect(lagMs).toBeLessThan(HOLD_BOUND_MS);
      // 64 properties each: 62 tools fit the server's 4,000.
      expect(source.tools().map((d) => d.manifest.name)).toEqual(Array.from({ length: 62 }, (_, k) => `costly__t${k}`));
      expect(refusals(logs, `the server's input schemas would exceed the discovery budget of ${MCP_DISCOVERY_BUDGET.properties} properties in total`)).toHaveLength(194);
    } finally {
      await source.close();
    }
  });

  it('refuses tools beyond the byte budget (64 KiB schemas of few properties)', async () => {
    // 60 properties with 1,000-character descriptions: about 62 KB each; 16 fit 1 MiB.
    const { source, logs, lagMs } = await started({ FIXTURE_TOOLS: '64', FIXTURE_PLAIN: '60', FIXTURE_PAD: '1000', FIXTURE_PAGE: '8' });
    try {
      expect(lagMs).toBeLessThan(HOLD_BOUND_MS);
      expect(source.tools().length).toBeGreaterThanOrEqual(16);
      expect(source.tools().length).toBeLessThanOrEqual(17);
      const refused = refusals(logs, `the server's tool definitions would exceed the discovery budget of ${MCP_DISCOVERY_BUDGET.schemaBytes} bytes in total`);
      expect(refused.length + source.tools().length).toBe(64);
    } finally {
      await source.close();
    }
  });

  it('counts patternProperties keys as patterns, and refuses a tool over the per-tool property bound', async () => {
    const keys = await started({ FIXTURE_TOOLS: '3', FIXTURE_PATTERNS: '33', FIXTURE_KEYWORD: 'patternProperties' });
    try {
      expect(keys.source.tools()).toEqual([]);
      expect(refusals(keys.logs, 'its input schema has patterns of weight 33, more than the 32 allowed per tool')).toHaveLength(3);
    } finally {
      await keys.source.close();
    }
    const props = await started({ FIXTURE_TOOLS: '2', FIXTURE_PLAIN: '65' });
    try {
      expect(props.source.tools()).toEqual([]);
      expect(refusals(props.logs, 'its input schema has 65 properties, more than the 64 allowed per tool')).toHaveLength(2);
    } finally {
      await props.source.close();
    }
  });

  it('leaves out a tool the registry check refuses, with its reason, and skips its own probe for those it accepts', async () => {
    const logs: string[] = [];
    const checked: string[] = [];
    const source = await McpToolSource.start(costly({ FIXTURE_TOOLS: '3', FIXTURE_PATTERNS: '2' }), new PassThroughRunner(), {
      workspaceRoot: root,
      stopGraceMs: 200,
      log: (m) => logs.push(m),
      check: (definition) => {
        checked.push(definition.manifest.name);
        if (definition.manifest.name === 'costly__t1') throw new Error("tool 'costly__t1': the input schema does not compile:\nno");
      },
    });
    try {
      expect(checked).toEqual(['costly__t0', 'costly__t1', 'costly__t2']);
      expect(source.tools().map((d) => d.manifest.name)).toEqual(['costly__t0', 'costly__t2']);
      expect(logs).toContain(`MCP server 'costly': tool "t1" is not registered: tool 'costly__t1': the input schema does not compile: no`);
    } finally {
      await source.close();
    }
  });
});
