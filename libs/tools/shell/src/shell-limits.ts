import { isProcessTier, PROCESS_TIERS, ToolError, type ExecutorIsolation, type ProcessTier, type ToolExecutor } from '@toolgate/contracts';

/** Options of {@link createShellTools}. */
export interface ShellToolsOptions {
  /**
   * The executor of the tier the tools run at (`TOOLGATE_SHELL_TIER`): its tier goes into the
   * manifests and its isolation summary into the descriptions. Tier 0 is refused: a shell needs
   * a process runner.
   */
  readonly executor: Pick<ToolExecutor, 'tier' | 'isolation'>;
  /** Upper bound of one call, the manifests' `timeoutMs`. Default 120 000 ms; at least 10 000. */
  readonly timeoutMs?: number;
  /** Cap for stdout and for stderr, each. Default 100 KiB. */
  readonly maxOutputBytes?: number;
}

/** The limits both shell tools are built from. */
export interface ShellToolLimits {
  readonly tier: ProcessTier;
  readonly timeoutMs: number;
  /**
   * Largest `timeout_ms`: the call's deadline minus a reserve, so a process killed at its own
   * deadline still returns its partial output before the gateway's deadline discards the call.
   */
  readonly maxProcessTimeoutMs: number;
  readonly maxOutputBytes: number;
  /** The manifests' `maxOutputBytes`: both streams even if every byte needs a JSON escape. */
  readonly maxResultBytes: number;
  /** The executor's one sentence on what the tier isolates, for the tool descriptions agents read. */
  readonly tierNote: ExecutorIsolation['summary'];
}

/** Time kept between the process deadline and the call deadline (kill grace, teardown, result). */
export const DEADLINE_RESERVE_MS = 5000;

export function shellLimits(options: ShellToolsOptions): ShellToolLimits {
  const { tier, isolation } = options.executor;
  if (!isProcessTier(tier)) {
    throw new ToolError(`shell tools need a process tier (${PROCESS_TIERS.join(', ')}), not '${tier}'`, 'INVALID_TIER');
  }
  // The description is the only place an approver reads what the tier isolates: never leave it blank.
  const note = typeof isolation?.summary === 'string' ? isolation.summary.trim() : '';
  if (note === '') throw new ToolError(`the '${tier}' executor does not describe its isolation`, 'INVALID_TIER');
  const timeoutMs = options.timeoutMs ?? 120_000;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 10_000) throw new RangeError(`shell tool timeoutMs must be an integer ≥ 10000, got ${timeoutMs}`);
  const maxOutputBytes = options.maxOutputBytes ?? 100 * 1024;
  if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < 1024) throw new RangeError(`maxOutputBytes must be an integer ≥ 1024, got ${maxOutputBytes}`);
  return {
    tier,
    timeoutMs,
    maxProcessTimeoutMs: timeoutMs - DEADLINE_RESERVE_MS,
    maxOutputBytes,
    maxResultBytes: 2 * 6 * maxOutputBytes + 4096,
    tierNote: note,
  };
}
