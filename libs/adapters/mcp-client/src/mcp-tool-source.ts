import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, LoggingMessageNotificationSchema, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  ToolAbortedError,
  ToolError,
  ToolNotReachedError,
  type Clock,
  type JsonObject,
  type JsonValue,
  type ProcessRunner,
  type ToolContext,
  type ToolDefinition,
  type ToolSource,
  type ToolSourceState,
  type ToolSourceStatus,
} from '@toolgate/contracts';
import { CallerBridge, UPSTREAM_CLIENT_CAPABILITIES } from './caller-bridge.js';
import type { DiscoveryBounds } from './discovery-budget.js';
import type { McpServerConfig } from './mcp-servers-config.js';
import { LinearOutputValidator, MCP_TOOL_LIMITS, errorText, sanitiseMessage, toToolOutput } from './mcp-tool-schema.js';
import { ProcessGroupStdioTransport } from './process-group-stdio-transport.js';
import { DEFAULT_BACKOFF, RestartBackoff, type BackoffPolicy } from './restart-backoff.js';
import { RelistSchedule } from './relist-schedule.js';
import { serverLogSink, type OperatorLog } from './server-log.js';
import { stderrLogSink } from './stderr-log.js';
import { discoverTools, listAllTools, type DiscoveredServer } from './tool-discovery.js';

/** Deadline of one call when the server's config names none. */
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;
/** Bound of the start-up handshake and the tool listing. */
export const DEFAULT_MCP_START_TIMEOUT_MS = 10_000;
/** Stderr logged per server process before the rest is dropped. */
export const DEFAULT_MCP_STDERR_LOG_BYTES = 16 * 1024;
/** Characters of `notifications/message` text logged per server process before the rest is dropped. */
export const DEFAULT_MCP_SERVER_LOG_CHARS = 16 * 1024;
/**
 * After `notifications/tools/list_changed`: how long the source waits before re-reading the tools
 * (more notifications meanwhile add nothing), and the least time between two re-readings, so a
 * server that sends the notification in a loop costs one listing every few seconds at most.
 */
export const DEFAULT_MCP_RELIST_DELAY_MS = 250;
export const DEFAULT_MCP_RELIST_GAP_MS = 2000;
/**
 * Largest message read while the tools are listed: a page is parsed and checked whole in one
 * turn of the event loop (a 2.4 MB page took 80–190 ms), and no page this large could fit the
 * server's discovery budget anyway (`MCP_DISCOVERY_BUDGET.schemaBytes` across all its tools).
 */
export const MCP_LISTING_MESSAGE_BYTES = 1024 * 1024;
/** How often a server is checked with `ping`, so one whose thread is blocked stops being offered without a call. */
export const DEFAULT_MCP_PING_INTERVAL_MS = 30_000;
/**
 * How long a `ping` may take before the server is taken to be wedged: its process group is killed
 * and it is restarted with the backoff. A server busy with a long call still answers pings on its
 * event loop; one whose thread is blocked this long (`Atomics.wait`, a synchronous loop) does not.
 */
export const DEFAULT_MCP_PING_TIMEOUT_MS = 5_000;
const MAX_ERRORS_LOGGED = 100;
const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' };

