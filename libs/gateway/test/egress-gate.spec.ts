import { EgressDeniedError, type HttpClient, type HttpRequest, type HttpResponse, type JsonObject, type ToolContext } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { denialOf, harness, ROLES, testTool, thrown } from './harness.js';

class RecordingHttp implements HttpClient {
  readonly requests: HttpRequest[] = [];
  async request(request: HttpRequest): Promise<HttpResponse> {
    this.requests.push(request);
    return { status: 200, headers: {}, body: new Uint8Array(), truncated: false, url: request.url };
  }
}

/** Fetches `url`, then whatever else the test asks for through ctx.http, reporting what was refused. */
function fetchTool(extra: string[] = []) {
  return testTool(
    {
      name: 'fetch',
      permissions: [{ type: 'network', scope: '*' }],
      egress: { urlArg: 'url' },
      input: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'], additionalProperties: false },
    },
    async (args: JsonObject, ctx: ToolContext) => {
      const outcomes: string[] = [];
      for (const url of [String(args['url']), ...extra]) {
        try {
          await ctx.http?.request({ url });
          outcomes.push(`ok ${url}`);
        } catch (error) {
          outcomes.push(error instanceof EgressDeniedError ? `refused ${error.host}` : `error ${(error as Error).message}`);
        }
      }
      return { outcomes, hadHttp: ctx.http !== undefined };
    },
  );
}

const grants = [{ type: 'network', scope: '*' }];
// The workers hold network:* as a standing role grant (ADR 0022); the calls' grants narrow to exactly that.
const roles = { ...ROLES, worker: { tools: ['*'], grants } };

function setup(options: { bootEgress?: { enabled: boolean; allowAny: boolean; hosts: string[] }; extra?: string[] } = {}) {
  const http = new RecordingHttp();
  const tool = fetchTool(options.extra);
  const weather = testTool({ name: 'weather', permissions: [{ type: 'network', scope: '*' }], egress: { hosts: ['api.weather.test', 'backup.weather.test'] } });
  const h = harness({ tools: [tool, weather], roles, ...(options.bootEgress ? { bootEgress: options.bootEgress } : {}), deps: { http } });
  return { http, tool, weather, h };
}

describe('gate 8: egress', () => {
  it('is off by default: refuses naming the host and how to allow it', async () => {
    const { tool, h } = setup();
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'fetch', args: { url: 'https://example.com/a' }, grants }));
    expect(denial).toMatchObject({ gate: 'egress', code: 'EGRESS_BLOCKED', data: { host: 'example.com' } });
    expect(denial.hint).toContain('settings.egress.allow {"host": "example.com"}');
    expect(tool.calls).toHaveLength(0);
  });

  it('denies everything when enabled with an empty allowlist', async () => {
    const { h } = setup({ bootEgress: { enabled: true, allowAny: false, hosts: [] } });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'fetch', args: { url: 'https://example.com/' }, grants }));
    expect(denial).toMatchObject({ code: 'EGRESS_BLOCKED', data: { host: 'example.com' } });
    expect(denial.message).toContain('allowlist is empty');
  });

  it('allows a listed host (case-insensitive, trailing dot normalised) and scopes ctx.http to it', async () => {
    const { http, h } = setup({ bootEgress: { enabled: true, allowAny: false, hosts: ['example.com', 'other.test'] }, extra: ['https://other.test/', 'http://169.254.169.254/'] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'fetch', args: { url: 'HTTPS://Example.COM./page' }, grants });
    expect(result).toMatchObject({
      ok: true,
      output: { outcomes: ['ok HTTPS://Example.COM./page', 'refused other.test', 'refused 169.254.169.254'], hadHttp: true },
    });
    // Only the authorized host reached the real client, with the call's signal attached.
    expect(http.requests.map((r) => r.url)).toEqual(['HTTPS://Example.COM./page']);
    expect(http.requests[0]?.signal).toBeInstanceOf(AbortSignal);
  });

  it('with allowAny, passes any host and does not scope ctx.http', async () => {
    const { http, h } = setup({ bootEgress: { enabled: true, allowAny: true, hosts: [] }, extra: ['https://second.test/'] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'fetch', args: { url: 'https://anything.test/' }, grants });
    expect(result).toMatchObject({ ok: true, output: { outcomes: ['ok https://anything.test/', 'ok https://second.test/'] } });
    expect(http.requests).toHaveLength(2);
  });

  it('checks every static manifest host', async () => {
    const { weather, h } = setup({ bootEgress: { enabled: true, allowAny: false, hosts: ['api.weather.test'] } });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'weather', args: {}, grants }));
    expect(denial).toMatchObject({ code: 'EGRESS_BLOCKED', data: { host: 'backup.weather.test' } });
    await h.gateway.allowEgressHost(h.who('boss'), 'backup.weather.test');
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'weather', args: {}, grants })).ok).toBe(true);
    expect(weather.calls).toHaveLength(1);
  });

  it('refuses a URL argument it cannot check, saying so', async () => {
    const { h } = setup({ bootEgress: { enabled: true, allowAny: true, hosts: [] } });
    for (const [url, why] of <[string, string][]>[
      ['not a url', 'is not a valid absolute URL'],
      ['ftp://example.com/x', "uses 'ftp:'"],
      ['https://user:pw@example.com/', 'userinfo'],
      ['file:///etc/passwd', "uses 'file:'"],
    ]) {
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'fetch', args: { url }, grants }));
      expect(denial).toMatchObject({ gate: 'egress', code: 'INVALID_INPUT' });
      expect(denial.message).toContain("The egress gate cannot check argument 'url'");
      expect(denial.message).toContain(why);
    }
  });

  it('keeps tenants apart: one tenant allowing a host does not allow it for another', async () => {
    const { h } = setup();
    await h.gateway.allowEgressHost(h.who('boss'), 'example.com');
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'fetch', args: { url: 'https://example.com/' }, grants })).ok).toBe(true);
    const other = denialOf(await h.gateway.invoke(h.who('worker-g'), { tool: 'fetch', args: { url: 'https://example.com/' }, grants }));
    expect(other.code).toBe('EGRESS_BLOCKED');
    expect(await h.gateway.getEgress(h.who('worker-g'))).toEqual({ enabled: false, allowAny: false, hosts: [] });
  });

  it('lets saved tenant settings replace the boot configuration wholesale', async () => {
    const { h } = setup({ bootEgress: { enabled: true, allowAny: false, hosts: ['example.com'] } });
    await h.gateway.setEgress(h.who('boss'), { enabled: true, allowAny: false, hosts: ['other.test'] });
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'fetch', args: { url: 'https://example.com/' }, grants })).code).toBe('EGRESS_BLOCKED');
    expect((await h.gateway.invoke(h.who('worker-g'), { tool: 'fetch', args: { url: 'https://example.com/' }, grants })).ok).toBe(true);
  });

  it('gives no HTTP client to a tool without the network permission', async () => {
    const http = new RecordingHttp();
    const tool = testTool({ name: 'offline' }, async (_args, ctx) => ({ hadHttp: ctx.http !== undefined }));
    const h = harness({ tools: [tool], roles, deps: { http }, bootEgress: { enabled: true, allowAny: true, hosts: [] } });
    expect(await h.gateway.invoke(h.who('worker-1'), { tool: 'offline', args: {} })).toMatchObject({ ok: true, output: { hadHttp: false } });
  });

  it('fails closed when the settings store throws', async () => {
    const { tool, h } = setup();
    h.settings.getEgress = async () => {
      throw new Error('settings table missing');
    };
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'fetch', args: { url: 'https://example.com/' }, grants }));
    expect(denial).toMatchObject({ gate: 'egress', code: 'STATE_UNAVAILABLE' });
    expect(tool.calls).toHaveLength(0);
  });
});

