import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  ToolAbortedError,
  ToolError,
  type Clock,
  type JsonObject,
  type JsonValue,
  type ProcessRunner,
  type ToolContext,
  type ToolDefinition,
  type ToolSource,
} from '@toolgate/contracts';
import { CallerBridge, UPSTREAM_CLIENT_CAPABILITIES } from './caller-bridge.js';
import type { DiscoveryBounds } from './discovery-budget.js';
import type { McpServerConfig } from './mcp-servers-config.js';
import { LinearOutputValidator, MCP_TOOL_LIMITS, errorText, sanitiseMessage, toToolOutput } from './mcp-tool-schema.js';
import { ProcessGroupStdioTransport } from './process-group-stdio-transport.js';
import { DEFAULT_BACKOFF, RestartBackoff, type BackoffPolicy } from './restart-backoff.js';
import { stderrLogSink } from './stderr-log.js';
import { discoverTools, listAllTools, type DiscoveredServer } from './tool-discovery.js';

/** Deadline of one call when the server's config names none. */
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;
/** Bound of the start-up handshake and the tool listing. */
export const DEFAULT_MCP_START_TIMEOUT_MS = 10_000;
/** Stderr logged per server process before the rest is dropped. */
export const DEFAULT_MCP_STDERR_LOG_BYTES = 16 * 1024;
/**
 * Largest message read while the tools are listed: a page is parsed and checked whole in one
 * turn of the event loop (a 2.4 MB page took 80–190 ms), and no page this large could fit the
 * server's discovery budget anyway (`MCP_DISCOVERY_BUDGET.schemaBytes` across all its tools).
 */
export const MCP_LISTING_MESSAGE_BYTES = 1024 * 1024;
const MAX_ERRORS_LOGGED = 100;
const CLIENT_INFO = { name: 'toolgate', version: '0.1.0' };

export interface McpToolSourceOptions {
  /** Host directory the server runs in (its working directory, and its only writable place at tier 2). */
  readonly workspaceRoot: string;
  /** Operator log: start, crash, restart, skipped tools, and the server's stderr. Never shown to agents. */
  readonly log: (message: string) => void;
  readonly backoff?: Partial<BackoffPolicy>;
  /** Measures how long the server stayed up, to reset the backoff after a stable run. */
  readonly clock?: Clock;
  readonly startTimeoutMs?: number;
  readonly stderrLogBytes?: number;
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
}

/** Where the server is, for health reporting. */
export interface McpServerStatus {
  readonly state: 'up' | 'restarting' | 'stopped';
  /** Number of the latest restart attempt (0 if the server never had to be restarted). */
  readonly attempt: number;
  readonly tools: number;
}

/** One live server process and what it offered when it came up. */
interface Connection {
  readonly client: Client;
  readonly upSince: number;
  /** Registry name → the server's own tool name. */
  readonly names: ReadonlyMap<string, string>;
  readonly definitions: readonly ToolDefinition[];
  readonly transport: ProcessGroupStdioTransport;
  /** The calls in flight on this connection, to which the server's own requests are relayed. */
  readonly bridge: CallerBridge;
}

const systemClock: Clock = { now: () => Date.now() };

/**
 * The tools of one MCP server, started over stdio inside a sandbox tier and registered as
 * `<server>__<tool>` with `mcp:<server>` provenance. They are unverified code: risk `high` and
 * an `exec` permission on `mcp:<server>` unless the operator's config says otherwise, closed
 * input schemas, and every call passes the gateway's gates like a first-party tool's.
 *
 * A server that exits is started again with exponential backoff; meanwhile its tools stay
 * registered and answer a ToolError saying so, and on restart the tool list is read again.
 * `close()` stops the server for good.
 */
export class McpToolSource implements ToolSource {
  readonly name: string;
  private readonly timeoutMs: number;
  private readonly startTimeoutMs: number;
  private readonly stderrLogBytes: number;
  private readonly clock: Clock;
  private readonly backoff: RestartBackoff;
  private live: Connection | undefined;
  /** The tools last discovered; kept while the server is down so calls get a clear answer. */
  private definitions: readonly ToolDefinition[] = [];
  private closed = false;
  private attempt = 0;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private restarting: Promise<void> | undefined;

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
    this.clock = opts.clock ?? systemClock;
    this.backoff = new RestartBackoff({ ...DEFAULT_BACKOFF, ...opts.backoff }, this.clock);
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

