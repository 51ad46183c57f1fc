import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { McpRemoteToolSource, parseMcpServersFile } from '@toolgate/adapter-mcp-client';
import { GuardedHttpClient, type ResolvedAddress } from '@toolgate/adapter-net-guard';
import { ToolError, ToolNotReachedError, type ToolContext } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthTimes, startHarness, type Harness } from './e2e-harness.js';

const REMOTE_SERVER = resolve(__dirname, '../../../libs/adapters/mcp-client/test/fixtures/remote-mcp-server.mjs');
const OPS_A = 'ops-a-token-remote-0123456789';
const OPS_B = 'ops-b-token-remote-0123456789';
const TOKEN = 'remote-bearer-secret-3f9d';
const NETWORK = [{ type: 'network', scope: '*' }];
/** How long `/healthz` may take while a remote server misbehaves, less the time the box kept the server off a CPU. */
const PROBE_BOUND_MS = 100;

/** A remote MCP server of one generation in its own process, on loopback. */
async function spawnRemote(generation: '2026-07-28' | '2025', env: Record<string, string> = {}, port = 0): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [REMOTE_SERVER, generation, String(port)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line')) as [string];
  return { url: line.trim(), child };
}

/**
 * Remote MCP servers as sources through the whole server: the servers file names a 2026-07-28
 * server (with a bearer token from a file) and a 2025 one, both reached through the guarded
 * client (loopback opened by TOOLGATE_EGRESS_ALLOWED_CIDRS, as an operator would), and every call
 * passes the caller's tenant egress rules.
 */
describe('remote MCP servers end to end', () => {
  let h: Harness;
  let dir: string;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tg-remote-e2e-'));
    const docs = await spawnRemote('2026-07-28', { REMOTE_TOKEN: `Bearer ${TOKEN}` });
    const wiki = await spawnRemote('2025');
    children.push(docs.child, wiki.child);
    const tokenFile = join(dir, 'docs-token');
    await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    h = await startHarness(
      { TOOLGATE_EGRESS_ALLOWED_CIDRS: '127.0.0.1/32' },
      {
        principals: {
          principals: [
            { id: 'ops-a', token: OPS_A, tenant: 'a', roles: ['worker', 'operator', 'approver'] },
            { id: 'ops-b', token: OPS_B, tenant: 'b', roles: ['worker', 'operator', 'approver'] },
          ],
          roles: { worker: { tools: ['*'], grants: NETWORK } },
          tenants: { a: { tools: ['*'], selfApproval: true }, b: { tools: ['*'], selfApproval: true } },
        },
        mcpServers: {
          servers: [
            { name: 'docs', url: docs.url, headers: { Authorization: { file: tokenFile, prefix: 'Bearer ' } }, timeoutMs: 1000 },
            { name: 'wiki', url: wiki.url, timeoutMs: 1000 },
          ],
        },
      },
    );
    // Tenant a opens the servers' host for its own calls; tenant b does not.
    const allow = await h.call('/api/v1/settings/egress/allow', { method: 'POST', token: OPS_A, json: { host: '127.0.0.1' } });
    expect(allow.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
    for (const child of children) child.kill();
    await rm(dir, { recursive: true, force: true });
  });

  const invoke = (token: string, tool: string, args: Record<string, unknown>) =>
    h.call('/api/v1/tools/invoke', { method: 'POST', token, json: { tool, args, grants: NETWORK, approved: true } });

  it('registers both servers as http sources that are up', async () => {
    const health = await h.call('/healthz');
    expect(health.status).toBe(200);
    const sources = (health.body.sources ?? []) as { name: string; state: string; transport: string }[];
    expect(sources.filter((s) => s.name === 'docs' || s.name === 'wiki')).toEqual([
      expect.objectContaining({ name: 'docs', state: 'up', transport: 'http' }),
      expect.objectContaining({ name: 'wiki', state: 'up', transport: 'http' }),
    ]);
    expect(h.logs.join('\n')).toContain("MCP server 'docs' (remote, 127.0.0.1) started with 9 tool(s) accepted and 0 rejected");
    expect(h.logs.join('\n')).not.toContain(TOKEN);
  });

  it.each(['docs', 'wiki'])("calls %s's tools for a tenant whose egress allows the host", async (server) => {
    const { body } = await invoke(OPS_A, `${server}__echo`, { text: 'hello' });
    expect(body.ok).toBe(true);
    expect(JSON.stringify(body.output)).toContain('echo: hello');
  });

  it("refuses the same call for a tenant whose egress does not allow the server's host", async () => {
    const { body } = await invoke(OPS_B, 'docs__echo', { text: 'hello' });
    expect(body.denial).toMatchObject({ gate: 'egress', code: 'EGRESS_BLOCKED', data: { host: '127.0.0.1' } });
  });

  describe('a misbehaving remote server does not stall other callers', () => {
    it.each([
      ['a huge answer', 'big', { bytes: 6 * 1024 * 1024 }, /over 4194304 bytes/],
      ['one event that never ends', 'flood', {}, /over 4194304 bytes/],
      ['a never-ending event stream', 'forever', {}, /did not (answer|finish) within (its )?1000 ms/],
      ['a slow server past the deadline', 'slow', { ms: 5000 }, /did not (answer|finish) within (its )?1000 ms/],
      ['an HTML answer', 'html', {}, /could not be read/],
      ['a redirect to the metadata address', 'redirect', { status: 302, to: 'http://169.254.169.254/latest/meta-data/' }, /redirects are not followed/],
    ])('%s', async (_what, tool, args, message) => {
      let done = false;
      const call = invoke(OPS_A, `docs__${tool}`, args).finally(() => (done = true));
      const times = await healthTimes(h, () => done);
      const { body } = await call;
      expect(body.ok).toBe(false);
      expect(body.denial.message).toMatch(message);
      expect(JSON.stringify(body)).not.toContain('secret-login-page');
      expect(Math.max(...times)).toBeLessThan(PROBE_BOUND_MS);
      // The source stays up: the next call is answered.
      const after = await invoke(OPS_A, 'docs__echo', { text: 'after' });
      expect(after.body.ok).toBe(true);
    });
  });
});

