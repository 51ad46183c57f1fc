import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
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
/** Longest elicitation message relayed; longer ones are cut (after flattening, as other upstream text). */
export const MAX_RELAYED_MESSAGE_CHARS = 2000;

/**
 * The calls in flight on one connection to an upstream server, and the relay of the server's
 * requests to their callers.
 *
 * MCP over stdio carries no link from a server's request to the call that caused it: the SDK's
 * `relatedRequestId` routes messages between HTTP streams and never reaches the wire. So a request
 * is relayed only while exactly one call is in flight on the connection; with none it belongs to
 * nobody, and with several the gateway cannot tell whose it is. Both are refused: guessing could
 * hand one caller's question (or its answer) to another caller.
 */
export class CallerBridge {
  readonly #inflight = new Set<ToolContext>();

  constructor(private readonly server: string) {}

  /** Registers the upstream's elicitation and sampling requests on `client`. */
  attach(client: Client): void {
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => this.#relay('elicitation', request.params as JsonObject, extra.signal) as never);
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => this.#relay('sampling', request.params as JsonObject, extra.signal) as never);
  }

  /** Marks a call in flight on this connection; the returned function ends it. */
  track(ctx: ToolContext): () => void {
    this.#inflight.add(ctx);
    return () => this.#inflight.delete(ctx);
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
    const ask = kind === 'elicitation' ? ctx.caller?.elicit : ctx.caller?.sample;
    if (!ask) {
      ctx.caller?.refused?.(kind, `the calling client did not declare ${kind}`);
      throw new McpError(ErrorCode.InvalidRequest, `${kind} refused: the calling client did not declare ${kind}`);
    }
    const checked = checkParams(kind, params);
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

/** The params as relayed (the message flattened and capped), or why they are refused. */
function checkParams(kind: CallerRequestKind, params: JsonObject): JsonObject | string {
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
    return { ...params, message: sanitiseMessage(message, MAX_RELAYED_MESSAGE_CHARS) };
  }
  return params;
}
