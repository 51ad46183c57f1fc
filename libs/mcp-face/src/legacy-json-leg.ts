import { WebStandardStreamableHTTPServerTransport, type AuthInfo, type McpServerFactory } from '@modelcontextprotocol/server';
import type { CallerClient } from './client-session.js';

/** The 2025-era methods a JSON answer can carry whole: one request, one result, nothing pushed before it. */
const JSON_METHODS = new Set(['tools/call', 'tools/list']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether a 2025-era POST may be answered as one JSON body instead of an event stream: a
 * `tools/call` or `tools/list` request on which nothing can be pushed. Something can be pushed
 * when the client asked for progress (a `progressToken`), or when its verified session declared
 * elicitation or sampling (the face's approval elicitation and the upstream relay push on the
 * call's stream, ADRs 0051 and 0054); such a request keeps the stream. Whether the request is of
 * the 2025 era at all is the SDK's `isLegacyRequest`, asked by the caller.
 */
export function answerableAsJson(request: Request, parsedBody: unknown, session: CallerClient | undefined): boolean {
  if (request.method !== 'POST' || !isObject(parsedBody)) return false;
  const { jsonrpc, method, id, params } = parsedBody;
  if (jsonrpc !== '2.0' || typeof method !== 'string' || !JSON_METHODS.has(method)) return false;
  if (typeof id !== 'string' && typeof id !== 'number') return false;
  if (params !== undefined && !isObject(params)) return false;
  const meta = params?.['_meta'];
  if (meta !== undefined && (!isObject(meta) || meta['progressToken'] !== undefined)) return false;
  const declared = session?.capabilities;
  return declared?.elicitation === undefined && declared?.sampling === undefined;
}

/** What the leg needs of the face: the one server factory both eras use, the body cap and the error report. */
export interface LegacyJsonLegOptions {
  readonly factory: McpServerFactory;
  readonly maxRequestBodySize: number;
  readonly onError?: (error: Error) => void;
}

/**
 * Serves one 2025-era request the way the SDK's stateless fallback does (a fresh instance from the
 * same factory, connected to a streamable HTTP transport with no session, closed after the
 * exchange) with one difference: the transport answers with a JSON body (`enableJsonResponse`),
 * not an event stream. The transport makes every check the fallback's does (Accept,
 * Content-Type, protocol version, JSON-RPC shape). Only requests `answerableAsJson` admits come
 * here: a JSON answer drops anything pushed before the result.
 */
export function createLegacyJsonLeg(options: LegacyJsonLegOptions): (request: Request, init: { authInfo: AuthInfo; parsedBody: unknown }) => Promise<Response> {
  return async (request, { authInfo, parsedBody }) => {
    try {
      const product = await options.factory({ era: 'legacy', authInfo, requestInfo: request });
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: options.maxRequestBodySize });
      await product.connect(transport);
      const teardown = (): void => {
        transport.close().catch(() => undefined);
        product.close().catch(() => undefined);
      };
      // A closed transport never settles a pending JSON answer: a client gone mid-call ends the wait here.
      let onAbort: () => void = () => undefined;
      const gone = new Promise<Response>((resolve) => {
        onAbort = () => resolve(new Response(null, { status: 499 }));
        if (request.signal.aborted) onAbort();
        else request.signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        return await Promise.race([transport.handleRequest(request, { authInfo, parsedBody }), gone]);
      } finally {
        request.signal.removeEventListener('abort', onAbort);
        teardown();
      }
    } catch (error) {
      try {
        options.onError?.(error instanceof Error ? error : new Error(String(error)));
      } catch {
        // Reporting only.
      }
      const id = isObject(parsedBody) && (typeof parsedBody['id'] === 'string' || typeof parsedBody['id'] === 'number') ? parsedBody['id'] : null;
      return Response.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id }, { status: 500 });
    }
  };
}
