/** A process to run inside a sandbox tier. `command` is looked up on the sandbox's PATH. */
export interface ProcessSpec {
  readonly command: string;
  readonly args: readonly string[];
  /** The only environment variables the process sees (besides a minimal PATH/HOME/LANG). */
  readonly env?: Readonly<Record<string, string>>;
  readonly stdin?: string;
  /** Working directory relative to the workspace root; default the root itself. */
  readonly cwd?: string;
}

/** Bounds of one process run. */
export interface ProcessLimits {
  /** Absolute host path of the tenant workspace: the only writable place. */
  readonly workspaceRoot: string;
  readonly timeoutMs: number;
  /** Cap for stdout and for stderr, each. */
  readonly maxOutputBytes: number;
  readonly signal?: AbortSignal;
}

/**
 * What a sandboxed process did. Output is decoded as UTF-8 and cut at the cap (never inside a
 * character). A process that keeps writing far past the cap is killed: it then shows
 * `signal` set and a truncated stream, with `timedOut` false.
 */
export interface ProcessResult {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  readonly timedOut: boolean;
  readonly durationMs: number;
}

/**
 * A command line ready to spawn as a long-lived process (an MCP server over stdio). Spawn it
 * with exactly this environment (nothing inherited) in its own process group, and kill that
 * group when done.
 */
export interface PreparedCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** The complete environment of the spawned process. */
  readonly env: Readonly<Record<string, string>>;
  /** Absolute host directory to spawn in, inside the workspace, symlinks resolved. */
  readonly cwd: string;
}

/**
 * Runs processes at one isolation tier. Every runner validates the spec before anything starts
 * (`ToolError`; a working directory outside the workspace is a `PathEscapeError`), reports a
 * missing command as `ToolError` reason `COMMAND_NOT_FOUND`, and leaves nothing running when
 * `run` settles: at the deadline or on abort the process and everything it started are killed.
 */
export interface ProcessRunner {
  /** Resolves with the result (also when the deadline killed it); rejects with `ToolAbortedError` if `limits.signal` fired. */
  run(spec: ProcessSpec, limits: ProcessLimits): Promise<ProcessResult>;
  /** The command line that starts `spec` inside this tier, for callers that manage the process. */
  prepare(spec: ProcessSpec, workspaceRoot: string): PreparedCommand;
}
