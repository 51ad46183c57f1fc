import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { Client, ProtocolError as ClientProtocolError, SdkErrorCode, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import {
  CLIENT_CAPABILITIES_META_KEY,
  isInputRequiredResult,
  isSpecType,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type ClientCapabilities,
  type CreateMessageRequestParams,
  type ElicitRequestFormParams,
  type ElicitRequestURLParams,
  type InputRequiredResult,
  type ListToolsResult,
  type Progress,
  type ServerCapabilities,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { StdioLineTransport } from './stdio-line-transport.js';

/**
 * The longest a forwarded request may wait for the server; the server's own deadlines end a call
 * first, the longest being an approval hold (TOOLGATE_MCP_APPROVAL_WAIT_MS, at most one hour).
 */
const FORWARD_TIMEOUT_MS = 65 * 60_000;

/** The most `input_required` rounds the bridge answers for one call (the SDK's own driver stops at 10 too). */
const MAX_INPUT_ROUNDS = 10;

/** Why the bridge could not start, said for a human; never carries the token. */
export class BridgeStartError extends Error {}

export interface McpBridgeOptions {
  /** The Toolgate server's base URL; the bridge speaks to `<url>/mcp`. */
  readonly url: string;
  readonly token: string;
  /** The version the bridge reports as its own client identity upstream. */
  readonly version: string;
  readonly stdin: Readable;
  readonly stdout: Writable;
  /** One line for the human running the desktop client (stderr). */
  readonly log: (line: string) => void;
}

export interface McpBridge {
  /** Resolves when the desktop client closes stdin (or `close()` is called). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** The server's MCP endpoint for a base URL as the rest of the CLI takes it (`--url`). */
export function mcpEndpoint(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BridgeStartError(`--url is not a URL (expected e.g. http://127.0.0.1:8765)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new BridgeStartError(`--url must be http:// or https:// (got ${parsed.protocol})`);
  if (parsed.username || parsed.password) throw new BridgeStartError('--url must not carry credentials; pass the token with --token, --token-file or TOOLGATE_TOKEN');
  parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/mcp`;
  parsed.search = '';
  parsed.hash = '';
  return parsed;
}

/** Whether an upstream failure is the server refusing the bearer token (HTTP 401). */
function isUnauthorized(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    // The SDK's transport raises UnauthorizedError for a 401 when the auth provider cannot refresh the token.
    if (e instanceof UnauthorizedError) return true;
    const { status, data } = e as { status?: number; data?: { status?: number } };
    if (status === 401 || data?.status === 401) return true;
  }
  return false;
}

/** A one-line reason for an upstream transport failure, naming the host and never the token. */
function describeUpstreamFailure(error: unknown, host: string): string {
  if (isUnauthorized(error)) return `the server at ${host} refused the token (HTTP 401); check --token, --token-file or TOOLGATE_TOKEN`;
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `cannot reach the Toolgate server at ${host} (${code}); is it running? set --url or TOOLGATE_URL`;
  }
  if (error instanceof Error && /fetch failed|network|socket|terminated/i.test(error.message)) return `cannot reach the Toolgate server at ${host}; is it running? set --url or TOOLGATE_URL`;
  const code = (error as { code?: unknown }).code;
  if (code === SdkErrorCode.RequestTimeout) return `the Toolgate server at ${host} did not answer in time`;
  return `the Toolgate server at ${host} did not answer as an MCP server (${typeof code === 'string' ? code : error instanceof Error ? error.name : 'error'})`;
}

/** Removes one value from a string, however the message embeds it. */
function redact(text: string, secret: string): string {
  return secret ? text.split(secret).join('[token]') : text;
}

/**
 * `toolgate mcp`: a stdio MCP server for a desktop client that forwards every request to a
 * running Toolgate server's `/mcp` over Streamable HTTP with the bearer token. It holds no
 * policy: it has no tool list and makes no decision of its own, and what the server answers
 * (a result, a tool error, a JSON-RPC error) is what the client gets. Connects upstream before it
 * reads stdin, so a wrong URL or token fails the start instead of the first call.
 */
export async function startMcpBridge(options: McpBridgeOptions): Promise<McpBridge> {
  const endpoint = mcpEndpoint(options.url);
  const host = endpoint.host;
  const { token } = options;
  let lastLine = '';
  const say = (line: string) => {
    // The transport and the failed request report the same outage; the human reads it once.
    if (line === lastLine) return;
    lastLine = line;
    options.log(redact(line, token));
  };

  /** The desktop client once it has initialized (one stdio connection per bridge). */
  let desktop: Server | undefined;
  const upstream = new Client(
    { name: 'toolgate-mcp-bridge', version: options.version },
    // Elicitation and sampling are declared so their handlers can exist; each call then declares,
    // in its own envelope, only what the desktop client declared (desktopElicitation,
    // desktopSampling), and each handler passes a request on only when the desktop client declared
    // it. Roots are not forwarded. The bridge answers a 2026-07-28 server's input_required rounds
    // itself (answerRound), not the SDK's driver, so one request it cannot answer fails only that request.
    { capabilities: { elicitation: { form: {}, url: {} }, sampling: { context: {}, tools: {} } }, versionNegotiation: { mode: 'auto' }, inputRequired: { autoFulfill: false } },
  );
  /** Passes one elicitation on to the desktop client in a mode it declared, else refuses it. */
  const elicit = async (params: ElicitRequestFormParams | ElicitRequestURLParams, signal: AbortSignal) => {
    const mode = params.mode ?? 'form';
    const declared = desktopElicitation(desktop?.getClientCapabilities());
    if (!desktop || !(mode === 'url' ? declared?.url : declared?.form)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, `the desktop client did not declare ${mode}-mode elicitation`);
    }
    // The desktop client's answer is the answer; the bridge decides nothing (an accept approves nothing either, ADR 0050).
    return desktop.elicitInput(withElicitationId(params) as ElicitRequestFormParams | ElicitRequestURLParams, { signal, timeout: FORWARD_TIMEOUT_MS });
  };
  /** Passes one sampling request on to the desktop client if it declared sampling (with tools, for one with tools), else refuses it. */
  const sample = async (params: CreateMessageRequestParams, signal: AbortSignal) => {
    // `desktop` is set by initialize, which a 2026-07-28 desktop client never sends: it is never asked.
    const declared = desktopSampling(desktop?.getClientCapabilities());
    if (!desktop || !declared) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'the desktop client did not declare sampling');
    // Tools in a sampling request need the desktop client's sampling.tools; said here, not as the SDK's generic error.
    if ((params.tools !== undefined || params.toolChoice !== undefined) && !declared.tools) {
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'the desktop client did not declare sampling with tools');
    }
    // The desktop client's model answers; the bridge passes the request and the answer as they are and decides nothing.
    return desktop.createMessage(params, { signal, timeout: FORWARD_TIMEOUT_MS });
  };
  // A server on a 2025 revision sends its requests to these handlers; a 2026-07-28 one embeds them in the call's result (answerRound).
  upstream.setRequestHandler('elicitation/create', (request, ctx) => elicit(request.params as ElicitRequestFormParams | ElicitRequestURLParams, ctx.mcpReq.signal));
  upstream.setRequestHandler('sampling/createMessage', (request, ctx) => sample(request.params, ctx.mcpReq.signal));

  /**
   * Answers one `input_required` round's requests through the desktop client. A request it
   * cannot answer (not declared, refused by the user, malformed) is left out of the answers,
   * which fails that request at the server, so the server ends the call with its own error at
   * once instead of holding it for a retry that never comes; stderr says why.
   */
  const answerRound = async (inputRequests: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> => {
    const answers: Record<string, unknown> = {};
    await Promise.all(
      Object.entries(inputRequests).map(async ([key, entry]) => {
        const { method, params } = (entry ?? {}) as { method?: unknown; params?: unknown };
        try {
          const named = withElicitationId(params);
          if (method === 'elicitation/create' && isSpecType.ElicitRequestParams(named)) answers[key] = await elicit(named, signal);
          else if (method === 'sampling/createMessage' && isSpecType.CreateMessageRequestParams(params)) answers[key] = await sample(params, signal);
          else throw new ProtocolError(ProtocolErrorCode.InvalidParams, `the bridge does not pass on this request (${typeof method === 'string' ? method.slice(0, 60) : 'no method'})`);
        } catch (error) {
          if (signal.aborted) throw error;
          const reason = error instanceof Error ? error.message : String(error);
          say(`toolgate mcp: a ${typeof method === 'string' ? method.slice(0, 60) : 'server'} request was not answered: ${reason.replace(/\s+/g, ' ').slice(0, 200)}`);
        }
      }),
    );
    return answers;
  };
  upstream.setNotificationHandler('notifications/elicitation/complete', (notification) => {
    void desktop?.notification(notification).catch(() => undefined);
  });
  upstream.onerror = (error) => say(`toolgate mcp: ${describeUpstreamFailure(error, host)}`);
  const transport = new StreamableHTTPClientTransport(endpoint, {
    authProvider: { token: async () => token },
    // The token goes to the one origin the operator named; a redirect elsewhere fails the request.
    redirectPolicy: 'same-origin',
  });
  try {
    await upstream.connect(transport, { timeout: 15_000 });
  } catch (error) {
    await upstream.close().catch(() => undefined);
    throw new BridgeStartError(describeUpstreamFailure(error, host));
  }

  const upstreamCapabilities: ServerCapabilities = upstream.getServerCapabilities() ?? {};
  const serverInfo = upstream.getServerVersion() ?? { name: 'toolgate', version: 'unknown' };
  const instructions = upstream.getInstructions();
  // Only what the bridge forwards is advertised: tools as the server describes them, without
  // list-change pushes, which a stateless upstream does not send to the bridge to pass on.
  const capabilities: ServerCapabilities = upstreamCapabilities.tools ? { tools: { ...upstreamCapabilities.tools, listChanged: false } } : {};

  let unreachable = false;
  /**
   * Runs one forwarded request. The server's answer (even a JSON-RPC error) is passed on as it
   * came; a transport failure becomes the JSON-RPC error the desktop client gets, and is said on
   * stderr once per outage.
   */
  const forward = async <T>(send: () => Promise<T>): Promise<T> => {
    let answer: T;
    try {
      answer = await send();
    } catch (error) {
      if (error instanceof ClientProtocolError || error instanceof ProtocolError) {
        const { code, message, data } = error as { code: number; message: string; data?: unknown };
        throw new ProtocolError(code, message, data);
      }
      if ((error as { name?: string }).name === 'AbortError') throw error;
      const reason = describeUpstreamFailure(error, host);
      unreachable = true;
      say(`toolgate mcp: ${reason}`);
      // Never a made-up tool result: every isError a client sees came from the server's gates.
      throw new ProtocolError(ProtocolErrorCode.InternalError, `toolgate bridge: ${reason}`);
    }
    if (unreachable) {
      unreachable = false;
      say(`toolgate mcp: the server at ${host} answers again`);
    }
    return answer;
  };

  const factory = (): Server => {
    const server = new Server({ ...serverInfo }, { capabilities, ...(instructions ? { instructions } : {}) });
    server.oninitialized = () => {
      desktop = server;
    };
    if (capabilities.tools) {
      server.setRequestHandler('tools/list', (request, ctx) =>
        forward(() => upstream.request({ method: 'tools/list', params: forwardParams(request.params) }, { signal: ctx.mcpReq.signal, timeout: FORWARD_TIMEOUT_MS }) as Promise<ListToolsResult>),
      );
      server.setRequestHandler('tools/call', (request, ctx) => {
        const progressToken = request.params._meta?.progressToken;
        // Upstream hears exactly what elicitation and sampling the desktop client declared, per call (2026-07-28 envelope).
        const declared = ctx.mcpReq.envelope ? undefined : server.getClientCapabilities();
        const elicitation = desktopElicitation(declared);
        const sampling = desktopSampling(declared);
        const params = forwardParams(request.params) ?? {};
        const meta = {
          ...(params['_meta'] as Record<string, unknown> | undefined),
          [CLIENT_CAPABILITIES_META_KEY]: { ...(elicitation ? { elicitation } : {}), ...(sampling ? { sampling } : {}) },
        };
        const first = { ...params, _meta: meta };
        const options = {
          // The client's notifications/cancelled aborts this signal, and with it the upstream request.
          signal: ctx.mcpReq.signal,
          timeout: FORWARD_TIMEOUT_MS,
          // The bridge drives the rounds itself (answerRound), so a request it cannot answer fails that request, not the call.
          allowInputRequired: true,
          ...(progressToken !== undefined
            ? {
                resetTimeoutOnProgress: true,
                onprogress: (progress: Progress) => void ctx.mcpReq.notify({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => undefined),
              }
            : {}),
        };
        return forward(async () => {
          let result = (await upstream.request({ method: 'tools/call', params: first }, options)) as CallToolResult | InputRequiredResult;
          for (let round = 1; isInputRequiredResult(result); round++) {
            if (round > MAX_INPUT_ROUNDS) throw new ProtocolError(ProtocolErrorCode.InternalError, `toolgate bridge: the server asked for input more than ${MAX_INPUT_ROUNDS} times in one call`);
            const { inputRequests, requestState } = result as InputRequiredResult;
            const inputResponses = await answerRound(inputRequests ?? {}, ctx.mcpReq.signal);
            const retry = { ...first, ...(Object.keys(inputResponses).length > 0 ? { inputResponses } : {}), ...(requestState !== undefined ? { requestState } : {}) };
            result = (await upstream.request({ method: 'tools/call', params: retry }, options)) as CallToolResult | InputRequiredResult;
          }
          return result as CallToolResult;
        });
      });
    }
    // A ping is answered by the server, so a client's liveness check covers the whole path. The
    // 2026-07-28 revision has no ping; there `server/discover` is the round trip that proves the server answers.
    server.setRequestHandler('ping', (_request, ctx) =>
      forward(async () => {
        const options = { signal: ctx.mcpReq.signal, timeout: 15_000 };
        if (upstream.getProtocolEra() === 'modern') await upstream.discover(options);
        else await upstream.ping(options);
        return {};
      }),
    );
    return server;
  };

  const wire = new StdioLineTransport({ stdin: options.stdin, stdout: options.stdout });
  const stdio = serveStdio(factory, { transport: wire, onerror: (error) => say(`toolgate mcp: ${error.message.slice(0, 200)}`) });
  // The desktop client closing stdin ends the session; nothing upstream outlives it.
  const closed = wire.ended.then(() => upstream.close()).catch(() => undefined);
  say(`toolgate mcp: forwarding stdio to ${endpoint.origin}${endpoint.pathname} (${upstream.getProtocolEra() ?? 'unknown'} era)`);
  return {
    closed,
    async close() {
      await stdio.close();
      await wire.close();
      await closed;
    },
  };
}

/**
 * The params to send upstream: the client's own, less the hop-level `_meta` the SDK writes for
 * each connection (protocol envelope, progress token), so the bridge's upstream connection
 * describes itself and the client's other `_meta` keys still reach the server (such as
 * `toolgate/approvalId`, ADR 0050).
 */
function forwardParams<P extends { _meta?: Record<string, unknown> } | undefined>(params: P): Record<string, unknown> | undefined {
  if (!params) return undefined;
  const { _meta, ...rest } = params as { _meta?: Record<string, unknown> };
  if (!_meta) return rest;
  const kept = Object.fromEntries(Object.entries(_meta).filter(([key]) => key !== 'progressToken' && !key.startsWith('io.modelcontextprotocol/')));
  return Object.keys(kept).length > 0 ? { ...rest, _meta: kept } : rest;
}

/**
 * The elicitation modes a desktop client declared, as the 2025-11-25 revision reads them (a bare
 * `elicitation: {}` is form mode), or undefined. A 2026-07-28 desktop client is not asked
 * through the bridge: the bridge cannot hand an `input_required` on, so it declares nothing for it.
 */
function desktopElicitation(declared: ClientCapabilities | undefined): { form?: object; url?: object } | undefined {
  const elicitation = declared?.elicitation as Record<string, unknown> | undefined;
  if (!elicitation || typeof elicitation !== 'object') return undefined;
  const form = typeof elicitation['form'] === 'object' || Object.keys(elicitation).length === 0;
  const url = typeof elicitation['url'] === 'object';
  if (!form && !url) return undefined;
  return { ...(form ? { form: {} } : {}), ...(url ? { url: {} } : {}) };
}

/**
 * The sampling a desktop client declared (with its `context` and `tools` sub-capabilities when
 * declared as objects), or undefined. As for elicitation, a 2026-07-28 desktop client is declared
 * nothing: the bridge cannot hand an `input_required` on.
 */
function desktopSampling(declared: ClientCapabilities | undefined): { context?: object; tools?: object } | undefined {
  const sampling = declared?.sampling as Record<string, unknown> | undefined;
  if (!sampling || typeof sampling !== 'object' || Array.isArray(sampling)) return undefined;
  const context = typeof sampling['context'] === 'object' && sampling['context'] !== null;
  const tools = typeof sampling['tools'] === 'object' && sampling['tools'] !== null;
  return { ...(context ? { context: {} } : {}), ...(tools ? { tools: {} } : {}) };
}

/**
 * A URL-mode elicitation named with an `elicitationId` when it has none: the 2026-07-28 URL mode
 * has no such id and the 2025-11-25 one (the desktop client's) requires it, so the hop translates
 * by naming the request itself. Anything else is returned as it is.
 */
function withElicitationId(params: unknown): unknown {
  if (!params || typeof params !== 'object') return params;
  const { mode, elicitationId } = params as { mode?: unknown; elicitationId?: unknown };
  return mode === 'url' && !elicitationId ? { ...params, elicitationId: randomUUID() } : params;
}
