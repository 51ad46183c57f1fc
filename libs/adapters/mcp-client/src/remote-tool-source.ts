import { Client, ProtocolError, SdkError, SdkErrorCode, SdkHttpError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  ToolAbortedError,
  ToolError,
  ToolNotReachedError,
  type Clock,
  type JsonObject,
  type JsonValue,
  type Permission,
  type StreamingHttpClient,
  type ToolContext,
  type ToolDefinition,
  type ToolSource,
  type ToolSourceState,
  type ToolSourceStatus,
} from '@toolgate/contracts';
import type { DiscoveryBounds } from './discovery-budget.js';
import type { McpRemoteServerConfig, McpServerConfig } from './mcp-servers-config.js';
import { LinearOutputValidator, MCP_TOOL_LIMITS, errorText, sanitiseMessage, toToolOutput } from './mcp-tool-schema.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from './process-group-stdio-transport.js';
import { RemoteCallScope, RemoteInbound, remoteCallScope, remoteFetch } from './remote-fetch.js';
import { LogRate, reconnectionPacer } from './remote-pacing.js';
import { readRemoteHeaders } from './remote-headers.js';
import { DEFAULT_BACKOFF, RestartBackoff, type BackoffPolicy } from './restart-backoff.js';
import { RelistSchedule } from './relist-schedule.js';
import { serverLogSink } from './server-log.js';
import { DEFAULT_MCP_RELIST_DELAY_MS, DEFAULT_MCP_RELIST_GAP_MS, DEFAULT_MCP_SERVER_LOG_CHARS, MCP_LISTING_MESSAGE_BYTES } from './mcp-tool-source.js';
import { discoverTools, listAllTools, type DiscoveredServer } from './tool-discovery.js';

/** Deadline of one call when the server's config names none (as for stdio servers). */
export const DEFAULT_REMOTE_TIMEOUT_MS = 30_000;
/** Bound of the handshake and of each tool listing page. */
export const DEFAULT_REMOTE_START_TIMEOUT_MS = 10_000;
/** How often an idle connection is checked with `ping`, so a server that went away is noticed without a call. */
export const DEFAULT_REMOTE_PING_INTERVAL_MS = 30_000;
/** Errors of one connection logged in a burst, then one more per `ERROR_LOG_EVERY_MS`. */
const ERROR_LOG_BURST = 20;
const ERROR_LOG_EVERY_MS = 3_000;
/** Longest `close()` waits for a reconnect in progress (a header file on a hung mount). */
const CLOSE_GRACE_MS = 2_000;
/** The first revision without `ping`, whose liveness check is `server/discover`. */
const MODERN_PROTOCOL = '2026-07-28';
const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' };

/** The operator log: a line and, when it is not `info`, its level. */
export type RemoteSourceLog = (message: string, level?: 'debug' | 'info' | 'warn' | 'error') => void;

export interface McpRemoteToolSourceOptions {
  /** The guarded client every request of the transport goes through (addresses checked, no redirects). */
  readonly http: StreamingHttpClient;
  /** Operator log: connect, loss, reconnects, refused credentials, skipped tools. Never shown to agents. */
  readonly log: RemoteSourceLog;
  readonly backoff?: Partial<BackoffPolicy>;
  readonly clock?: Clock;
  readonly startTimeoutMs?: number;
  /** Largest JSON answer or SSE event read; the stdio transport's 4 MiB unless given. */
  readonly maxMessageBytes?: number;
  /** How often an idle connection is pinged; `DEFAULT_REMOTE_PING_INTERVAL_MS` unless given. */
  readonly pingIntervalMs?: number;
  /** The registry's check of each definition, run by discovery (see `McpToolSourceOptions.check`). */
  readonly check?: (definition: ToolDefinition) => void;
  readonly discoveryBudget?: DiscoveryBounds;
  /** Delay and least gap of re-reading the tools after `tools/list_changed` (the stdio sources' defaults). */
  readonly relist?: { readonly delayMs?: number; readonly gapMs?: number };
}

/** One session with the server and what it offered when it came up. */
interface Connection {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  /** Ends every request of this connection. */
  readonly abort: AbortController;
  readonly upSince: number;
  readonly protocol: string;
  /** Registry name → the server's own tool name. */
  names: ReadonlyMap<string, string>;
  definitions: readonly ToolDefinition[];
  rejected: number;
  readonly reportedVersion: unknown;
  pingTimer?: ReturnType<typeof setInterval>;
  /** Re-reading the tools after `tools/list_changed`, as for a stdio server. */
  readonly relist: RelistSchedule;
}

