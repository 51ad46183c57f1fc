/** A process to run inside a sandbox tier. `command` is looked up on the sandbox's PATH. */
export interface ProcessSpec {
  /** The program: a name looked up on the sandbox's PATH, or an absolute path inside the sandbox. */
  readonly command: string;
  /** Its arguments, passed as they are (never through a shell). */
  readonly args: readonly string[];
  /** The only environment variables the process sees (besides a minimal PATH/HOME/LANG). */
  readonly env?: Readonly<Record<string, string>>;
  /** Written to the process's standard input, which is then closed; empty when absent. */
  readonly stdin?: string;
  /** Working directory relative to the workspace root; default the root itself. */
  readonly cwd?: string;
  /**
   * Absolute host paths the process may read, mounted read-only at the same path (a tier that
   * cannot mount, such as `unisolated`, sees the host anyway). The operator's choice, checked
   * before it gets here: a runner refuses a path it would not mount rather than drop it.
   */
  readonly readOnlyPaths?: readonly string[];
}

/** Bounds of one process run. */
export interface ProcessLimits {
  /** Absolute host path of the tenant workspace: the only writable place. */
  readonly workspaceRoot: string;
  /** Wall-clock time the process may run before it and everything it started are killed. */
  readonly timeoutMs: number;
  /** Cap for stdout and for stderr, each. */
  readonly maxOutputBytes: number;
  /** Kills the process when it fires (the call's deadline or cancellation). */
  readonly signal?: AbortSignal;
}

/**
 * What a sandboxed process did. Output is decoded as UTF-8 and cut at the cap (never inside a
 * character). A process that keeps writing far past the cap is killed: it then shows
 * `signal` set and a truncated stream, with `timedOut` false.
 */
export interface ProcessResult {
  /** The exit status, or null when a signal ended the process. */
  readonly exitCode: number | null;
  /** The signal that ended it (e.g. `SIGKILL`), or null when it exited. */
  readonly signal: string | null;
  /** Standard output, up to the cap. */
  readonly stdout: string;
  /** Standard error, up to the cap. */
  readonly stderr: string;
  /** Standard output went past the cap and was cut. */
  readonly stdoutTruncated: boolean;
  /** Standard error went past the cap and was cut. */
  readonly stderrTruncated: boolean;
  /** The process was killed because `timeoutMs` passed. */
  readonly timedOut: boolean;
  /** Wall-clock time from start until the process and its group were gone. */
  readonly durationMs: number;
}

/**
 * A command line ready to spawn as a long-lived process (an MCP server over stdio). Spawn it
 * with exactly this environment (nothing inherited) in its own process group, and kill that
 * group when done.
 */
export interface PreparedCommand {
  /** The host program to spawn (the process itself, or the tier's sandbox launcher). */
  readonly command: string;
  /** Its arguments, in order, passed without a shell. */
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
