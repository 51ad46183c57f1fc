import { createMcpHandler, isLegacyRequest, ProtocolError, ProtocolErrorCode, Server, type AuthInfo, type CallToolResult, type JSONRPCMessage, type McpRequestContext } from '@modelcontextprotocol/server';
import type { Clock, JsonObject, Principal } from '@toolgate/contracts';
import { ApprovalFlow, approvalIdOf, DEFAULT_APPROVAL_WAIT_MS, PendingElicitations, type FlowAnswer } from './approval-flow.js';
import type { McpFaceGateway } from './face-gateway.js';
import { CALLER_KEY, callerOf, inspectLegacyPost, LegacySessions, randomKey, SessionRefused, sessionRefusedResponse, type CallerSeed } from './client-session.js';
import { CallerRelay } from './caller-relay.js';
import { progressOf } from './progress-relay.js';
import { randomTokenKey, SignedTokens } from './signed-token.js';
import { denialResult, toCallToolResult } from './denial-result.js';
import { answerableAsJson, createLegacyJsonLeg } from './legacy-json-leg.js';
import { findVisibleTool, toMcpTool } from './tool-definitions.js';
import { DEFAULT_PAGE_SIZE, InvalidCursorError, pageOfTools } from './tool-pages.js';

export interface McpFaceOptions {
  readonly gateway: McpFaceGateway;
  /** The version `initialize`/`server/discover` reports. */
  readonly version: string;
  /** Tools per `tools/list` page (default 100). */
  readonly pageSize?: number;
  /** The server's body cap; the SDK refuses a larger body with 413 before parsing it. */
  readonly maxBodyBytes: number;
  /** Out-of-band SDK errors (reporting only). */
  readonly onError?: (error: Error) => void;
  /**
   * Where an approver decides one approval request: the URL an elicitation and a tool error
   * point at. Without it, the server-relative path `/approvals/<id>`.
   */
  readonly approvalUrl?: (approvalId: string) => string;
  /**
   * How long a call is held while a human decides its approval (default 300000 ms); 0 never
   * holds, and every client gets the approval id to retry with.
   */
  readonly approvalWaitMs?: number;
  /**
   * The key that signs `requestState` and 2025-era session ids (at least 32 bytes). Processes
   * serving one deployment must share it; by default each process draws its own.
   */
  readonly stateKey?: Uint8Array;
  /**
   * The gateway's clock, against which an approval's `expiresAt` is compared (the wall clock by
   * default, as the server's gateway uses). How long a call is held is always wall time.
   */
  readonly clock?: Clock;
}

/**
 * Toolgate as an MCP server over Streamable HTTP: one handler for the 2026-07-28 stateless
 * revision and, through the SDK's stateless fallback, the 2025 revisions (ADR 0049). It holds no
 * policy: every list and call goes to the gateway as the authenticated principal.
 */
export interface McpFace {
  /**
   * Serves one HTTP request as `principal`, who the caller has already authenticated (the face
   * never reads a token). Aborting `disconnected` (the client went away) or `request.signal`
   * cancels the call it carries. Pass `disconnected` where the transport knows: it is held here
   * for the whole call, where a `Request`'s own signal may be let go with the `Request`.
   * Pass `parsedBody` where the transport has already parsed the POST body as JSON: the SDK then
   * uses it instead of cloning, reading and parsing the body again (undefined: the SDK reads it),
   * and nothing here reads the request's own body, which may then be absent.
   */
  handle(request: Request, principal: Principal, disconnected?: AbortSignal, parsedBody?: unknown): Promise<Response>;
  /** Aborts in-flight modern exchanges and closes their per-request servers. */
  close(): Promise<void>;
}

/** The key under `AuthInfo.extra` that carries the authenticated principal to the per-request server. */
const PRINCIPAL_KEY = 'toolgate/principal';
/** The key under `AuthInfo.extra` that carries the transport's disconnect signal to the per-request server. */
const DISCONNECT_KEY = 'toolgate/disconnected';

function principalOf(ctx: McpRequestContext): Principal {
  const principal = ctx.authInfo?.extra?.[PRINCIPAL_KEY] as Principal | undefined;
  // Fail closed: a request that reached the SDK without a principal is a wiring fault, never anonymous.
  if (!principal) throw new Error('MCP request without an authenticated principal');
  return principal;
}

/**
 * In-flight calls by (tenant, principal, client session, JSON-RPC id). A stateless server answers
 * a 2025-era `notifications/cancelled` on a new request, so the call it names is found here;
 * keyed by the principal and the signed session (ADR 0051), a client can cancel only its own
 * calls, and two clients of one principal reusing an id do not cancel each other's.
 */
