import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

const OPS_A = 'ops-a-token-0123456789';
const OPS_B = 'ops-b-token-0123456789';
const NETWORK = [{ type: 'network', scope: '*' }];

/** Per-tenant egress through the whole server, against a web server on loopback only. */
describe('egress end to end', () => {
  let h: Harness;
  let web: Server;
  let port: number;
  beforeAll(async () => {
    web = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('hello from loopback');
    });
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    port = (web.address() as AddressInfo).port;
    h = await startHarness(
      // Loopback is private: the guard reaches it only because the operator opened the range.
      { TOOLGATE_EGRESS_ALLOWED_CIDRS: '127.0.0.0/8' },
      {
        principals: {
          principals: [
            { id: 'ops-a', token: OPS_A, tenant: 'a', roles: ['worker', 'operator', 'approver'] },
            { id: 'ops-b', token: OPS_B, tenant: 'b', roles: ['worker', 'operator', 'approver'] },
          ],
          // The network permission is the operators' standing role grant (ADR 0022); calls narrow to it.
          roles: { worker: { tools: ['*'], grants: NETWORK } },
          tenants: { a: { tools: ['*'], selfApproval: true }, b: { tools: ['*'], selfApproval: true } },
        },
      },
    );
  });
  afterAll(async () => {
    await h?.stop();
    await new Promise<void>((r) => web.close(() => r()));
  });

  const fetchAs = (token: string, url: string) =>
    h.call('/api/v1/tools/invoke', {
      method: 'POST',
      token,
      json: { tool: 'http_fetch', args: { url }, grants: NETWORK, approved: true },
    });

  it('blocks egress by default and names the host in the hint', async () => {
    const { body } = await fetchAs(OPS_A, `http://127.0.0.1:${port}/`);
    expect(body.denial).toMatchObject({ gate: 'egress', code: 'EGRESS_BLOCKED', data: { host: '127.0.0.1' } });
    expect(body.denial.hint).toContain('127.0.0.1');
  });

  it("allows a host for one tenant only, then fetches through the guard", async () => {
    const allow = await h.call('/api/v1/settings/egress/allow', { method: 'POST', token: OPS_A, json: { host: '127.0.0.1' } });
    expect(allow.body).toEqual({ enabled: true, allowAny: false, hosts: ['127.0.0.1'] });

    const ok = await fetchAs(OPS_A, `http://127.0.0.1:${port}/`);
    expect(ok.body.ok).toBe(true);
    expect(JSON.stringify(ok.body.output)).toContain('hello from loopback');

    const other = await fetchAs(OPS_B, `http://127.0.0.1:${port}/`);
    expect(other.body.denial.code).toBe('EGRESS_BLOCKED');
  });

  it('still refuses a host outside the allowlist and cloud metadata addresses', async () => {
    const other = await fetchAs(OPS_A, 'http://169.254.169.254/latest/meta-data/');
    expect(other.body.denial).toMatchObject({ code: 'EGRESS_BLOCKED', data: { host: '169.254.169.254' } });

    await h.call('/api/v1/settings/egress', { method: 'PUT', token: OPS_A, json: { enabled: true, allowAny: true, hosts: [] } });
    const metadata = await fetchAs(OPS_A, 'http://169.254.169.254/latest/meta-data/');
    expect(metadata.body.ok).toBe(false);
    expect(metadata.body.denial.code).toBe('EXECUTION_FAILED');
    expect(metadata.body.denial.message).toMatch(/link-local|not public|refused/i);
  });
});