  status(): McpServerStatus {
    if (this.closed) return { state: 'stopped', attempt: this.attempt, tools: 0 };
    return { state: this.live ? 'up' : 'restarting', attempt: this.attempt, tools: this.definitions.length };
  }

  /** Stops the server and any pending restart, for good. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const live = this.live;
    this.live = undefined;
    if (live) await live.client.close().catch(() => undefined);
    // A restart already spawning a process sees `closed` and stops that process itself.
    await this.restarting;
    this.opts.log(`MCP server '${this.name}' stopped`);
  }

  private adopt(connection: Connection): void {
    this.live = connection;
    this.definitions = connection.definitions;
    const names = connection.definitions.map((d) => d.manifest.name).join(', ') || 'none';
    this.opts.log(`MCP server '${this.name}' is up (pid ${connection.transport.pid ?? '?'}), tools: ${names}`);
    // Had the process died between its last answer and now, `onExit` would have ignored it.
    if (connection.client.transport === undefined) this.onExit(connection);
  }

  /** Spawns one server process inside the tier and reads its tools. */
  private async connect(): Promise<Connection> {
    const prepared = this.runner.prepare(
      { command: this.config.command, args: this.config.args, env: this.config.env },
      this.opts.workspaceRoot,
    );
    // The bridge sees every message on the wire, to count the server's unanswered calls (ADR 0057).
    const bridge = new CallerBridge(this.name, this.timeoutMs);
    // Stderr is piped to the operator log, so the server's diagnostics never reach an agent.
    const transport = new ProcessGroupStdioTransport(prepared, {
      onStderr: stderrLogSink(this.name, this.stderrLogBytes, this.opts.log),
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
    let connection: Connection | undefined;
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
      connection = { client, upSince: this.clock.now(), names, definitions, transport, bridge };
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
    if (this.closed) throw new ToolError(`MCP server '${this.name}' has been stopped`, 'MCP_SERVER_STOPPED');
    const live = this.live;
    if (!live) {
      throw new ToolError(`MCP server '${this.name}' is restarting (attempt ${this.attempt}); try again shortly`, 'MCP_SERVER_RESTARTING');
    }
    const remoteName = live.names.get(name);
    if (remoteName === undefined) {
      throw new ToolError(`MCP server '${this.name}' no longer offers '${name}' since its restart`, 'NOT_FOUND');
    }
    let result: Awaited<ReturnType<Client['callTool']>>;
    const progress = ctx.progress;
    const tracked = live.bridge.track(ctx);
    const sentBefore = live.bridge.sentCount;
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
      const sentSince = live.bridge.sentCount - sentBefore;
      tracked.sentAs(sentSince === 1 ? (live.bridge.lastSent ?? 'unknown') : 'unknown');
      result = await pending;
    } catch (error) {
      throw this.callFailure(name, error, ctx.signal, live);
    } finally {
      tracked.end();
    }
    if (!Array.isArray(result['content'])) {
      throw new ToolError(`MCP server '${this.name}' sent a result without content for '${name}'`, 'MCP_BAD_RESPONSE');
    }
    if (result.isError === true) throw new ToolError(`'${name}' failed: ${errorText(result)}`, 'MCP_TOOL_ERROR');
    return toToolOutput(result);
  }

  private callFailure(name: string, error: unknown, signal: AbortSignal, live: Connection): ToolError {
    if (signal.aborted) return new ToolAbortedError();
    if (this.closed) return new ToolError(`MCP server '${this.name}' has been stopped`, 'MCP_SERVER_STOPPED');
    // The process may be gone before the client has noticed; then the request fails to send.
    const gone = live.transport.exit !== undefined || this.live !== live;
    if (gone || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)) {
      return new ToolError(`MCP server '${this.name}' exited during the call; it is restarting, try again shortly`, 'MCP_SERVER_RESTARTING');
    }
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return new ToolError(`'${name}' did not answer within ${this.timeoutMs} ms`, 'TIMEOUT');
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

  private onExit(connection: Connection): void {
    if (this.closed || this.live !== connection) return;
    this.live = undefined;
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
function describe(error: unknown): string {
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) return 'the process exited before it answered';
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return 'it did not answer in time';
  return sanitiseMessage(error instanceof Error ? error.message : String(error), 300);
}
