import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { CallerRequestKind, JsonObject, ToolContext } from '@toolgate/contracts';
import { sanitiseMessage } from './mcp-tool-schema.js';

/**
 * What the gateway declares to every upstream server: it can relay elicitation (form and URL
 * mode) and sampling to the client that made the call. Whether a given call's client can answer
 * is known only per call, so a request the calling client cannot answer is refused then.
 */
export const UPSTREAM_CLIENT_CAPABILITIES = { elicitation: { form: {}, url: {} }, sampling: {} } as const;

/** Largest `elicitation/create` or `sampling/createMessage` params relayed, as JSON text. */
export const MAX_RELAYED_PARAMS_BYTES = 64 * 1024;
/** Longest elicitation message relayed, prefix included; longer ones are cut (after flattening, as other upstream text). */
export const MAX_RELAYED_MESSAGE_CHARS = 2000;

/**
 * What every relayed elicitation's message starts with, so the user sees which server asks and
 * that it is not Toolgate (whose own approval requests tell approvers to type their token into
 * its page): an upstream's message cannot pass for Toolgate's.
 */
export function relayedMessagePrefix(server: string): string {
  return `MCP server '${sanitiseMessage(server, 64)}' (not Toolgate) asks: `;
}

/** Why a relay is refused while an abandoned call may still be running upstream (said to the server and audited). */
export const QUARANTINE_REASON = 'an earlier call on this server may still be running';

/** The JSON-RPC id of one `tools/call` sent upstream, or `unknown` when the sender could not tell which one it was. */
export type UpstreamCallId = string | number | 'unknown';

/**
 * The calls in flight on one connection to an upstream server, and the relay of the server's
 * requests to their callers.
 *
 * MCP over stdio carries no link from a server's request to the call that caused it: the SDK's
 * `relatedRequestId` routes messages between HTTP streams and never reaches the wire. So a request
 * is relayed only while exactly one call is in flight on the connection; with none it belongs to
 * nobody, and with several the gateway cannot tell whose it is. Both are refused: guessing could
 * hand one caller's question (or its answer) to another caller.
 *
 * A call stops being in flight here when the gateway's `callTool` settles (cancel, disconnect,
 * timeout), not when the server stops working on it: MCP cancellation is advisory. So a call
 * abandoned before the server answered it quarantines the connection (ADR 0057): every request
 * is refused until the server's late answer to that call's `tools/call` arrives, or until the
 * server's call deadline has passed since the abandonment. And the server's own unanswered
 * `tools/call` requests are counted from the wire: a request is relayed only when exactly one is.
 */
export class CallerBridge {
  readonly #inflight = new Set<ToolContext>();
  /** The `tools/call` id each call in flight was sent as, where known. */
  readonly #ownIds = new Map<ToolContext, string | number>();
  /** `tools/call` ids sent upstream and not yet answered (from the transport, which sees every message). */
  readonly #unanswered = new Set<string | number>();
  /** Abandoned calls still unanswered upstream, each with the timer that lifts its quarantine at the deadline. */
  readonly #quarantined = new Map<string | number | symbol, ReturnType<typeof setTimeout>>();
  #sent = 0;
  #lastSent: string | number | undefined;

  /**
   * @param server the server's name, for errors.
   * @param deadlineMs the server's call deadline (`timeoutMs`): how long an abandoned call's quarantine lasts at most.
   */
  constructor(
    private readonly server: string,
    private readonly deadlineMs: number,
  ) {}

  /** Registers the upstream's elicitation and sampling requests on `client`. */
  attach(client: Client): void {
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => this.#relay('elicitation', request.params as JsonObject, extra.signal) as never);
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => this.#relay('sampling', request.params as JsonObject, extra.signal) as never);
  }

  /** Sees a message the gateway sends to the server (wire it to the transport's send). */
  sent(message: JSONRPCMessage): void {
    if ('method' in message && message.method === 'tools/call' && 'id' in message) {
      this.#unanswered.add(message.id);
      this.#sent += 1;
      this.#lastSent = message.id;
    }
  }

