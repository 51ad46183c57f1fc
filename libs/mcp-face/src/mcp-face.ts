import { createMcpHandler, ProtocolError, ProtocolErrorCode, Server, type AuthInfo, type CallToolResult, type McpRequestContext } from '@modelcontextprotocol/server';
import type { InvokeRequest, InvokeResult, JsonObject, Principal, ToolManifest } from '@toolgate/contracts';
import { denialResult, toCallToolResult } from './denial-result.js';
import { toMcpTool } from './tool-definitions.js';
import { DEFAULT_PAGE_SIZE, InvalidCursorError, pageOfTools } from './tool-pages.js';

/** What the MCP face needs of the gateway: the same two operations `tools.list` and `tools.invoke` use. */
export interface McpFaceGateway {
  listTools(principal: Principal): readonly ToolManifest[];
  invoke(principal: Principal, request: InvokeRequest, options?: { signal?: AbortSignal }): Promise<InvokeResult>;
}

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
   */
  handle(request: Request, principal: Principal, disconnected?: AbortSignal): Promise<Response>;
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
 * In-flight calls by (tenant, principal, JSON-RPC id). A stateless server answers a 2025-era
 * `notifications/cancelled` on a new request, so the call it names is found here; keyed by the
 * principal, a client can cancel only calls of its own principal.
 */
class InflightCalls {
  readonly #calls = new Map<string, Set<AbortController>>();

  static key(principal: Principal, id: unknown): string {
    return JSON.stringify([principal.tenant, principal.id, id]);
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

  const factory = (ctx: McpRequestContext): Server => {
    const principal = principalOf(ctx);
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
      const controller = new AbortController();
      const untrack = inflight.track(InflightCalls.key(principal, context.mcpReq.id), controller);
      // Every source aborts the one controller through a listener it holds strongly: a signal
      // combined with AbortSignal.any is linked to its sources only weakly, and a disconnect lost
      // to garbage collection would let a cancelled call run on to its deadline.
      const sources = [context.mcpReq.signal, ...(httpSignal ? [httpSignal] : []), ...(disconnected ? [disconnected] : [])];
      const abort = (): void => controller.abort();
      for (const source of sources) {
        if (source.aborted) controller.abort();
        else source.addEventListener('abort', abort, { once: true });
      }
      let result: InvokeResult;
      try {
        result = await gateway.invoke(principal, { tool: request.params.name, args }, { signal: controller.signal });
      } finally {
        untrack();
        for (const source of sources) source.removeEventListener('abort', abort);
      }
      if (!result.ok) return denialResult(result.callId, result.denial) as CallToolResult;
      // The advertised output schema decides the 2025-era `{result: …}` wrap of a non-object output.
      const manifest = gateway.listTools(principal).find((t) => t.name === request.params.name);
      return server.projectCallToolResult(toCallToolResult(result) as CallToolResult, manifest?.output);
    });
    server.setNotificationHandler('notifications/cancelled', (notification) => {
      const id = notification.params?.requestId;
      if (id !== undefined) inflight.cancel(InflightCalls.key(principal, id));
    });
    return server;
  };

  const handler = createMcpHandler(factory, {
    legacy: 'stateless',
    maxRequestBodySize: options.maxBodyBytes,
    ...(options.onError ? { onerror: options.onError } : {}),
  });

  return {
    handle(request, principal, disconnected) {
      const authInfo: AuthInfo = {
        token: '',
        clientId: principal.id,
        scopes: [],
        extra: { [PRINCIPAL_KEY]: principal, ...(disconnected ? { [DISCONNECT_KEY]: disconnected } : {}) },
      };
      return handler.fetch(request, { authInfo });
    },
    close: () => handler.close(),
  };
}
