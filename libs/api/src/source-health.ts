import type { ToolSourceState, ToolSourceStatus } from '@toolgate/contracts';

/**
 * One tool source (an MCP server) as the public reports show it: `/healthz`, `/readyz`, `health`
 * and the `tools.list` metadata. It holds counts and states only, never a reason text, a path or a
 * command: `/healthz` answers anyone who can reach the port.
 */
export interface SourceHealth {
  /** The operator's name for the source (the servers file's `name`). */
  readonly name: string;
  readonly state: ToolSourceState;
  readonly transport: ToolSourceStatus['transport'];
  /** Number of the latest restart or reconnection attempt (0 if it never had to restart). */
  readonly attempt: number;
  /** Tools the source offers after its own checks. */
  readonly accepted: number;
  /** Tools the server listed that the source left out (each reason is in the operator log). */
  readonly rejected: number;
  /** Tools held because their definition changed since it was pinned, until an operator accepts it. */
  readonly held: number;
  /** Epoch ms when the source entered `state`. */
  readonly since: number;
}

/** What the gateway says about a source: its status, its name and how many of its tools it holds. */
export type SourceReportLike = ToolSourceStatus & { readonly name: string; readonly held: number };

/**
 * The public view of a source report, field by field: whatever else a report may carry now or
 * later (a reason, a command line) is not copied, so it cannot reach an unauthenticated caller.
 */
export function sourceHealthOf(report: SourceReportLike): SourceHealth {
  return {
    name: report.name,
    state: report.state,
    transport: report.transport,
    attempt: report.attempt,
    accepted: report.accepted,
    rejected: report.rejected,
    held: report.held,
    since: report.since,
  };
}
