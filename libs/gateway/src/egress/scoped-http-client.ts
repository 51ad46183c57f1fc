import { EgressDeniedError, ToolError, type HttpClient, type HttpRequest, type HttpResponse } from '@toolgate/contracts';
import { hostOfUrl } from './egress-host.js';

/**
 * The guarded HTTP client as one call sees it: only the hosts the egress gate passed for this
 * call (or any public host under `allowAny`), and the call's deadline as the default signal.
 * Defence in depth: a tool that builds a URL the gate never saw (a redirect target, a host from
 * a fetched page) is refused here even though the network guard would also vet the address.
 */
export class ScopedHttpClient implements HttpClient {
  constructor(
    private readonly inner: HttpClient,
    private readonly hosts: ReadonlySet<string>,
    private readonly allowAny: boolean,
    private readonly signal: AbortSignal,
  ) {}

  async request(request: HttpRequest): Promise<HttpResponse> {
    const parsed = typeof request.url === 'string' ? hostOfUrl(request.url) : { problem: 'is not a string' };
    if ('problem' in parsed) throw new ToolError(`the URL ${parsed.problem}`, 'INVALID_URL');
    if (!this.allowAny && !this.hosts.has(parsed.host)) {
      const authorized = this.hosts.size > 0 ? [...this.hosts].join(', ') : 'no hosts';
      throw new EgressDeniedError(parsed.host, `this call was authorized for ${authorized} only`);
    }
    return this.inner.request(request.signal ? request : { ...request, signal: this.signal });
  }
}