export interface McpToolSourceOptions {
  /** Host directory the server runs in (its working directory, and its only writable place at tier 2). */
  readonly workspaceRoot: string;
  /**
   * Operator log: start, crash, restart, skipped tools, the server's stderr and its own log
   * messages (at their level; `info` when no level is given). Never shown to agents.
   */
  readonly log: OperatorLog;
  readonly backoff?: Partial<BackoffPolicy>;
  /** Measures how long the server stayed up, to reset the backoff after a stable run. */
  readonly clock?: Clock;
  readonly startTimeoutMs?: number;
  readonly stderrLogBytes?: number;
  /** Characters of the server's `notifications/message` text logged per process; `DEFAULT_MCP_SERVER_LOG_CHARS` unless given. */
  readonly serverLogChars?: number;
  /** Delay and least gap of re-reading the tools after `tools/list_changed` (defaults above). */
  readonly relist?: { readonly delayMs?: number; readonly gapMs?: number };
  /** On close: how long the server gets after stdin closes, and again after SIGTERM. Default 1000 ms. */
  readonly stopGraceMs?: number;
  /**
   * Checks each discovered definition as the registry will (the gateway compiles its schemas),
   * inside discovery's own turn of the event loop: the registry then finds the schemas compiled
   * instead of compiling a whole catalogue in one turn at its next lookup. A throw leaves the tool
   * out, with the message logged. When given, the adapter's own compile probe is skipped: the
   * schema would otherwise be compiled twice for nothing.
   */
  readonly check?: (definition: ToolDefinition) => void;
  /** What discovery may cost per tool and per server; `MCP_DISCOVERY_BUDGET` unless given. */
  readonly discoveryBudget?: DiscoveryBounds;
  /**
   * Liveness check: a `ping` every `intervalMs` and right after a call times out, one at a time,
   * bounded by `timeoutMs` (defaults `DEFAULT_MCP_PING_INTERVAL_MS`, `DEFAULT_MCP_PING_TIMEOUT_MS`).
   * No answer within the bound: the server is not up, and it is killed and restarted.
   */
  readonly ping?: { readonly intervalMs?: number; readonly timeoutMs?: number };
}

/** Where the server is, for health reporting (the contracts' `ToolSourceStatus`). */
export type McpServerStatus = ToolSourceStatus;

/** One live server process and what it offers (read when it came up, and again on `tools/list_changed`). */
interface Connection {
  readonly client: Client;
  readonly upSince: number;
  /** Registry name → the server's own tool name. */
  names: ReadonlyMap<string, string>;
  definitions: readonly ToolDefinition[];
  /** Tools the server listed that discovery left out. */
  rejected: number;
  /** The server's version as it reported it in the handshake, for re-reading its tools. */
  readonly reportedVersion: unknown;
  readonly transport: ProcessGroupStdioTransport;
  /** The calls in flight on this connection, to which the server's own requests are relayed. */
  readonly bridge: CallerBridge;
  /** Re-reading the tools after `tools/list_changed`. */
  readonly relist: RelistSchedule;
  /**
   * The liveness check: its timer, whether a ping is out (never two at once), whether one went
   * unanswered, and the calls in flight (the periodic ping waits for none: see `adopt`).
   */
  ping: { timer?: ReturnType<typeof setInterval>; running: boolean; wedged: boolean; calls: number };
}

const systemClock: Clock = { now: () => Date.now() };

/**
 * The tools of one MCP server, started over stdio inside a sandbox tier and registered as
 * `<server>__<tool>` with `mcp:<server>` provenance. They are unverified code: risk `high` and
 * an `exec` permission on `mcp:<server>` unless the operator's config says otherwise, closed
 * input schemas, and every call passes the gateway's gates like a first-party tool's.
 *
 * A server that exits, or stops answering `ping` (checked every 30 s and after a call times out),
 * is started again with exponential backoff; meanwhile its tools stay
 * registered and answer a ToolNotReachedError saying so (the registry offers the tools of a
 * source that is not `up` to nobody), and on restart the tool list is read again, as it is when
 * the server sends `notifications/tools/list_changed`. `close()` stops the server for good.
 */
export class McpToolSource implements ToolSource {
  readonly name: string;
  private readonly timeoutMs: number;
  private readonly startTimeoutMs: number;
  private readonly stderrLogBytes: number;
  private readonly serverLogChars: number;
  private readonly relistDelayMs: number;
  private readonly relistGapMs: number;
  private readonly pingIntervalMs: number;
  private readonly pingTimeoutMs: number;
  private readonly clock: Clock;
  private readonly backoff: RestartBackoff;
  private live: Connection | undefined;
  /** The tools last discovered; kept while the server is down so calls get a clear answer. */
  private definitions: readonly ToolDefinition[] = [];
  /** Tools the server listed that discovery left out, at the last listing. */
  private rejectedCount = 0;
  private closed = false;
  private attempt = 0;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private restarting: Promise<void> | undefined;
  /** When the source entered its current state (up, restarting or stopped). */
  private stateSince: number;