const systemClock: Clock = { now: () => Date.now() };

/**
 * The tools of one remote MCP server, reached over Streamable HTTP with the 2.4 client (protocol
 * 2026-07-28, falling back to the 2025 revisions), and registered as `<server>__<tool>` with
 * `mcp:<server>` provenance, like a stdio server's. Every request goes through the guarded HTTP
 * client; each tool's manifest declares the server's host as its egress and, unless the operator
 * says otherwise, a `network` permission on it, so a call passes the caller's tenant egress
 * rules and grants. The tools run at tier `inprocess`: the handler is only the client; the
 * server's code runs on its own host.
 *
 * A server that cannot be reached (at start or later) is `restarting`: its tools are not
 * offered, a call answers `ToolNotReachedError`, and the source reconnects with the stdio
 * sources' backoff, reading its header files and its tool list again each time.
 */
export class McpRemoteToolSource implements ToolSource {
  readonly name: string;
  /** The URL's host, the tools' egress host and the default permission's scope. */
  readonly host: string;
  private readonly timeoutMs: number;
  private readonly startTimeoutMs: number;
  private readonly maxMessageBytes: number;
  private readonly pingIntervalMs: number;
  private readonly relistDelayMs: number;
  private readonly relistGapMs: number;
  private readonly clock: Clock;
  private readonly backoff: RestartBackoff;
  private live: Connection | undefined;
  private definitions: readonly ToolDefinition[] = [];
  private rejectedCount = 0;
  private closed = false;
  private attempt = 0;
  private everUp = false;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private reconnecting: Promise<void> | undefined;
  private stateSince: number;
  /** The last HTTP status refusing the credentials that was logged, so an outage is said once. */
  private authLogged: number | undefined;

  private constructor(
    /** The operator's configuration of this server (trusted). */
    readonly config: McpRemoteServerConfig,
    private readonly opts: McpRemoteToolSourceOptions,
  ) {
    this.name = config.name;
    this.host = bareHost(new URL(config.url));
    this.timeoutMs = config.timeoutMs ?? DEFAULT_REMOTE_TIMEOUT_MS;
    this.startTimeoutMs = opts.startTimeoutMs ?? DEFAULT_REMOTE_START_TIMEOUT_MS;
    this.maxMessageBytes = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.pingIntervalMs = opts.pingIntervalMs ?? DEFAULT_REMOTE_PING_INTERVAL_MS;
    this.relistDelayMs = opts.relist?.delayMs ?? DEFAULT_MCP_RELIST_DELAY_MS;
    this.relistGapMs = opts.relist?.gapMs ?? DEFAULT_MCP_RELIST_GAP_MS;
    this.clock = opts.clock ?? systemClock;
    this.backoff = new RestartBackoff({ ...DEFAULT_BACKOFF, ...opts.backoff }, this.clock);
    this.stateSince = this.clock.now();
  }

  /**
   * Reads the header files (a missing, unreadable or malformed one rejects: that is the
   * operator's configuration, not the server's availability) and connects. A server that cannot
   * be reached does not fail the start: the source starts `restarting` and keeps trying, since a
   * remote server being down says nothing about this gateway's own health.
   */
  static async start(config: McpRemoteServerConfig, opts: McpRemoteToolSourceOptions): Promise<McpRemoteToolSource> {
    const source = new McpRemoteToolSource(config, opts);
    await readRemoteHeaders(config);
    try {
      source.adopt(await source.connect());
    } catch (error) {
      source.opts.log(
        `MCP server '${config.name}' (remote, ${source.host}) did not come up at start: ${describe(error)}; its tools are offered once it answers`,
        'error',
      );
      source.backoff.crashed(source.clock.now());
      source.scheduleReconnect();
    }
    return source;
  }

  tools(): readonly ToolDefinition[] {
    return this.closed ? [] : this.definitions;
  }

  status(): ToolSourceStatus {
    const state: ToolSourceState = this.closed ? 'stopped' : this.live ? 'up' : this.attempt === 0 ? 'starting' : 'restarting';
    return { state, transport: 'http', attempt: this.attempt, accepted: this.closed ? 0 : this.definitions.length, rejected: this.rejectedCount, since: this.stateSince };
  }

