import {
  EgressDeniedError,
  ToolAbortedError,
  ToolError,
  type HttpClient,
  type HttpRequest,
  type HttpResponse,
} from '@toolgate/contracts';
import { Agent, request as undiciRequest } from 'undici';

/**
 * An `HttpClient` for tests of code that sits on top of the port (search providers, tools),
 * whose libs may not depend on the guarded adapter. It keeps the port's observable contract —
 * byte cap with `truncated`, one deadline, redirects returned, lower-case joined headers,
 * `ToolError` on failure — and refuses every host but 127.0.0.1, so a test can never reach the
 * internet. It does not classify addresses: that is the guarded client's job and its own tests'.
 */
export class LoopbackHttpClient implements HttpClient {
  private readonly agent = new Agent({ keepAliveTimeout: 1_000 });
  /** Every request made through this client, for assertions. */
  readonly sent: HttpRequest[] = [];

  async request(req: HttpRequest): Promise<HttpResponse> {
    this.sent.push(req);
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      throw new ToolError(`'${req.url}' is not a valid absolute http(s) URL`, 'INVALID_URL');
    }
    if (url.protocol !== 'http:' || url.hostname !== '127.0.0.1' || url.username || url.password) {
      throw new EgressDeniedError(url.hostname || url.protocol, 'the test client reaches http://127.0.0.1 only');
    }
    if (req.signal?.aborted) throw new ToolAbortedError();
    const maxBytes = req.maxBytes ?? 1024 * 1024;
    const deadline = AbortSignal.timeout(req.timeoutMs ?? 30_000);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    try {
      const res = await undiciRequest(url, {
        dispatcher: this.agent,
        method: req.method ?? 'GET',
        headers: { ...req.headers },
        body: req.body,
        signal,
      });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      res.body.on('error', () => {});
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body) {
        const buffer = chunk as Buffer;
        if (size + buffer.length > maxBytes) {
          chunks.push(buffer.subarray(0, maxBytes - size));
          size = maxBytes;
          truncated = true;
          res.body.destroy();
          break;
        }
        chunks.push(buffer);
        size += buffer.length;
      }
      return { status: res.statusCode, headers, body: Buffer.concat(chunks, size), truncated, url: url.href };
    } catch (err) {
      if (req.signal?.aborted) throw new ToolAbortedError();
      if (deadline.aborted) throw new ToolError(`request to '${url.host}' timed out`, 'TIMEOUT');
      if (err instanceof ToolError) throw err;
      const code = (err as { code?: unknown }).code;
      if (code === 'ECONNREFUSED') throw new ToolError(`connection to '${url.host}' was refused`, 'CONNECTION_REFUSED');
      throw new ToolError(`the request to '${url.host}' failed`, 'NETWORK_ERROR');
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