describe('a remote server that is down when the gateway starts', () => {
  let h: Harness;
  let remote: { url: string; child: ChildProcess } | undefined;
  let port: number;
  beforeAll(async () => {
    // A port that was just free: nothing answers there until the test starts a server on it.
    const probe = await spawnRemote('2025');
    port = Number(new URL(probe.url).port);
    probe.child.kill();
    await once(probe.child, 'exit');
    h = await startHarness(
      { TOOLGATE_EGRESS_ALLOWED_CIDRS: '127.0.0.1/32' },
      { mcpServers: { servers: [{ name: 'later', url: `http://127.0.0.1:${port}/mcp` }] } },
    );
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
    remote?.child.kill();
  });

  it('does not stop the start: the source is restarting, its tools are not offered, and it comes up once the server answers', async () => {
    const sourceOf = (body: { sources?: { name: string; state: string; transport: string }[] }) => body.sources?.find((s) => s.name === 'later');
    const health = await h.call('/healthz');
    expect(health.status).toBe(200);
    expect(sourceOf(health.body)).toMatchObject({ state: 'restarting', transport: 'http' });
    expect(h.logs.join('\n')).toContain("MCP server 'later' (remote, 127.0.0.1) is not reachable yet; its tools are offered once it answers");
    const tools = await h.call('/api/v1/tools', { token: 'demo' });
    expect(JSON.stringify(tools.body)).not.toContain('later__echo');

    remote = await spawnRemote('2025', {}, port);
    await expect.poll(async () => sourceOf((await h.call('/healthz')).body)?.state, { timeout: 40_000, interval: 200 }).toBe('up');
    expect(JSON.stringify((await h.call('/api/v1/tools', { token: 'demo' })).body)).toContain('later__echo');
  }, 60_000);
});