  /** Ends the session (a 2025 session with `DELETE`) and any pending reconnect, for good. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stateSince = this.clock.now();
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const live = this.live;
    this.live = undefined;
    if (live) await this.endSession(live, true);
    // A reconnect still running finds the source closed and ends its session itself.
    await waitAtMost(this.reconnecting, CLOSE_GRACE_MS);
    this.opts.log(`MCP server '${this.name}' (remote) closed`);
  }

  private adopt(connection: Connection): void {
    this.live = connection;
    this.everUp = true;
    this.authLogged = undefined;
    this.definitions = connection.definitions;
    this.rejectedCount = connection.rejected;
    this.stateSince = this.clock.now();
    const names = connection.definitions.map((d) => d.manifest.name).join(', ') || 'none';
    this.opts.log(`MCP server '${this.name}' (remote, ${this.host}, protocol ${connection.protocol}) is up, tools: ${names}`);
    // An idle connection is checked now and then, so a server that went away stops being offered.
    connection.pingTimer = setInterval(() => void this.ping(connection), this.pingIntervalMs);
    connection.pingTimer.unref?.();
    connection.relist.adopted();
  }

  /** One re-reading; a failure keeps the tools read before, a success replaces them (the gateway pins each definition). */
  private async relistOnce(connection: Connection): Promise<void> {
    const gone = () => this.closed || this.live !== connection;
    try {
      const listed = await this.listTools(connection.client);
      if (gone()) return;
      const found = await discoverTools(listed, connection.reportedVersion, this.discovered(), gone);
      if (gone()) return;
      connection.names = found.names;
      connection.definitions = found.definitions.map((d) => this.remoteDefinition(d));
      connection.rejected = listed.length - found.definitions.length;
      this.definitions = connection.definitions;
      this.rejectedCount = connection.rejected;
      const names = connection.definitions.map((d) => d.manifest.name).join(', ') || 'none';
      this.opts.log(`MCP server '${this.name}' (remote) re-listed its tools (tools/list_changed): ${connection.definitions.length} accepted, ${connection.rejected} rejected; tools: ${names}`);
    } catch (error) {
      if (gone()) return;
      this.opts.log(
        `MCP server '${this.name}' (remote): re-reading its tools after tools/list_changed failed (${describe(error)}); it keeps the ${connection.definitions.length} tool(s) it had`,
        'warn',
      );
    }
  }