  private constructor(
    /** The operator's configuration of this server (trusted: it says, e.g., whether `risk: "low"` was chosen). */
    readonly config: McpServerConfig,
    private readonly runner: ProcessRunner,
    private readonly opts: McpToolSourceOptions,
  ) {
    this.name = config.name;
    this.timeoutMs = config.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
    this.startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_MCP_START_TIMEOUT_MS;
    this.stderrLogBytes = opts.stderrLogBytes ?? DEFAULT_MCP_STDERR_LOG_BYTES;
    this.serverLogChars = opts.serverLogChars ?? DEFAULT_MCP_SERVER_LOG_CHARS;
    this.relistDelayMs = opts.relist?.delayMs ?? DEFAULT_MCP_RELIST_DELAY_MS;
    this.relistGapMs = opts.relist?.gapMs ?? DEFAULT_MCP_RELIST_GAP_MS;
    this.pingIntervalMs = opts.ping?.intervalMs ?? DEFAULT_MCP_PING_INTERVAL_MS;
    this.pingTimeoutMs = opts.ping?.timeoutMs ?? DEFAULT_MCP_PING_TIMEOUT_MS;
    this.clock = opts.clock ?? systemClock;
    this.backoff = new RestartBackoff({ ...DEFAULT_BACKOFF, ...opts.backoff }, this.clock);
    this.stateSince = this.clock.now();
  }

  /**
   * Starts the server through `runner.prepare` (so it runs inside the configured tier), performs
   * the MCP handshake and lists its tools. Rejects, leaving no process behind, if the server
   * cannot be started, does not answer within the start timeout, or exits during start-up.
   */
  static async start(config: McpServerConfig, runner: ProcessRunner, opts: McpToolSourceOptions): Promise<McpToolSource> {
    const source = new McpToolSource(config, runner, opts);
    try {
      source.adopt(await source.connect());
    } catch (error) {
      throw new Error(`MCP server '${config.name}' failed to start: ${describe(error)}`);
    }
    return source;
  }

  /** The server's tools as last discovered (re-read by the registry on every lookup). */
  tools(): readonly ToolDefinition[] {
    return this.closed ? [] : this.definitions;
  }

  /**
   * `up` while a process answers, `restarting` from its exit (or an unanswered ping) until a restart lists its tools
   * (`since` is the exit, `attempt` the latest attempt), `stopped` once closed (`accepted` 0:
   * nothing is offered). `accepted` and `rejected` are the latest listing's, at start, restart or
   * after `tools/list_changed`; `attempt` keeps the latest attempt's number once up again.
   */
  status(): McpServerStatus {
    const state: ToolSourceState = this.closed ? 'stopped' : this.live ? 'up' : 'restarting';
    const accepted = this.closed ? 0 : this.definitions.length;
    return { state, transport: 'stdio', attempt: this.attempt, accepted, rejected: this.rejectedCount, since: this.stateSince };
  }

