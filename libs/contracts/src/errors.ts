/**
 * An error whose message is written for the caller: the gateway passes it on as it is. Anything
 * else a handler throws is reported as a generic failure, so stack traces, host paths and
 * secrets in foreign error messages never reach an agent.
 */
export class ToolError extends Error {
  override readonly name: string = 'ToolError';
  constructor(
    message: string,
    /** A stable machine-readable reason, e.g. `NOT_FOUND`, `PATH_ESCAPE`, `PROVIDER_RATE_LIMITED`. */
    readonly reason: string = 'TOOL_ERROR',
  ) {
    super(message);
  }
}

/** A path argument tried to leave the tenant workspace. The message names the path as given. */
export class PathEscapeError extends ToolError {
  override readonly name = 'PathEscape';
  constructor(readonly givenPath: string, why: string) {
    super(`PathEscape: '${givenPath}' ${why}`, 'PATH_ESCAPE');
  }
}

/** The network guard refused a destination (policy, not a network failure). */
export class EgressDeniedError extends ToolError {
  override readonly name = 'EgressDenied';
  constructor(readonly host: string, why: string) {
    super(`egress to '${host}' refused: ${why}`, 'EGRESS_DENIED');
  }
}

/** A handler gave up because the call's AbortSignal fired (deadline or cancellation). */
export class ToolAbortedError extends ToolError {
  override readonly name = 'ToolAborted';
  constructor(message = 'the call was aborted') {
    super(message, 'ABORTED');
  }
}