describe('SSRF through a remote source (the guarded client the server builds)', () => {
  const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
  const ctx = { signal: new AbortController().signal } as unknown as ToolContext;
  let remote: { url: string; child: ChildProcess };
  beforeAll(async () => {
    remote = await spawnRemote('2025');
  });
  afterAll(() => {
    remote.child.kill();
  });
  const configFor = (url: string) => {
    const parsed = parseMcpServersFile(JSON.stringify({ servers: [{ name: 'docs', url }] })).remotes[0];
    if (!parsed) throw new Error('no remote');
    return parsed;
  };

  describe('a URL host that resolves to a private or metadata address', () => {
    it.each([
      ['169.254.169.254', 'a link-local'],
      ['10.0.0.5', 'a private'],
      ['100.100.100.200', 'a carrier-grade NAT'],
      ['::ffff:169.254.169.254', 'a link-local'],
      ['127.0.0.2', 'a loopback'],
    ])('is never dialed: %s', async (address, range) => {
      const port = new URL(remote.url).port;
      const http = new GuardedHttpClient({ allowedCidrs: ['127.0.0.1/32'], resolver: async () => [{ address, family: address.includes(':') ? 6 : 4 }] });
      const logs: string[] = [];
      const source = await McpRemoteToolSource.start(configFor(`http://mcp.example:${port}/mcp`), { http, log: (m) => logs.push(m), backoff: { initialMs: 60_000, maxMs: 60_000 } });
      try {
        expect(source.status().state).toBe('restarting');
        expect(source.tools()).toEqual([]);
        const said = logs.join('\n');
        expect(said).toContain(`egress to 'mcp.example' refused: resolves to ${range}`);
        expect(said).not.toContain(address);
      } finally {
        await source.close();
        await http.close();
      }
    });
  });

  it('DNS rebinding between two resolutions: the new connection is refused before it opens, the call is not reached, and the source is restarting', async () => {
    const port = new URL(remote.url).port;
    // The first connections get loopback; once the source is up, the name rebinds to the metadata address.
    let rebound = false;
    let resolutions = 0;
    const http = new GuardedHttpClient({
      allowedCidrs: ['127.0.0.1/32'],
      resolver: async () => {
        resolutions += 1;
        return rebound ? [v4('169.254.169.254')] : [v4('127.0.0.1')];
      },
    });
    const logs: string[] = [];
    const source = await McpRemoteToolSource.start(configFor(`http://rebind.example:${port}/mcp`), { http, log: (m) => logs.push(m), backoff: { initialMs: 60_000, maxMs: 60_000 } });
    expect(source.status().state).toBe('up');
    const echo = source.tools().find((d) => d.manifest.name === 'docs__echo');
    if (!echo) throw new Error('no echo');
    rebound = true;
    const before = resolutions;
    try {
      // The guard's pool drops an idle connection after 4 s; the next request dials again, resolving again.
      await new Promise((r) => setTimeout(r, 4_500));
      let error: unknown;
      try {
        await echo.handler.invoke({ text: 'x' }, ctx);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ToolNotReachedError);
      expect((error as ToolError).reason).toBe('MCP_SERVER_RESTARTING');
      expect(source.status().state).toBe('restarting');
      // The new connection resolved again, and that answer was refused before a socket opened.
      expect(resolutions).toBeGreaterThan(before);
      expect(logs.join('\n')).toContain("egress to 'rebind.example' refused: resolves to a link-local address");
      expect(logs.join('\n')).not.toContain('169.254.169.254');
    } finally {
      await source.close();
      await http.close();
    }
  }, 15_000);
});

/**
 * Approval replay through a remote source (red team R1 finding 1, ADR 0068): a server (or a proxy
 * or WAF in front of it) that receives a high-risk call, may act on it, and answers anything but
 * a result must not get the approval given back. Each server counts the tools/call requests it
 * received (its /control endpoint, in its own process), so "ran at most once" is the server's count.
 */