  /** Opens one session: header files read now (rotation), handshake, tool list. */
  private async connect(): Promise<Connection> {
    const headers = await readRemoteHeaders(this.config);
    const abort = new AbortController();
    const fetch = remoteFetch({
      http: this.opts.http,
      origin: new URL(this.config.url).origin,
      server: this.name,
      headers,
      maxMessageBytes: this.maxMessageBytes,
      // A server answering in JSON sends its headers with the result, so they may take the whole call.
      headersTimeoutMs: Math.max(this.timeoutMs, this.startTimeoutMs),
      signal: abort.signal,
      onStatus: (status) => this.sawStatus(status),
      onOversized: (message) => this.opts.log(`${message} (outside any call)`, 'warn'),
      inbound: new RemoteInbound(this.name, (message) => this.opts.log(message, 'warn')),
    });
    const transport = new StreamableHTTPClientTransport(new URL(this.config.url), {
      fetch,
      reconnectionOptions: { maxRetries: 2, initialReconnectionDelay: 1000, maxReconnectionDelay: 5000, reconnectionDelayGrowFactor: 2 },
      // The SDK would follow the server's `retry:` and restart its count at each open stream.
      reconnectionScheduler: reconnectionPacer(this.name, (message) => this.opts.log(message, 'warn'), abort.signal),
    });
    // No elicitation, sampling or roots are declared: a remote server's requests are not relayed
    // to callers (the stdio sources' relay, ADR 0054, is per connection and stdio-only).
    const client = new Client(CLIENT_INFO, { capabilities: {}, versionNegotiation: { mode: 'auto' }, jsonSchemaValidator: new LinearOutputValidator() });
    let connection: Connection | undefined;
    // The server's own log, at its level, bounded per session, as for a stdio server.
    const serverLog = serverLogSink(this.name, DEFAULT_MCP_SERVER_LOG_CHARS, this.opts.log, this.clock);
    client.setNotificationHandler('notifications/message', (notification) => serverLog(notification.params));
    // A change announced while the first listing runs is re-read once the connection is adopted.
    let changedEarly = false;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      if (connection) connection.relist.changed();
      else changedEarly = true;
    });
    // A rate, not a count for the connection's life: after a burst, later errors are still seen.
    const errorLog = new LogRate(ERROR_LOG_BURST, ERROR_LOG_EVERY_MS);
    client.onerror = (error) => {
      const left = errorLog.admit();
      if (left === undefined) return;
      this.opts.log(`MCP server '${this.name}' (remote): ${describe(error)}${left > 0 ? ` (${left} earlier error(s) not logged)` : ''}`, 'warn');
    };
    client.onclose = () => {
      if (connection) this.lost(connection, 'the session was closed');
    };
    try {
      await client.connect(transport, { timeout: this.startTimeoutMs });
      const listed = await this.listTools(client);
      const gone = () => this.closed || abort.signal.aborted;
      const reportedVersion = client.getServerVersion()?.version;
      const { definitions, names } = await discoverTools(listed, reportedVersion, this.discovered(), gone);
      if (this.closed) throw new Error('the source was closed while connecting');
      connection = {
        reportedVersion,
        relist: new RelistSchedule(
          {
            delayMs: this.relistDelayMs,
            gapMs: this.relistGapMs,
            clock: this.clock,
            relist: () => this.relistOnce(connection!),
            gone: () => this.closed || this.live !== connection,
            // Outside the call whose stream carried the notification: the listing is not that call's.
            startTimer: (start) => remoteCallScope.exit(start),
          },
          changedEarly,
        ),
        client,
        transport,
        abort,
        upSince: this.clock.now(),
        protocol: client.getNegotiatedProtocolVersion() ?? 'unknown',
        names,
        definitions: definitions.map((d) => this.remoteDefinition(d)),
        rejected: listed.length - definitions.length,
      };
      return connection;
    } catch (error) {
      abort.abort();
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Lists the tools with the stdio sources' listing cap (`MCP_LISTING_MESSAGE_BYTES`): a page is
   * parsed whole in one turn of the event loop, so a huge one would keep other callers waiting.
   * A page over it fails the listing at once.
   */
  private async listTools(client: Client): Promise<Awaited<ReturnType<typeof listAllTools>>> {
    const scope = new RemoteCallScope(MCP_LISTING_MESSAGE_BYTES);
    try {
      const listing = remoteCallScope.run(scope, () => listAllTools(client, this.discovered()));
      listing.catch(() => undefined);
      return await Promise.race([listing, scope.failed]);
    } finally {
      scope.end();
    }
  }

  /**
   * A discovered definition as a remote tool: tier `inprocess` (the handler only talks to the
   * server), the server's host as egress, and `network` on that host unless configured.
   */
  private remoteDefinition(definition: ToolDefinition): ToolDefinition {
    return {
      ...definition,
      manifest: { ...definition.manifest, tier: 'inprocess', egress: { hosts: [this.host] }, permissions: this.permissions() },
    };
  }

  private permissions(): readonly Permission[] {
    return this.config.permissions ?? [{ type: 'network', scope: this.host }];
  }

  /** This server as discovery sees it; its tools call back into {@link call}. */
  private discovered(): DiscoveredServer {
    // Discovery reads risk, permissions and tier from a server config; the tier is replaced by
    // `remoteDefinition` (and by the check below) before anything sees the definition.
    const config: McpServerConfig = {
      name: this.name,
      command: 'remote',
      args: [],
      env: {},
      tier: 'unisolated',
      permissions: this.permissions(),
      ...(this.config.risk === undefined ? {} : { risk: this.config.risk }),
    };
    const check = this.opts.check;
    return {
      name: this.name,
      config,
      timeoutMs: this.timeoutMs,
      startTimeoutMs: this.startTimeoutMs,
      discoveryBudget: this.opts.discoveryBudget,
      check: check === undefined ? undefined : (definition) => check(this.remoteDefinition(definition)),
      log: (message, level) => this.opts.log(message, level),
      invoke: (name, args, ctx) => this.call(name, args, ctx),
    };
  }

  /** One tool call, through the session live at the time of the call. */
  private async call(name: string, args: JsonObject, ctx: ToolContext): Promise<JsonValue> {
    if (ctx.signal.aborted) throw new ToolAbortedError();
    if (this.closed) throw new ToolNotReachedError(`MCP server '${this.name}' has been stopped`, 'MCP_SERVER_STOPPED');
    const live = this.live;
    if (!live) {
      throw new ToolNotReachedError(`MCP server '${this.name}' cannot be reached now (reconnect attempt ${this.attempt}); try again shortly`, 'MCP_SERVER_RESTARTING');
    }
    const remoteName = live.names.get(name);
    if (remoteName === undefined) throw new ToolNotReachedError(`MCP server '${this.name}' no longer offers '${name}'`, 'NOT_FOUND');
    const scope = new RemoteCallScope();
    // Ends the SDK's request when the call fails on the scope's side (an oversized answer).
    const stop = new AbortController();
    const progress = ctx.progress;
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      const pending = remoteCallScope.run(scope, () =>
        live.client.callTool(
          { name: remoteName, arguments: args },
          {
            signal: AbortSignal.any([ctx.signal, stop.signal]),
            timeout: this.timeoutMs,
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
          },
        ),
      );
      pending.catch(() => undefined);
      result = await Promise.race([pending, scope.failed]);
    } catch (error) {
      stop.abort();
      throw this.callFailure(name, error, ctx.signal, live, scope);
    } finally {
      scope.end();
    }
    if (!Array.isArray(result['content'])) throw new ToolError(`MCP server '${this.name}' sent a result without content for '${name}'`, 'MCP_BAD_RESPONSE');
    if (result.isError === true) throw new ToolError(`'${name}' failed: ${errorText(result)}`, 'MCP_TOOL_ERROR');
    return toToolOutput(result);
  }

  /**
   * What a failed call tells the gateway. A call is handed to the server (its approval used, ADR
   * 0068) unless every request it made provably never left: refused by the fetch or the guard
   * before a connection was dialed, or a TCP connect the peer refused. Any HTTP answer, whatever
   * its status (a 401, 403 or 404 included: the server or a proxy in front of it received the
   * whole request and may have acted on it), a reset, a timeout or an unreadable body is a call
   * that was handed over, so nothing the server sends can make this throw `ToolNotReachedError`.
   */
  private callFailure(name: string, error: unknown, signal: AbortSignal, live: Connection, scope: RemoteCallScope): ToolError {
    if (scope.tooLarge) {
      return new ToolError(`'${name}' answered with a message over ${this.maxMessageBytes} bytes; it was not read`, 'OUTPUT_TOO_LARGE');
    }
    if (signal.aborted) return new ToolAbortedError();
    if (this.closed) return new ToolError(`MCP server '${this.name}' has been stopped`, 'MCP_SERVER_STOPPED');
    if (scope.nothingSent) {
      // Nothing reached the server: the source goes back to reconnecting, and the call can be retried.
      this.lost(live, describe(error));
      return new ToolNotReachedError(`MCP server '${this.name}' cannot be reached; it is reconnecting, try again shortly`, 'MCP_SERVER_RESTARTING');
    }
    if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
      return new ToolError(`'${name}' did not answer within ${this.timeoutMs} ms`, 'TIMEOUT');
    }
    if (error instanceof ProtocolError) {
      // A JSON-RPC error from the server (unknown tool, invalid params): its text is meant for the caller.
      const text = sanitiseMessage(error.message.replace(/^(MCP error -?\d+: )+/, ''), MCP_TOOL_LIMITS.errorChars);
      return new ToolError(`MCP server '${this.name}' refused the call (error ${error.code}): ${text}`, 'MCP_PROTOCOL_ERROR');
    }
    const status = httpStatusOf(error);
    if (status === 401 || status === 403) {
      // Reconnecting reads the header files again, so a credential the operator replaces is picked up.
      this.lost(live, `it refused the credentials (HTTP ${status})`);
      return new ToolError(`MCP server '${this.name}' refused Toolgate's credentials (HTTP ${status}); the operator log says more`, 'MCP_AUTH_REFUSED');
    }
    if (status === 404) {
      // The spec's answer to a session the server no longer holds; a new session is opened. The
      // request was received all the same, so what the server did with it is not known.
      this.lost(live, 'the server no longer knows the session (HTTP 404)');
      return new ToolError(`MCP server '${this.name}' ended its session (HTTP 404); it is reconnecting`, 'MCP_SERVER_RESTARTING');
    }
    const cause = toolErrorIn(error);
    if (cause?.reason === 'REDIRECT_REFUSED') return new ToolError(cause.message, 'MCP_BAD_RESPONSE');
    if (cause && (cause.reason === 'CONNECTION_CLOSED' || cause.reason === 'NETWORK_ERROR')) {
      this.lost(live, describe(error));
      return new ToolError(`the connection to MCP server '${this.name}' broke during the call; it is reconnecting`, 'MCP_SERVER_RESTARTING');
    }
    // Anything else (HTML instead of MCP, a 5xx, a malformed answer) may carry detail not meant for agents.
    this.opts.log(`MCP server '${this.name}' (remote): call of '${name}' failed: ${describe(error)}`, 'warn');
    return new ToolError(`MCP server '${this.name}' sent an answer that could not be read`, 'MCP_BAD_RESPONSE');
  }

  /**
   * Checks an idle session: `ping` on a 2025 revision, `server/discover` on 2026-07-28 (which has
   * no ping). Only a failure to reach the server or an HTTP error means it went away; any answer,
   * even an error, means it is there.
   */
  private async ping(connection: Connection): Promise<void> {
    if (this.closed || this.live !== connection) return;
    const options = { timeout: this.startTimeoutMs, signal: connection.abort.signal };
    try {
      await (connection.protocol >= MODERN_PROTOCOL ? connection.client.discover(options) : connection.client.ping(options));
    } catch (error) {
      const timedOut = error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
      if (timedOut || toolErrorIn(error) !== undefined || httpStatusOf(error) !== undefined) {
        this.lost(connection, `it did not answer a ping (${describe(error)})`);
      }
    }
  }

  private sawStatus(status: number): void {
    if (status !== 401 && status !== 403) return;
    if (this.authLogged === status) return;
    this.authLogged = status;
    const names = Object.keys(this.config.headers);
    const which = names.length > 0 ? `check the files of its headers (${names.join(', ')})` : 'it has no "headers" configured';
    this.opts.log(`MCP server '${this.name}' (remote, ${this.host}) refused Toolgate's credentials (HTTP ${status}); ${which}`, 'error');
  }

  private lost(connection: Connection, why: string): void {
    if (this.closed || this.live !== connection) return;
    this.live = undefined;
    this.stateSince = this.clock.now();
    this.backoff.crashed(connection.upSince);
    this.opts.log(`MCP server '${this.name}' (remote, ${this.host}) was lost: ${why}; its tools are not offered until it reconnects`, 'warn');
    void this.endSession(connection, false);
    this.scheduleReconnect();
  }

  /** Ends one session; a 2025 session is ended at the server with DELETE when it may still be there. */
  private async endSession(connection: Connection, terminate: boolean): Promise<void> {
    clearInterval(connection.pingTimer);
    connection.relist.stop();
    if (terminate && connection.transport.sessionId !== undefined) {
      await connection.transport.terminateSession().catch(() => undefined);
    }
    connection.abort.abort();
    await connection.client.close().catch(() => undefined);
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const { attempt, delayMs } = this.backoff.next();
    this.attempt = attempt;
    this.opts.log(`MCP server '${this.name}' (remote): reconnect attempt ${attempt} in ${delayMs} ms`);
    // Outside the call that found the server gone: reconnecting is not that call's, and must outlive it.
    this.reconnectTimer = remoteCallScope.exit(() =>
      setTimeout(() => {
        this.reconnectTimer = undefined;
        this.reconnecting = this.reconnect().finally(() => (this.reconnecting = undefined));
      }, delayMs),
    );
    this.reconnectTimer.unref?.();
  }

  private async reconnect(): Promise<void> {
    let connection: Connection;
    try {
      connection = await this.connect();
    } catch (error) {
      if (this.closed) return;
      this.opts.log(`MCP server '${this.name}' (remote): reconnect attempt ${this.attempt} failed: ${describe(error)}`, this.everUp ? 'warn' : 'error');
      this.scheduleReconnect();
      return;
    }
    if (this.closed) {
      await this.endSession(connection, true);
      return;
    }
    this.adopt(connection);
  }
}

/** Waits for `pending` (if any) but never longer than `ms`. */
async function waitAtMost(pending: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (!pending) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([pending.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** The URL's host as egress rules spell it: no brackets around an IPv6 literal, no port. */
function bareHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** The guard's own error somewhere in the SDK's wrapping, if any. */
function toolErrorIn(error: unknown): ToolError | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ToolError) return e;
  }
  return undefined;
}

/** The HTTP status the transport reported, if the failure was one. */
function httpStatusOf(error: unknown): number | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof SdkHttpError) return e.status;
    const data = (e as { data?: { status?: unknown } }).data;
    if (e instanceof SdkError && typeof data?.status === 'number') return data.status;
  }
  return undefined;
}

/** An operator-readable reason (the operator log, never an agent): the guard's words when it refused. */
function describe(error: unknown): string {
  const guard = toolErrorIn(error);
  if (guard) return sanitiseMessage(guard.message, 300);
  const status = httpStatusOf(error);
  if (status !== undefined) return `it answered HTTP ${status}`;
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) return 'it did not answer in time';
  return sanitiseMessage(error instanceof Error ? error.message : String(error), 300);
}