class InflightCalls {
  readonly #calls = new Map<string, Set<AbortController>>();

  static key(principal: Principal, sessionKey: string, id: unknown): string {
    return JSON.stringify([principal.tenant, principal.id, sessionKey, id]);
  }

  /** Registers a call; the returned function unregisters it. */
  track(key: string, controller: AbortController): () => void {
    const set = this.#calls.get(key) ?? new Set<AbortController>();
    set.add(controller);
    this.#calls.set(key, set);
    return () => {
      set.delete(controller);
      if (set.size === 0 && this.#calls.get(key) === set) this.#calls.delete(key);
    };
  }

  cancel(key: string): void {
    for (const controller of this.#calls.get(key) ?? []) controller.abort();
  }
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Creates the MCP face over the gateway. */
export function createMcpFace(options: McpFaceOptions): McpFace {
  const { gateway } = options;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a positive integer (got ${pageSize})`);

  const inflight = new InflightCalls();
  const tokens = new SignedTokens({ key: options.stateKey ?? randomTokenKey() });
  const sessions = new LegacySessions(tokens);
  const pendingElicitations = new PendingElicitations();
  const approvalUrl = options.approvalUrl ?? ((id: string) => `/approvals/${encodeURIComponent(id)}`);
  // The relay refuses an upstream's URL elicitation that could pass for this page's own.
  const relays = new CallerRelay({ tokens, approvalUrl });
  const approvals = new ApprovalFlow({
    gateway,
    tokens,
    approvalUrl,
    waitMs: options.approvalWaitMs ?? DEFAULT_APPROVAL_WAIT_MS,
    elicitations: pendingElicitations,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });

  const factory = (ctx: McpRequestContext): Server => {
    const principal = principalOf(ctx);
    // A 2025-era notification names a call of the same client session; without one, of the principal.
    const legacySessionKey = (ctx.authInfo?.extra?.[CALLER_KEY] as CallerSeed | undefined)?.legacy?.sessionKey ?? 'legacy:no-session';
    // Closing the HTTP request is the 2026-07-28 revision's cancellation, and a client's disconnect in any era.
    const httpSignal = ctx.requestInfo?.signal;
    const disconnected = ctx.authInfo?.extra?.[DISCONNECT_KEY] as AbortSignal | undefined;
    const server = new Server(
      { name: 'toolgate', title: 'Toolgate', version: options.version },
      {
        capabilities: { tools: { listChanged: false } },
        instructions: 'Every call passes Toolgate\'s gates. A refusal is a tool result with isError: true whose text names the gate, the code and what to do.',
      },
    );

    server.setRequestHandler('tools/list', (request) => {
      let page;
      try {
        page = pageOfTools(gateway.listTools(principal), request.params?.cursor, pageSize);
      } catch (error) {
        if (error instanceof InvalidCursorError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `invalid cursor: ${error.message}`);
        throw error;
      }
      return {
        tools: page.tools.map((manifest) => toMcpTool(manifest)) as never,
        ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      };
    });

    server.setRequestHandler('tools/call', async (request, context) => {
      const args = request.params.arguments ?? {};
      if (!isJsonObject(args)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'arguments must be a JSON object');
      const approvalId = approvalIdOf(request.params._meta);
      const caller = callerOf(context);
      const controller = new AbortController();
      const untrack = inflight.track(InflightCalls.key(principal, caller.sessionKey, context.mcpReq.id), controller);
      // Every source aborts the one controller through a listener it holds strongly: a signal
      // combined with AbortSignal.any is linked to its sources only weakly, and a disconnect lost
      // to garbage collection would let a cancelled call run on to its deadline.
      const sources = [context.mcpReq.signal, ...(httpSignal ? [httpSignal] : []), ...(disconnected ? [disconnected] : [])];
      const abort = (): void => controller.abort();
      for (const source of sources) {
        if (source.aborted) controller.abort();
        else source.addEventListener('abort', abort, { once: true });
      }
      let answer: FlowAnswer;
      try {
        const requestState = context.mcpReq.requestState();
        const transport = server.transport;
        // A 2025-era call's stream carries the face's own requests (ADR 0051, ADR 0054).
        const push = caller.era === 'legacy' && transport ? (message: JSONRPCMessage) => transport.send(message, { relatedRequestId: context.mcpReq.id }) : undefined;
        const round = await relays.round(
          {
            principal,
            caller,
            tool: request.params.name,
            args,
            signal: controller.signal,
            ...(requestState === undefined ? {} : { requestState }),
            ...(context.mcpReq.inputResponses ? { inputResponses: context.mcpReq.inputResponses } : {}),
            ...progressOf(request.params._meta, context.mcpReq.notify),
            ...(push ? { push } : {}),
          },
          (relayed) =>
            approvals.call(
              principal,
              caller,
              { tool: request.params.name, args, ...(approvalId === undefined ? {} : { approvalId }) },
              {
                signal: relayed.signal,
                ...(relayed.requestState === undefined ? {} : { requestState: relayed.requestState }),
                ...(context.mcpReq.inputResponses ? { inputResponses: context.mcpReq.inputResponses } : {}),
                ...(push ? { push } : {}),
                invoke: relayed.invoke,
              },
            ),
        );
        // The call asked its client something (2026-07-28): this round's answer carries the questions.
        if (round.kind === 'input') return round.result as never;
        answer = round.value;
      } finally {
        untrack();
        for (const source of sources) source.removeEventListener('abort', abort);
      }
      if (answer.kind === 'answer') return answer.result as CallToolResult;
      const result = answer.result;
      if (!result.ok) return denialResult(result.callId, result.denial) as CallToolResult;
      // The advertised output schema decides the 2025-era `{result: …}` wrap of a non-object output.
      // A call by an export's alias (ADR 0053) ran the real tool: find it by either name.
      const manifest = findVisibleTool(gateway.listTools(principal), request.params.name);
      return server.projectCallToolResult(toCallToolResult(result) as CallToolResult, manifest?.output);
    });
    server.setNotificationHandler('notifications/cancelled', (notification) => {
      const id = notification.params?.requestId;
      if (id !== undefined) inflight.cancel(InflightCalls.key(principal, legacySessionKey, id));
    });
    return server;
  };

  const handler = createMcpHandler(factory, {
    legacy: 'stateless',
    maxRequestBodySize: options.maxBodyBytes,
    ...(options.onError ? { onerror: options.onError } : {}),
  });
  // The SDK's 2025 fallback always answers with an event stream; a call that can push nothing is
  // answered with one JSON body instead, by the same factory and transport checks (ADR 0055).
  const legacyJson = createLegacyJsonLeg({ factory, maxRequestBodySize: options.maxBodyBytes, ...(options.onError ? { onError: options.onError } : {}) });

  return {
    async handle(request, principal, disconnected, parsedBody) {
      const sessionId = request.headers.get('mcp-session-id');
      let seed: CallerSeed = { requestKey: randomKey() };
      // Only a POST carries a call; GET and DELETE stay the SDK's 405 (no session operations exist).
      if (sessionId !== null && request.method === 'POST') {
        try {
          seed = { ...seed, legacy: sessions.verify(principal, sessionId) };
        } catch (error) {
          if (!(error instanceof SessionRefused)) throw error;
          // The spec's answer to a session the server does not hold: 404, and the client initializes again.
          return sessionRefusedResponse(error.message);
        }
      }
      const inspected = await inspectLegacyPost(request, seed, parsedBody);
      if (inspected.answered && seed.legacy) {
        // The client's answer to the face's own elicitation/create: no SDK instance expects it (ADR 0051).
        const { id } = inspected.answered;
        if (!pendingElicitations.settle(seed.legacy.sessionKey, id, inspected.answered)) relays.settle(seed.legacy.sessionKey, id, inspected.answered);
        return new Response(null, { status: 202 });
      }
      const authInfo: AuthInfo = {
        token: '',
        clientId: principal.id,
        scopes: [],
        extra: { [PRINCIPAL_KEY]: principal, [CALLER_KEY]: seed, ...(disconnected ? { [DISCONNECT_KEY]: disconnected } : {}) },
      };
      const response =
        answerableAsJson(request, parsedBody, seed.legacy) && (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: options.maxBodyBytes }))
          ? await legacyJson(request, { authInfo, parsedBody })
          : await handler.fetch(request, { authInfo, ...(parsedBody !== undefined ? { parsedBody } : {}) });
      if (!inspected.initialize || response.status !== 200) return response;
      // A 2025-era initialize answered: hand the client a signed session naming what it declared (ADR 0051).
      const headers = new Headers(response.headers);
      headers.set('mcp-session-id', sessions.mint(principal, inspected.initialize.protocolVersion, inspected.initialize.capabilities));
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    },
    close: () => {
      relays.close();
      return handler.close();
    },
  };
}
