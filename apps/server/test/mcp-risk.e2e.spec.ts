import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

const ALICE = 'alice-token-0123456789';
const ECHO_SERVER = resolve(__dirname, '../../../libs/adapters/mcp-client/test/fixtures/echo-server.mjs');

/**
 * docs/mcp.md lets the operator set an MCP server's `risk`, `low` included. The registry accepts
 * `low` from a non-first-party source only with explicit trust, which the servers file is: each
 * risk the file names must reach the tool, with none of the server's tools lost on the way.
 */
describe('an MCP server configured with each risk level', () => {
  let h: Harness;
  const RISKS = ['low', 'medium', 'high', 'critical'] as const;
  beforeAll(async () => {
    h = await startHarness(
      {},
      {
        mcpServers: {
          servers: [
            ...RISKS.map((risk) => ({ name: `echo-${risk}`, command: process.execPath, args: [ECHO_SERVER], env: {}, tier: 'unisolated', risk })),
            { name: 'echo-default', command: process.execPath, args: [ECHO_SERVER], env: {}, tier: 'unisolated' },
          ],
        },
        principals: {
          principals: [{ id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] }],
          roles: { worker: ['*'] },
          tenants: { acme: { tools: ['*'], grants: [{ type: 'exec', scope: '*' }] } },
        },
      },
    );
  });
  afterAll(async () => h?.stop());

  it('offers every tool of every server at the risk its file names (default high)', async () => {
    const { body } = await h.call('/api/v1/tools', { token: ALICE });
    const risks = Object.fromEntries(
      body.tools.filter((t: { name: string }) => t.name.endsWith('__echo')).map((t: { name: string; risk: string }) => [t.name, t.risk]),
    );
    expect(risks).toEqual({ echo_low__echo: 'low', echo_medium__echo: 'medium', echo_high__echo: 'high', echo_critical__echo: 'critical', echo_default__echo: 'high' });
    // The start-up line names the rejected count (issue 12 defect 1): "0 rejected" is the one mention allowed.
    expect(h.logs.filter((line) => line.includes('rejected') && !/ started with 7 tool\(s\) accepted and 0 rejected$/.test(line))).toEqual([]);
    for (const risk of ['low', 'medium', 'high', 'critical', 'default']) expect(h.logs).toContain(`info MCP server 'echo-${risk}' started with 7 tool(s) accepted and 0 rejected`);
  });

  it('runs the low-risk tool without an approval, and still asks one for high', async () => {
    const low = await h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool: 'echo_low__echo', args: { text: 'hi' } } });
    expect(low.body.ok).toBe(true);
    const high = await h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool: 'echo_high__echo', args: { text: 'hi' } } });
    expect(high.body.denial).toMatchObject({ gate: 'approval', code: 'APPROVAL_REQUIRED' });
  });
});
