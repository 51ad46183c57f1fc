import {
  EgressDeniedError,
  ToolAbortedError,
  ToolError,
  type HttpRequest,
  type HttpResponse,
  type HttpStreamRequest,
  type HttpStreamResponse,
  type StreamingHttpClient,
} from '@toolgate/contracts';
import { Agent, request as undiciRequest } from 'undici';

/**
 * A `StreamingHttpClient` for the remote source's specs, whose lib may not depend on the guarded
 * adapter (as `LoopbackHttpClient` in @toolgate/testing is for `HttpClient`). It keeps the port's
 * observable contract: bodies streamed as they arrive, redirects returned, lower-case headers,
 * `ToolError` with the guard's reasons on failure. It reaches http://127.0.0.1 only, so a spec
 * can never reach another host, and does not classify addresses: that is the guarded client's
 * job (guarded-stream.spec.ts, and the source through it in apps/server's mcp-remote e2e).
 */
export class LoopbackStreamingClient implements StreamingHttpClient {
  private readonly agent = new Agent({ keepAliveTimeout: 1_000 });
  /** Every streamed request, for assertions. */
  readonly sent: HttpStreamRequest[] = [];

  request(_request: HttpRequest): Promise<HttpResponse> {
    return Promise.reject(new ToolError('the remote source streams every request', 'INVALID_REQUEST'));
  }

  async stream(req: HttpStreamRequest): Promise<HttpStreamResponse> {
    this.sent.push(req);
    const url = new URL(req.url);
    if (url.protocol !== 'http:' || url.hostname !== '127.0.0.1') throw new EgressDeniedError(url.hostname, 'the test client reaches http://127.0.0.1 only');
    for (const value of Object.values(req.headers ?? {})) {
      if (/[\r\n\0]/.test(value)) throw new ToolError('a header value contains characters not allowed in HTTP headers', 'INVALID_REQUEST');
    }
    if (req.signal?.aborted) throw new ToolAbortedError();
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(() => controller.abort(), req.headersTimeoutMs ?? 30_000);
    let res;
    try {
      res = await undiciRequest(url, { dispatcher: this.agent, method: req.method, headers: { ...req.headers }, body: req.body ?? null, signal: controller.signal, bodyTimeout: 0 });
    } catch (err) {
      req.signal?.removeEventListener('abort', onAbort);
      if (req.signal?.aborted) throw new ToolAbortedError();
      const code = (err as { code?: unknown }).code;
      if (code === 'ECONNREFUSED') throw new ToolError(`connection to '${url.host}' was refused`, 'CONNECTION_REFUSED');
      if (controller.signal.aborted) throw new ToolError(`request to '${url.host}' timed out`, 'TIMEOUT');
      throw new ToolError(`the request to '${url.host}' failed`, 'NETWORK_ERROR');
    } finally {
      clearTimeout(deadline);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    const body = res.body;
    body.on('error', () => undefined);
    const host = url.host;
    async function* chunks(): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of body) yield chunk as Uint8Array;
      } catch {
        if (req.signal?.aborted) throw new ToolAbortedError();
        throw new ToolError(`the connection to '${host}' closed before the response was complete`, 'CONNECTION_CLOSED');
      } finally {
        req.signal?.removeEventListener('abort', onAbort);
      }
    }
    return {
      status: res.statusCode,
      headers,
      url: url.href,
      body: chunks(),
      cancel: () => {
        controller.abort();
        body.destroy();
      },
    };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