  /** Stops the server and any pending restart, for good. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stateSince = this.clock.now();
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const live = this.live;
    this.live = undefined;
    if (live) live.relist.stop();
    if (live) clearInterval(live.ping.timer);
    if (live) await live.client.close().catch(() => undefined);
    // A restart already spawning a process sees `closed` and stops that process itself.
    await this.restarting;
    this.opts.log(`MCP server '${this.name}' stopped`);
  }

  private adopt(connection: Connection): void {
    this.live = connection;
    this.definitions = connection.definitions;
    this.rejectedCount = connection.rejected;
    this.stateSince = this.clock.now();
    const names = connection.definitions.map((d) => d.manifest.name).join(', ') || 'none';
    this.opts.log(`MCP server '${this.name}' is up (pid ${connection.transport.pid ?? '?'}), tools: ${names}`);
    // Had the process died between its last answer and now, `onExit` would have ignored it.
    if (connection.client.transport === undefined) {
      this.onExit(connection);
      return;
    }
    // A process that is there but whose thread is blocked answers nothing: checked now and then,
    // while no call is in flight. A server may block its thread inside a call for longer than a
    // ping's bound (a synchronous computation) and still answer it: such a call ends at its own
    // deadline, and a call that times out is followed by a ping of its own (see `callFailure`).
    connection.ping.timer = setInterval(() => {
      if (connection.ping.calls === 0) void this.checkAlive(connection);
    }, this.pingIntervalMs);
    connection.ping.timer.unref?.();
    connection.relist.adopted();
  }

  /** Spawns one server process inside the tier and reads its tools. */
  private async connect(): Promise<Connection> {
    const prepared = this.runner.prepare(
      {
        command: this.config.command,
        args: this.config.args,
        env: this.config.env,
        // Mounted read-only at tier 2; a runner that cannot mount them refuses rather than drops them.
        ...(this.config.readOnlyPaths === undefined ? {} : { readOnlyPaths: this.config.readOnlyPaths }),
      },
      this.opts.workspaceRoot,
    );
    // The bridge sees every message on the wire, to count the server's unanswered calls (ADR 0057).
    const bridge = new CallerBridge(this.name, this.timeoutMs);
    // Stderr is piped to the operator log, so the server's diagnostics never reach an agent.
    const transport = new ProcessGroupStdioTransport(prepared, {
      onStderr: stderrLogSink(this.name, this.stderrLogBytes, (m) => this.opts.log(m)),
      onSent: (message) => bridge.sent(message),
      onReceived: (message) => bridge.received(message),
      ...(this.opts.stopGraceMs === undefined ? {} : { killGraceMs: this.opts.stopGraceMs }),
    });
    // Elicitation and sampling are declared so the server offers the tools that use them; each
    // request is relayed to the call's own client only if that client declared it (ADR 0054).
    // Never roots: the gateway has no roots to show. The SDK checks structured output against the
    // server's outputSchema: on the linear engine.
    const client = new Client(CLIENT_INFO, { capabilities: UPSTREAM_CLIENT_CAPABILITIES, jsonSchemaValidator: new LinearOutputValidator() });
    bridge.attach(client);
    // The server's own log, at its level, bounded per process. Nothing is declared for it: a
    // server sends these unasked, and `logging/setLevel` is not sent.
    const serverLog = serverLogSink(this.name, this.serverLogChars, this.opts.log, this.clock);
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => serverLog(notification.params));
    let connection: Connection | undefined;
    // A change announced while the first listing runs is re-read once the connection is adopted.
    let changedEarly = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (connection) connection.relist.changed();
      else changedEarly = true;
    });
    let exited = false;
    client.onclose = () => {
      exited = true;
      bridge.dispose();
      if (connection) this.onExit(connection);
    };
    // Capped, so a server that floods stdout with garbage cannot flood the operator log.
    let errorsLogged = 0;
    client.onerror = (error) => {
      errorsLogged += 1;
      if (errorsLogged <= MAX_ERRORS_LOGGED) {
        this.opts.log(`MCP server '${this.name}': ${sanitiseMessage(String(error?.message ?? error), 300)}`);
      } else if (errorsLogged === MAX_ERRORS_LOGGED + 1) {
        this.opts.log(`MCP server '${this.name}': more than ${MAX_ERRORS_LOGGED} protocol errors; the rest are not logged`);
      }
    };
    transport.limitMessages(MCP_LISTING_MESSAGE_BYTES);
    try {
      await client.connect(transport, { timeout: this.startTimeoutMs });
      const listed = await listAllTools(client, this.discovered());
      transport.limitMessages(undefined);
      if (exited) throw new Error('the process exited during start-up');
      const { definitions, names } = await discoverTools(listed, client.getServerVersion()?.version, this.discovered(), () => exited || this.closed);
      if (exited) throw new Error('the process exited during start-up');
      connection = {
        client,
        upSince: this.clock.now(),
        names,
        definitions,
        rejected: listed.length - definitions.length,
        reportedVersion: client.getServerVersion()?.version,
        transport,
        bridge,
        // Owed when a change was announced before the connection existed; `adopt` reads it again.
        relist: new RelistSchedule(
          {
            delayMs: this.relistDelayMs,
            gapMs: this.relistGapMs,
            clock: this.clock,
            relist: () => this.relistOnce(connection!),
            gone: () => this.closed || this.live !== connection,
          },
          changedEarly,
        ),
        ping: { running: false, wedged: false, calls: 0 },
      };
      return connection;
    } catch (error) {
      await client.close().catch(() => undefined);
      // The transport's own reason is clearer than the closed connection it caused.
      if (transport.refusal !== undefined) throw new Error(`${transport.refusal} while its tools were listed; none is registered`);
      throw error;
    }
  }

  /** This server as discovery sees it; its tools call back into {@link call}. */
  private discovered(): DiscoveredServer {
    return {
      name: this.name,
      config: this.config,
      timeoutMs: this.timeoutMs,
      startTimeoutMs: this.startTimeoutMs,
      discoveryBudget: this.opts.discoveryBudget,
      check: this.opts.check,
      log: this.opts.log,
      invoke: (name, args, ctx) => this.call(name, args, ctx),
    };
  }

  /** One tool call, always through the connection live at the time of the call. */
  private async call(name: string, args: JsonObject, ctx: ToolContext): Promise<JsonValue> {
    if (ctx.signal.aborted) throw new ToolAbortedError();
    // Each refusal before the request is written is "not reached": nothing was handed to the server.
    if (this.closed) throw new ToolNotReachedError(`MCP server '${this.name}' has been stopped`, 'MCP_SERVER_STOPPED');
    const live = this.live;
    if (!live) {
      throw new ToolNotReachedError(`MCP server '${this.name}' is restarting (attempt ${this.attempt}); try again shortly`, 'MCP_SERVER_RESTARTING');
    }
    const remoteName = live.names.get(name);
    if (remoteName === undefined) {
      throw new ToolNotReachedError(`MCP server '${this.name}' no longer offers '${name}' since it re-listed its tools`, 'NOT_FOUND');
    }
    let result: Awaited<ReturnType<Client['callTool']>>;
    const progress = ctx.progress;
    const tracked = live.bridge.track(ctx);
    live.ping.calls += 1;
    const sentBefore = live.bridge.sentCount;
    let sentSince = 0;
    // Real time, not `clock`: it is compared with the SDK's own timer.
    const startedAt = performance.now();
    try {
      const pending = live.client.callTool({ name: remoteName, arguments: args }, undefined, {
        signal: ctx.signal,
        timeout: this.timeoutMs,
        // A progress token goes upstream only when the caller asked for progress; the text is the
        // server's, so it is flattened like its other text (the gateway caps and rate-limits it).
        ...(progress
          ? {
              onprogress: (p: { progress: number; total?: number; message?: string }) =>
                progress({
                  progress: p.progress,
                  ...(p.total === undefined ? {} : { total: p.total }),
                  ...(typeof p.message === 'string' ? { message: sanitiseMessage(p.message, 200) } : {}),
                }),
            }
          : {}),
      });
      // The SDK sends the request before callTool first yields, so the id sent since is this call's;
      // if that ever changes (nothing or several seen sent), the id is not known and an abandoned
      // call is held to its deadline.
      sentSince = live.bridge.sentCount - sentBefore;
      tracked.sentAs(sentSince === 1 ? (live.bridge.lastSent ?? 'unknown') : 'unknown');
      result = await pending;
    } catch (error) {
      throw this.callFailure(name, error, ctx.signal, live, sentSince > 0, performance.now() - startedAt);
    } finally {
      live.ping.calls -= 1;
      tracked.end();
    }
    if (!Array.isArray(result['content'])) {
      throw new ToolError(`MCP server '${this.name}' sent a result without content for '${name}'`, 'MCP_BAD_RESPONSE');
    }
    if (result.isError === true) throw new ToolError(`'${name}' failed: ${errorText(result)}`, 'MCP_TOOL_ERROR');
    return toToolOutput(result);
  }

  /**
   * The error of a failed call. `sent` says whether its `tools/call` was written to the server:
   * the transport counts a request when it writes it, and the SDK writes it before `callTool`
   * first yields. One never written was not handed to the server, so it is a ToolNotReachedError
   * (the gateway gives back its approval); one written and then lost (the server exited during
   * the call, or stopped answering pings) is not, since the server may have run it. `elapsedMs`
   * tells the SDK's own timeout (-32001 once the deadline passed) from a server's -32001.
   */
  private callFailure(name: string, error: unknown, signal: AbortSignal, live: Connection, sent: boolean, elapsedMs: number): ToolError {
    if (signal.aborted) return new ToolAbortedError();
    if (!sent) return this.notSent(name, error, live);
    if (this.closed) return new ToolError(`MCP server '${this.name}' has been stopped`, 'MCP_SERVER_STOPPED');
    if (live.ping.wedged) {
      return new ToolError(`MCP server '${this.name}' stopped answering during the call; it is restarting, try again shortly`, 'MCP_SERVER_RESTARTING');
    }
    // Only the transport says the process ended: its exit status, the connection replaced, or the
    // client's transport closed (the SDK clears it before failing the calls in flight). The code
    // -32000 alone does not: it is also an ordinary error a server's handler may answer with.
    const gone = live.transport.exit !== undefined || this.live !== live || live.client.transport === undefined;
    if (gone) {
      return new ToolError(`MCP server '${this.name}' exited during the call; it is restarting, try again shortly`, 'MCP_SERVER_RESTARTING');
    }
    // -32001 is the SDK's timeout only once the deadline has passed; sooner, it is the server's own error.
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout && elapsedMs >= this.timeoutMs - 5) {
      // A server that has not answered may be wedged rather than slow: checked at once.
      void this.checkAlive(live);
      return new ToolError(`'${name}' did not answer within ${this.timeoutMs} ms`, 'TIMEOUT');
    }
    const bound = live.transport.oversizedLimitOf(error);
    if (bound !== undefined) {
      // The transport dropped the server's answer unread (ADR 0059): this call fails, the server keeps serving.
      return new ToolError(`'${name}' answered with more than ${bound} bytes, the most one MCP message may carry; the answer was dropped`, 'OUTPUT_TOO_LARGE');
    }
    const structure = live.transport.overStructuredLimitOf(error);
    if (structure !== undefined) {
      // Dropped unparsed for its structure (ADR 0071): parsing it would have held the event loop.
      return new ToolError(`'${name}' answered with more than ${structure} JSON values, the most one MCP message may hold; the answer was dropped`, 'OUTPUT_TOO_LARGE');
    }
    const unchecked = error instanceof McpError ? ownOutputCheck(error) : undefined;
    if (unchecked !== undefined) {
      // Toolgate's MCP client checked the server's answer against the server's own outputSchema:
      // the call was sent and answered, so it is the server's bad answer, not a refusal.
      const what =
        unchecked.kind === 'missing'
          ? `without the structured content its own outputSchema requires`
          : `with structured content that does not match its own outputSchema: ${sanitiseMessage(unchecked.detail, 300)}`;
      return new ToolError(`MCP server '${this.name}' answered '${name}' ${what}`, 'MCP_BAD_RESPONSE');
    }
    if (error instanceof McpError) {
      // A JSON-RPC error from the server (unknown tool, invalid params): its text is meant for the caller.
      // Both SDKs prefix "MCP error <code>: ", so a relayed error carries the prefix twice.
      const text = sanitiseMessage(error.message.replace(/^(MCP error -?\d+: )+/, ''), MCP_TOOL_LIMITS.errorChars);
      return new ToolError(`MCP server '${this.name}' refused the call (error ${error.code}): ${text}`, 'MCP_PROTOCOL_ERROR');
    }
    // Anything else (a malformed answer, a local failure) may carry detail not meant for agents.
    this.opts.log(`MCP server '${this.name}': call of '${name}' failed: ${describe(error)}`);
    return new ToolError(`MCP server '${this.name}' sent an answer that could not be read`, 'MCP_BAD_RESPONSE');
  }

  /** A call whose request was never written: the server is gone or stopped, or the client library refused it. */
  private notSent(name: string, error: unknown, live: Connection): ToolNotReachedError {
    if (this.closed) return new ToolNotReachedError(`MCP server '${this.name}' has been stopped`, 'MCP_SERVER_STOPPED');
    if (live.transport.exit !== undefined || this.live !== live || live.client.transport === undefined) {
      return new ToolNotReachedError(`MCP server '${this.name}' is restarting; the call was not sent, try again shortly`, 'MCP_SERVER_RESTARTING');
    }
    // The SDK's own check (e.g. a tool it believes needs the tasks API): the server never saw the
    // request, so its text must not read as the server's. The detail goes to the operator log only.
    this.opts.log(`MCP server '${this.name}': Toolgate's MCP client refused the call of '${name}' before sending it: ${describe(error)}`, 'warn');
    return new ToolNotReachedError(
      `Toolgate's MCP client refused to call '${name}' before sending it to MCP server '${this.name}'; the server did not receive the call`,
      'MCP_CLIENT_REFUSED',
    );
  }

  /**
   * One re-reading, with the start's listing message limit and discovery budget. A failure keeps
   * the tools read before (logged); a success replaces them, and the gateway decides what a
   * changed definition may do (it pins them).
   */
  private async relistOnce(connection: Connection): Promise<void> {
    const gone = () => this.closed || this.live !== connection;
    try {
      connection.transport.limitMessages(MCP_LISTING_MESSAGE_BYTES);
      let listed;
      try {
        listed = await listAllTools(connection.client, this.discovered());
      } finally {
        connection.transport.limitMessages(undefined);
      }
      if (gone()) return;
      const found = await discoverTools(listed, connection.reportedVersion, this.discovered(), gone);
      if (gone()) return;
      connection.names = found.names;
      connection.definitions = found.definitions;
      connection.rejected = listed.length - found.definitions.length;
      this.definitions = found.definitions;
      this.rejectedCount = connection.rejected;
      const names = found.definitions.map((d) => d.manifest.name).join(', ') || 'none';
      this.opts.log(`MCP server '${this.name}' re-listed its tools (tools/list_changed): ${found.definitions.length} accepted, ${connection.rejected} rejected; tools: ${names}`);
    } catch (error) {
      if (gone()) return;
      this.opts.log(
        `MCP server '${this.name}': re-reading its tools after tools/list_changed failed (${describe(error)}); it keeps the ${connection.definitions.length} tool(s) it had`,
        'warn',
      );
    }
  }

  /**
   * One `ping`, bounded by `pingTimeoutMs`, never two at once. Any answer, even an error, means
   * the process is serving; no answer in time means it is wedged: it stops being `up` at once, its
   * process group is killed and it is restarted with the backoff. A closed connection is `onExit`'s.
   */
  private async checkAlive(connection: Connection): Promise<void> {
    const ping = connection.ping;
    if (this.closed || this.live !== connection || ping.running) return;
    ping.running = true;
    try {
      await connection.client.ping({ timeout: this.pingTimeoutMs });
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout && !this.closed && this.live === connection && connection.client.transport !== undefined) {
        this.wedged(connection);
      }
    } finally {
      ping.running = false;
    }
  }

  private wedged(connection: Connection): void {
    connection.ping.wedged = true;
    clearInterval(connection.ping.timer);
    connection.relist.stop();
    this.live = undefined;
    this.stateSince = this.clock.now();
    this.backoff.crashed(connection.upSince);
    this.opts.log(
      `MCP server '${this.name}' (pid ${connection.transport.pid ?? '?'}) did not answer a ping within ${this.pingTimeoutMs} ms; its tools are not offered, its process group is stopped and it is restarted`,
      'warn',
    );
    // stdin closed, then SIGTERM, then SIGKILL to the group: a blocked thread runs no handler.
    void connection.client.close().catch(() => undefined);
    this.scheduleRestart();
  }

  private onExit(connection: Connection): void {
    if (this.closed || this.live !== connection) return;
    connection.relist.stop();
    clearInterval(connection.ping.timer);
    this.live = undefined;
    this.stateSince = this.clock.now();
    this.backoff.crashed(connection.upSince);
    const exit = connection.transport.exit;
    const how = exit ? (exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`) : 'closed its output';
    this.opts.log(`MCP server '${this.name}' (pid ${connection.transport.pid ?? '?'}) stopped unexpectedly (${how})`);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.closed) return;
    const { attempt, delayMs } = this.backoff.next();
    this.attempt = attempt;
    this.opts.log(`MCP server '${this.name}': restart attempt ${attempt} in ${delayMs} ms`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.restarting = this.restart().finally(() => (this.restarting = undefined));
    }, delayMs);
    // A pending restart must not keep a gateway that is shutting down alive.
    this.restartTimer.unref?.();
  }

  private async restart(): Promise<void> {
    let connection: Connection;
    try {
      connection = await this.connect();
    } catch (error) {
      if (this.closed) return;
      this.opts.log(`MCP server '${this.name}': restart attempt ${this.attempt} failed: ${describe(error)}`);
      this.scheduleRestart();
      return;
    }
    if (this.closed) {
      await connection.client.close().catch(() => undefined);
      return;
    }
    const before = this.definitions[0]?.manifest.version;
    const after = connection.definitions[0]?.manifest.version;
    if (before !== undefined && after !== undefined && before !== after) {
      this.opts.log(`MCP server '${this.name}' came back as version ${after} (was ${before}); calls must name the new version`);
    }
    this.adopt(connection);
  }
}

/** An operator-readable reason for a failure (the operator log, never an agent). */
/**
 * The SDK client's own check of a result against the tool's outputSchema (its `callTool` throws
 * these after the server answered), told apart by its exact text: `missing` when the server sent
 * no structuredContent, `mismatch` with the validator's reason otherwise. A server's own error
 * in the same words says the same about its own answer, so it is worded the same.
 */
function ownOutputCheck(error: McpError): { kind: 'missing' | 'mismatch'; detail: string } | undefined {
  const text = error.message.replace(/^(MCP error -?\d+: )+/, '');
  if (error.code === ErrorCode.InvalidRequest && /^Tool .{0,1000} has an output schema but did not return structured content$/s.test(text)) {
    return { kind: 'missing', detail: '' };
  }
  const mismatch = /^(?:Structured content does not match the tool's output schema|Failed to validate structured content): /.exec(text);
  if (error.code === ErrorCode.InvalidParams && mismatch) return { kind: 'mismatch', detail: text.slice(mismatch[0].length, mismatch[0].length + 2000) };
  return undefined;
}

function describe(error: unknown): string {
  // The SDK's own errors only (its texts): a server may answer -32000 or -32001 itself, with its own text.
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && error.message.endsWith(': Connection closed')) return 'the process exited before it answered';
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout && error.message.endsWith(': Request timed out')) return 'it did not answer in time';
  // A relayed server error carries the SDK's "MCP error <code>: " prefix twice: once is enough.
  return sanitiseMessage((error instanceof Error ? error.message : String(error)).replace(/^(MCP error -?\d+: )\1+/, '$1'), 300);
}
