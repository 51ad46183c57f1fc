import { ToolError, type ExecutorTier } from '@toolgate/contracts';

/** Options of {@link createShellTools}. */
export interface ShellToolsOptions {
  /** The process tier the tools run at (`TOOLGATE_SHELL_TIER`). Tier 0 is refused: a shell needs a process runner. */
  readonly tier: ExecutorTier;
  /** Upper bound of one call, the manifests' `timeoutMs`. Default 120 000 ms; at least 10 000. */
  readonly timeoutMs?: number;
  /** Cap for stdout and for stderr, each. Default 100 KiB. */
  readonly maxOutputBytes?: number;
}

/** The limits both shell tools are built from. */
export interface ShellToolLimits {
  readonly tier: ExecutorTier;
  readonly timeoutMs: number;
  /**
   * Largest `timeout_ms`: the call's deadline minus a reserve, so a process killed at its own
   * deadline still returns its partial output before the gateway's deadline discards the call.
   */
  readonly maxProcessTimeoutMs: number;
  readonly maxOutputBytes: number;
  /** The manifests' `maxOutputBytes`: both streams even if every byte needs a JSON escape. */
  readonly maxResultBytes: number;
  /** One sentence on what the tier isolates, for the tool descriptions agents read. */
  readonly tierNote: string;
}

/** Time kept between the process deadline and the call deadline (kill grace, teardown, result). */
export const DEADLINE_RESERVE_MS = 5000;

const TIER_NOTES: Readonly<Record<string, string>> = {
  unisolated: "It runs UNISOLATED as a host process with the server's user: it can read, write and signal whatever the server can, far beyond the workspace (tier 1).",
  bwrap: 'It runs in a sandbox that sees only the workspace (at /workspace), a read-only /usr and no network (tier 2).',
  container: 'It runs in a container that sees only the workspace (at /workspace), with no network (container tier).',
};

export function shellLimits(options: ShellToolsOptions): ShellToolLimits {
  const note = TIER_NOTES[options.tier];
  if (note === undefined) {
    throw new ToolError(`shell tools need a process tier (bwrap, container or unisolated), not '${options.tier}'`, 'INVALID_TIER');
  }
  const timeoutMs = options.timeoutMs ?? 120_000;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 10_000) throw new RangeError(`shell tool timeoutMs must be an integer ≥ 10000, got ${timeoutMs}`);
  const maxOutputBytes = options.maxOutputBytes ?? 100 * 1024;
  if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < 1024) throw new RangeError(`maxOutputBytes must be an integer ≥ 1024, got ${maxOutputBytes}`);
  return {
    tier: options.tier,
    timeoutMs,
    maxProcessTimeoutMs: timeoutMs - DEADLINE_RESERVE_MS,
    maxOutputBytes,
    maxResultBytes: 2 * 6 * maxOutputBytes + 4096,
    tierNote: note,
  };
}