describe('one approval, one remote call: whatever the server answers, the approval is used (approval replay)', () => {
  const ALICE = 'alice-token-remote-replay-0123456789';
  const CAROL = 'carol-token-remote-replay-0123456789';
  let h: Harness;
  const remotes: Record<string, { url: string; child: ChildProcess }> = {};
  beforeAll(async () => {
    remotes['docs'] = await spawnRemote('2026-07-28', { REMOTE_CONTROL: '1' });
    remotes['wiki'] = await spawnRemote('2025', { REMOTE_CONTROL: '1' });
    remotes['later'] = await spawnRemote('2026-07-28', { REMOTE_CONTROL: '1' });
    h = await startHarness(
      { TOOLGATE_EGRESS_ALLOWED_CIDRS: '127.0.0.1/32' },
      {
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'carol', token: CAROL, tenant: 'acme', roles: ['approver', 'operator'] },
          ],
          roles: { worker: ['*'] },
          tenants: { acme: { tools: ['*'], selfApproval: false, grants: NETWORK } },
        },
        mcpServers: { servers: Object.entries(remotes).map(([name, remote]) => ({ name, url: remote.url, timeoutMs: 1500 })) },
      },
    );
    const allow = await h.call('/api/v1/settings/egress/allow', { method: 'POST', token: CAROL, json: { host: '127.0.0.1' } });
    expect(allow.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
    for (const remote of Object.values(remotes)) remote.child.kill();
  });

  /** Sets how the server answers calls of echo (`null`: normally) and returns what it received and ran so far. */
  async function control(server: string, mode?: string | null): Promise<{ received: Record<string, number>; ran: Record<string, number> }> {
    const url = new URL('/control', remotes[server]!.url);
    const res = mode === undefined ? await fetch(url) : await fetch(url, { method: 'POST', body: JSON.stringify({ mode }) });
    return (await res.json()) as { received: Record<string, number>; ran: Record<string, number> };
  }
  const received = async (server: string) => (await control(server)).received['echo'] ?? 0;
  const ran = async (server: string) => (await control(server)).ran['echo'] ?? 0;
  const stateOf = async (server: string) => ((await h.call('/healthz')).body.sources as { name: string; state: string }[]).find((s) => s.name === server)?.state;
  const untilUp = (server: string) => expect.poll(() => stateOf(server), { timeout: 20_000, interval: 100 }).toBe('up');
  const invoke = async (tool: string, args: object, approvalId: string) =>
    (await h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool, args, approvalId } })).body;
  const approval = async (id: string) => (await h.call(`/api/v1/approvals/${encodeURIComponent(id)}`, { token: CAROL })).body;
  async function approve(tool: string, args: object): Promise<string> {
    const request = await h.call('/api/v1/approvals', { method: 'POST', token: ALICE, json: { tool, args } });
    expect(request.status).toBe(200);
    const id = request.body.approval.id as string;
    const decided = await h.call(`/api/v1/approvals/${encodeURIComponent(id)}/decide`, { method: 'POST', token: CAROL, json: { approve: true } });
    expect(decided.body.status).toBe('approved');
    return id;
  }

  describe.each(['docs', 'wiki'])('a high-risk call of %s answered without a result after the server received it', (server) => {
    // Spellings of each class (a JSON-RPC error, a WAF's HTML page, a retry hint); the spec runs
    // every spelling on both generations. Four of these make the source reconnect, which its
    // backoff keeps short; more in a row would wait out longer backoffs.
    it.each(['401', '403-html', '404', '429', '500', '502', '503', 'html', 'reset-after-headers', 'reset-before-headers'])('answered %s: it ran at most once, and the replay is refused "already used"', async (mode) => {
      await untilUp(server);
      const tool = `${server}__echo`;
      const args = { text: `replay ${mode}` };
      const approvalId = await approve(tool, args);
      const before = await received(server);
      await control(server, mode);
      try {
        let done = false;
        const pending = invoke(tool, args, approvalId).finally(() => (done = true));
        const times = await healthTimes(h, () => done);
        const first = await pending;
        expect(first.ok).toBe(false);
        // A reset mid-stream leaves the client waiting for the rest: the call ends at its deadline.
        expect(first.denial.gate).toBe('execute');
        expect(['EXECUTION_FAILED', 'TIMEOUT']).toContain(first.denial.code);
        expect(first.denial.data?.reached).not.toBe(false);
        expect(first.denial.data?.approvalReleased).not.toBe(true);
        expect(first.denial.message).not.toMatch(/did not reach the tool|still allows one call/);
        expect(JSON.stringify(first)).not.toMatch(/secret-login-page|refused after receiving/);
        expect(Math.max(...times)).toBeLessThan(PROBE_BOUND_MS);
        expect((await approval(approvalId)).status).toBe('consumed');
        // The source may be reconnecting (401, 403, 404, a reset); once it is up, the same approval is refused.
        await untilUp(server);
        const replay = await invoke(tool, args, approvalId);
        expect(replay.ok).toBe(false);
        expect(replay.denial.gate).toBe('approval');
        expect(replay.denial.message).toMatch(/already used/);
        expect((await received(server)) - before).toBe(1);
      } finally {
        await control(server, null);
      }
    }, 30_000);
  });

  it('a server gone before the call (connection refused): not reached, the approval is given back, and it runs once when the server is back', async () => {
    await untilUp('later');
    const args = { text: 'honest' };
    const approvalId = await approve('later__echo', args);
    const port = Number(new URL(remotes['later']!.url).port);
    remotes['later']!.child.kill();
    await once(remotes['later']!.child, 'exit');
    // Long enough for the client's pool to see the idle connection close, far short of a 30 s ping.
    await new Promise((r) => setTimeout(r, 300));
    const refused = await invoke('later__echo', args, approvalId);
    expect(refused.ok).toBe(false);
    expect(refused.denial).toMatchObject({ gate: 'execute', code: 'EXECUTION_FAILED', data: { reached: false, approvalReleased: true, reason: 'MCP_SERVER_RESTARTING' } });
    expect(refused.denial.message).toMatch(/The call did not reach the tool\. Approval '.+' was not used and still allows one call\.$/);
    expect((await approval(approvalId)).status).toBe('approved');

    remotes['later'] = await spawnRemote('2026-07-28', { REMOTE_CONTROL: '1' }, port);
    await untilUp('later');
    const ok = await invoke('later__echo', args, approvalId);
    expect(ok.ok).toBe(true);
    expect(JSON.stringify(ok.output)).toContain('echo: honest');
    const replay = await invoke('later__echo', args, approvalId);
    expect(replay.denial.message).toMatch(/already used/);
    expect(await ran('later')).toBe(1);
  }, 60_000);
});
