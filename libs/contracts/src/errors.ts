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

/**
 * The call never reached the tool: the handler gave up before handing it over (an MCP server
 * that is restarting or stopped, a request its client library refused before sending it). The
 * gateway then gives back the approval the call would have used, since nothing ran. A handler
 * throws it only when it is sure nothing was handed over: for an MCP tool, before the
 * `tools/call` request was written to the server's transport.
 */
export class ToolNotReachedError extends ToolError {
  override readonly name = 'ToolNotReached';
  constructor(message: string, reason = 'NOT_REACHED') {
    super(message, reason);
  }
}
