import { spawn } from 'node:child_process';
import { hash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ToolPin } from '@toolgate/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStores } from '../src/index.js';

const WORKER = fileURLToPath(new URL('./pin-worker.ts', import.meta.url));
const WORKERS = 4;
const ROUNDS = 60;
/** Every worker starts round r at the same moment, start + r × TICK_MS: time for one round's writes. */
const TICK_MS = 25;

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface WorkerResult {
  /** Per round, whose pin of `first_<round>` the worker was told is in force. */
  readonly firsts: string[];
  /** Per round, whether the worker's acceptance of `accept_<round>` won. */
  readonly won: boolean[];
}

/** Starts the workers, waits until each has opened the file, then releases them together. */
async function contend(path: string, expectedDigest: string): Promise<WorkerResult[]> {
  const children = Array.from({ length: WORKERS }, (_, worker) =>
    spawn(process.execPath, ['--import', 'tsx', WORKER, path, String(worker), String(ROUNDS), String(TICK_MS), expectedDigest], {
      stdio: ['pipe', 'pipe', 'inherit'],
      timeout: 45_000,
    }),
  );
  const lines = children.map((child) => {
    const iterator = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    return async () => {
      const next = await iterator.next();
      return next.done ? 'exited' : next.value;
    };
  });
  expect(await Promise.all(lines.map((nextLine) => nextLine()))).toEqual(children.map(() => 'ready'));
  const start = Date.now() + 200;
  for (const child of children) child.stdin.end(`go ${start}\n`);
  return (await Promise.all(lines.map((nextLine) => nextLine()))).map((line) => JSON.parse(line) as WorkerResult);
}

describe('tool pins when server processes share one SQLite file', () => {
  it('agree on one first pin and let one acceptance from a digest win, in every round', async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-sqlite-pins-'));
    const path = join(dir, 'state.db');
    const setup = openSqliteStores(path);
    const definition = JSON.stringify({ description: 'as first seen', name: 'accept' });
    const digest = `sha256:${hash('sha256', definition, 'hex')}`;
    for (let round = 0; round < ROUNDS; round++) {
      const pin: ToolPin = { tool: `accept_${round}`, provenance: 'mcp:race', digest, definition, pinnedAt: 1, pinnedBy: 'first-seen' };
      await setup.pins.pinFirst(pin);
    }
    await setup.close();

    const results = await contend(path, digest);
    const after = openSqliteStores(path);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const first = await after.pins.get(`first_${round}`);
        // Every process was told the pin in force is the one that is stored.
        expect(results.map((r) => r.firsts[round])).toEqual(results.map(() => first?.pinnedBy));
        const winners = results.flatMap((r, worker) => (r.won[round] ? [worker] : []));
        expect(winners).toHaveLength(1);
        expect((await after.pins.get(`accept_${round}`))?.pinnedBy).toBe(`worker-${winners[0]}`);
      }
      // Contention really happened: more than one process won something.
      const winners = new Set([...results.flatMap((r) => r.firsts), ...results.flatMap((r, worker) => (r.won.some(Boolean) ? [`worker-${worker}`] : []))]);
      expect(winners.size).toBeGreaterThan(1);
    } finally {
      await after.close();
    }
  }, 60_000);
});