describe('egress settings', () => {
  it('lets any role read its own tenant effective settings, defaulting to the boot ones', async () => {
    const { h } = setup({ bootEgress: { enabled: true, allowAny: false, hosts: ['example.com'] } });
    expect(await h.gateway.getEgress(h.who('planner-1'))).toEqual({ enabled: true, allowAny: false, hosts: ['example.com'] });
  });

  it('lets only operators change settings, normalising and de-duplicating hosts', async () => {
    const { h } = setup();
    expect((await thrown(h.gateway.setEgress(h.who('worker-1'), { enabled: true, allowAny: false, hosts: [] }))).code).toBe('FORBIDDEN');
    expect((await thrown(h.gateway.allowEgressHost(h.who('approver-1'), 'example.com'))).code).toBe('FORBIDDEN');
    const saved = await h.gateway.setEgress(h.who('boss'), { enabled: true, allowAny: false, hosts: ['Example.COM.', 'example.com', '[::1]'] });
    expect(saved).toEqual({ enabled: true, allowAny: false, hosts: ['example.com', '::1'] });
    expect(await h.gateway.getEgress(h.who('worker-1'))).toEqual(saved);
  });

  it('refuses malformed settings with a specific message', async () => {
    const { h } = setup();
    const bad = await thrown(h.gateway.setEgress(h.who('boss'), { enabled: true, allowAny: false, hosts: ['ok.test', 'https://x.test/'] }));
    expect(bad.code).toBe('INVALID');
    expect(bad.message).toMatch(/^hosts\[1\]: 'https:\/\/x.test\/' is a URL/);
    expect((await thrown(h.gateway.setEgress(h.who('boss'), { enabled: 'yes', allowAny: false, hosts: [] } as never))).code).toBe('INVALID');
    expect((await thrown(h.gateway.allowEgressHost(h.who('boss'), '*.example.com'))).message).toContain('wildcard');
  });

  it('enables egress when a host is allowed, starting from the boot settings', async () => {
    const { h } = setup({ bootEgress: { enabled: false, allowAny: false, hosts: ['boot.test'] } });
    expect(await h.gateway.allowEgressHost(h.who('boss'), 'New.Test')).toEqual({ enabled: true, allowAny: false, hosts: ['boot.test', 'new.test'] });
  });

  it('reports a failing settings store as UNAVAILABLE', async () => {
    const { h } = setup();
    h.settings.getEgress = async () => {
      throw new Error('x');
    };
    expect((await thrown(h.gateway.getEgress(h.who('worker-1')))).code).toBe('UNAVAILABLE');
  });
});
