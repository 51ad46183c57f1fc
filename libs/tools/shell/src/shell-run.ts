import type { ShellToolLimits } from './shell-limits.js';
import { ToolError, type JsonObject, type JsonSchema, type ProcessSpec, type ToolContext } from '@toolgate/contracts';

/** What both shell tools return. */
export interface ShellOutput {
  readonly [key: string]: string | number | boolean | null;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly truncated: boolean;
  readonly timed_out: boolean;
}

/** The output schema both shell tools share. */
export const SHELL_OUTPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    exit_code: { type: ['integer', 'null'], description: 'Exit code, or null when the process was killed by a signal.' },
    signal: { type: ['string', 'null'], description: 'The signal that killed the process (deadline, output flood), if any.' },
    stdout: { type: 'string' },
    stderr: { type: 'string' },
    truncated: { type: 'boolean', description: 'stdout or stderr was cut at the output cap.' },
    timed_out: { type: 'boolean', description: 'The process was killed at its deadline.' },
  },
  required: ['exit_code', 'signal', 'stdout', 'stderr', 'truncated', 'timed_out'],
  additionalProperties: false,
};

/** The deadline a caller asked for, never above the tool's own. */
export function processTimeout(args: JsonObject, maxMs: number): number {
  const asked = args['timeout_ms'];
  if (asked === undefined) return maxMs;
  if (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 1) {
    throw new ToolError("'timeout_ms' must be a positive integer", 'INVALID_ARGUMENT');
  }
  return Math.min(asked, maxMs);
}

/**
 * Runs one process through the call's runner (`ctx.process`), which is what applies the tier's
 * isolation. A handler that got no runner was registered at tier 0 by mistake: it refuses
 * rather than spawning anything itself.
 */
export async function runInWorkspace(ctx: ToolContext, spec: ProcessSpec, timeoutMs: number, maxOutputBytes: number): Promise<ShellOutput> {
  if (!ctx.process) {
    throw new ToolError('this tool runs processes and needs a process tier, but it was given no process runner', 'NO_PROCESS_RUNNER');
  }
  const result = await ctx.process.run(spec, { workspaceRoot: ctx.workspaceRoot, timeoutMs, maxOutputBytes, signal: ctx.signal });
  return {
    exit_code: result.exitCode,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
    truncated: result.stdoutTruncated || result.stderrTruncated,
    timed_out: result.timedOut,
  };
}

/** The `timeout_ms` argument both shell tools take: lower than the manifest's bound, never higher. */
export function timeoutArgSchema(limits: ShellToolLimits, what: string) {
  return {
    type: 'integer',
    minimum: 100,
    maximum: limits.maxProcessTimeoutMs,
    description: `Deadline for ${what}; default and maximum ${limits.maxProcessTimeoutMs}.`,
  } as const;
}

/** The manifest fields both shell tools share: output schema, tier and bounds. */
export function shellManifestBounds(limits: ShellToolLimits) {
  return {
    output: SHELL_OUTPUT_SCHEMA,
    tier: limits.tier,
    timeoutMs: limits.timeoutMs,
    maxOutputBytes: limits.maxResultBytes,
  } as const;
}