  /** Sees a message the server sends, before the SDK handles it (wire it to the transport's receive). */
  received(message: JSONRPCMessage): void {
    if ('method' in message || !('id' in message) || message.id === null || message.id === undefined) return;
    // The SDK reads an answer's id as a number, so `"7"` answers request 7: matched the same way.
    const sent = message.id as string | number;
    const id = typeof sent === 'string' && !this.#unanswered.has(sent) && !this.#quarantined.has(sent) && Number.isFinite(Number(sent)) ? Number(sent) : sent;
    this.#unanswered.delete(id);
    const timer = this.#quarantined.get(id);
    if (timer === undefined) return;
    // Lifted on the next turn, not now: the transport hands a read's messages over in one loop,
    // before the SDK runs any request handler, so a question the server wrote before this late
    // answer would otherwise be judged after it and reach the call in flight.
    setImmediate(() => {
      if (this.#quarantined.get(id) !== timer) return;
      clearTimeout(timer);
      this.#quarantined.delete(id);
    });
  }

  /** How many `tools/call` requests have been sent so far; with {@link lastSent}, which id a call was sent as. */
  get sentCount(): number {
    return this.#sent;
  }

  /** The id of the latest `tools/call` sent. */
  get lastSent(): string | number | undefined {
    return this.#lastSent;
  }

  /** Whether relays are refused now because an abandoned call may still be running upstream. */
  get quarantined(): boolean {
    return this.#quarantined.size > 0;
  }

  /**
   * Marks a call in flight on this connection. The returned function ends it, given the id its
   * `tools/call` was sent as (undefined: none was sent; `unknown`: one was, but which is not
   * known). A call that ends while the server has not answered it quarantines the connection.
   */
  track(ctx: ToolContext): { sentAs(id: UpstreamCallId): void; end(): void } {
    let sentAs: UpstreamCallId | undefined;
    this.#inflight.add(ctx);
    return {
      sentAs: (id) => {
        sentAs = id;
        if (id !== 'unknown') this.#ownIds.set(ctx, id);
      },
      end: () => {
        this.#inflight.delete(ctx);
        this.#ownIds.delete(ctx);
        if (sentAs === undefined || (sentAs !== 'unknown' && !this.#unanswered.has(sentAs))) return;
        this.#quarantine(sentAs);
      },
    };
  }

  /** Refuses relays until `id` is answered or the deadline has passed. */
  #quarantine(id: UpstreamCallId): void {
    // Fail closed: an id not known is held to the deadline, as no answer can be matched to it.
    const key = id === 'unknown' ? Symbol('unknown call') : id;
    // Which ids the unknown one may be: every one unanswered now that no call in flight owns.
    const candidates = id === 'unknown' ? [...this.#unanswered].filter((u) => ![...this.#ownIds.values()].includes(u)) : [id];
    clearTimeout(this.#quarantined.get(key));
    const timer = setTimeout(() => {
      this.#quarantined.delete(key);
      // Past its deadline the call no longer counts as unanswered, or it would block every relay for good.
      for (const candidate of candidates) this.#unanswered.delete(candidate);
    }, this.deadlineMs);
    timer.unref?.();
    this.#quarantined.set(key, timer);
  }

  /** Forgets every quarantine (the connection is closed). */
  dispose(): void {
    for (const timer of this.#quarantined.values()) clearTimeout(timer);
    this.#quarantined.clear();
    this.#unanswered.clear();
  }

  async #relay(kind: CallerRequestKind, params: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    if (this.#inflight.size === 0) {
      throw new McpError(ErrorCode.InvalidRequest, `${kind} refused: no tool call is in flight on this connection, so there is no caller to ask`);
    }
    if (this.#inflight.size > 1) {
      const refusal = `${kind} refused: ${this.#inflight.size} calls are in flight on this connection and MCP over stdio does not say which one asks`;
      for (const ctx of this.#inflight) ctx.caller?.refused?.(kind, 'several calls in flight; the caller could not be told apart');
      throw new McpError(ErrorCode.InvalidRequest, refusal);
    }
    const [ctx] = this.#inflight as unknown as [ToolContext];
    // The request may be the abandoned call's, asked late: the one call in flight is not known to be the asker.
    if (this.#quarantined.size > 0) {
      ctx.caller?.refused?.(kind, QUARANTINE_REASON);
      throw new McpError(ErrorCode.InvalidRequest, `${kind} refused: ${QUARANTINE_REASON} (it was abandoned before this server answered it), so the caller cannot be told apart`);
    }
    if (this.#unanswered.size !== 1) {
      const reason = `${this.#unanswered.size} tool calls are unanswered on this connection`;
      ctx.caller?.refused?.(kind, reason);
      throw new McpError(ErrorCode.InvalidRequest, `${kind} refused: ${reason}, so the caller cannot be told apart`);
    }
    const ask = kind === 'elicitation' ? ctx.caller?.elicit : ctx.caller?.sample;
    if (!ask) {
      ctx.caller?.refused?.(kind, `the calling client did not declare ${kind}`);
      throw new McpError(ErrorCode.InvalidRequest, `${kind} refused: the calling client did not declare ${kind}`);
    }
    const checked = checkParams(kind, params, this.server);
    if (typeof checked === 'string') {
      ctx.caller?.refused?.(kind, checked);
      throw new McpError(ErrorCode.InvalidParams, `${kind} refused: ${checked}`);
    }
    // The upstream's own cancellation and the call's end both stop the wait for the caller.
    const both = AbortSignal.any([signal, ctx.signal]);
    try {
      return await ask.call(ctx.caller, checked, both);
    } catch (error) {
      if (error instanceof McpError) throw error;
      const why = error instanceof Error ? sanitiseMessage(error.message, 300) : 'the caller did not answer';
      throw new McpError(ErrorCode.InternalError, `${kind} was not answered by the calling client: ${why}`, { server: this.server });
    }
  }
}

/** The params as relayed (the message flattened, capped and prefixed with who asks), or why they are refused. */
function checkParams(kind: CallerRequestKind, params: JsonObject, server: string): JsonObject | string {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return 'params must be a JSON object';
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(params));
  } catch {
    return 'params are not JSON';
  }
  if (size > MAX_RELAYED_PARAMS_BYTES) return `params of ${size} bytes exceed the relay's limit of ${MAX_RELAYED_PARAMS_BYTES} bytes`;
  if (kind === 'elicitation') {
    const message = params['message'];
    if (typeof message !== 'string') return 'an elicitation needs a message';
    const prefix = relayedMessagePrefix(server);
    return { ...params, message: `${prefix}${sanitiseMessage(message, MAX_RELAYED_MESSAGE_CHARS - prefix.length)}` };
  }
  return params;
}
