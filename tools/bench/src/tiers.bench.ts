import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BwrapExecutor } from '@toolgate/adapter-executor-bwrap';
import { ContainerExecutor } from '@toolgate/adapter-executor-container';
import { InProcessExecutor } from '@toolgate/adapter-executor-inprocess';
import { SubprocessExecutor } from '@toolgate/adapter-executor-subprocess';
import type { JsonValue, ToolContext, ToolExecutor, ToolHandler } from '@toolgate/contracts';
import { testToolContext } from '@toolgate/testing';

const WARMUP = 5;
const MAX_ROUNDS = 300;
/** Wall-clock budget of the measured rounds. */
const BUDGET_MS = 8000;

interface Tier {
  readonly label: string;
  readonly executor: ToolExecutor;
  readonly handler: ToolHandler;
  readonly samples: number[];
}

/** A handler that does nothing: tier 0's cost is the executor's own. */
const noop: ToolHandler = { invoke: async () => null };

/** A handler that runs `true` through the tier's process runner, as the shell tools do. */
const runTrue: ToolHandler = {
  async invoke(_args, ctx): Promise<JsonValue> {
    if (!ctx.process) throw new Error('no process runner');
    const result = await ctx.process.run(
      { command: 'true', args: [] },
      { workspaceRoot: ctx.workspaceRoot, timeoutMs: 10_000, maxOutputBytes: 4096, signal: ctx.signal },
    );
    if (result.exitCode !== 0) throw new Error(`true exited ${result.exitCode ?? result.signal}: ${result.stderr}`);
    return result.exitCode;
  },
};

/**
 * The cost of isolation: time to complete one tool call at each executor tier, in one process,
 * rounds interleaved so machine noise hits every tier alike. Tier 0 runs a no-op handler
 * in-process (the baseline); tiers 1 and 2 run `true` through their process runner, the path
 * every shell tool call takes. The container tier is measured only where an engine answers.
 * Reports mean and p50 per tier and the ratio to tier 0 (and of tier 2 to tier 1).
 */
export async function bench(): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), 'toolgate-tiers-bench-'));
  const lines: string[] = [];
  try {
    const workspace = join(root, 'tenant');
    const candidates: Tier[] = [
      { label: 'tier 0 inprocess (no-op handler)', executor: new InProcessExecutor(), handler: noop, samples: [] },
      { label: 'tier 1 unisolated (`true`)', executor: new SubprocessExecutor(), handler: runTrue, samples: [] },
      { label: 'tier 2 bwrap (`true`)', executor: new BwrapExecutor(), handler: runTrue, samples: [] },
      {
        label: 'container (`true`)',
        executor: new ContainerExecutor({ image: process.env['TOOLGATE_CONTAINER_IMAGE'] ?? 'docker.io/library/buildpack-deps:bookworm-scm' }),
        handler: runTrue,
        samples: [],
      },
    ];
    const tiers: Tier[] = [];
    for (const tier of candidates) {
      const problem = await tier.executor.check().then(
        () => undefined,
        (error: unknown) => (error as Error).message,
      );
      if (problem) lines.push(`tiers: ${tier.label.padEnd(34)} skipped: ${problem}`);
      else tiers.push(tier);
    }

    const context = (): ToolContext => testToolContext({ workspaceRoot: workspace });
    const once = async (tier: Tier): Promise<number> => {
      const started = performance.now();
      const outcome = await tier.executor.execute(tier.handler, {}, context(), 10_000);
      // An executor reports a failed call instead of rejecting; a failed call is no sample.
      if (outcome.status !== 'returned') throw new Error(`${tier.label}: the call ended '${outcome.status}', not with a result`);
      return performance.now() - started;
    };

    for (let i = 0; i < WARMUP; i++) for (const tier of tiers) await once(tier);
    const until = performance.now() + BUDGET_MS;
    for (let round = 0; round < MAX_ROUNDS && performance.now() < until; round++) {
      // Rotate the order each round so no tier always runs right after another.
      for (let k = 0; k < tiers.length; k++) {
        const tier = tiers[(round + k) % tiers.length];
        if (tier) tier.samples.push(await once(tier));
      }
    }

    const base = tiers[0];
    const baseMean = base ? mean(base.samples) : Number.NaN;
    const baseP50 = base ? percentile(base.samples, 0.5) : Number.NaN;
    for (const tier of tiers) {
      const m = mean(tier.samples);
      const p50 = percentile(tier.samples, 0.5);
      const ratio = tier === base ? 'baseline' : `${fmtRatio(m / baseMean)} tier 0 (mean), ${fmtRatio(p50 / baseP50)} (p50)`;
      lines.push(`tiers: ${tier.label.padEnd(34)} mean ${fmtMs(m)}  p50 ${fmtMs(p50)}  p95 ${fmtMs(percentile(tier.samples, 0.95))}  n=${tier.samples.length}  ${ratio}`);
    }
    const t1 = tiers.find((t) => t.executor.tier === 'unisolated');
    const t2 = tiers.find((t) => t.executor.tier === 'bwrap');
    if (t1 && t2) {
      lines.push(`tiers: bwrap / unisolated                  ${fmtRatio(mean(t2.samples) / mean(t1.samples))} (mean), ${fmtRatio(percentile(t2.samples, 0.5) / percentile(t1.samples, 0.5))} (p50): the price of the namespace sandbox per process`);
    }
    return lines;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function mean(samples: readonly number[]): number {
  return samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length);
}

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

function fmtMs(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(1)} µs`.padStart(9) : `${ms.toFixed(2)} ms`.padStart(9);
}

function fmtRatio(r: number): string {
  return r >= 100 ? `${Math.round(r)}x` : `${r.toFixed(1)}x`;
}
