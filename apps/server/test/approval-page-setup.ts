import { resolve } from 'node:path';
import { startHarness, type Harness } from './e2e-harness.js';

/** Requester (worker) in acme. */
export const ALICE = 'alice-token-approval-page-0123456789';
/** Approver in acme. */
export const CAROL = 'carol-token-approval-page-0123456789';
/** Worker and approver in acme: may request, may not approve its own request (no self-approval). */
export const RITA = 'rita-token-approval-page-0123456789';
/** Approver and operator in globex: another tenant. */
export const GINA = 'gina-token-approval-page-0123456789';

const ECHO_SERVER = resolve(__dirname, '../../../libs/adapters/mcp-client/test/fixtures/echo-server.mjs');

/**
 * A server whose high-risk tool is `files__echo` (an MCP tool: unverified, so high risk), with a
 * requester and an approver in acme and an approver in globex. Waits until the tool is listed.
 */
export async function startApprovalServer(env: Record<string, string> = {}): Promise<Harness> {
  const h = await startHarness(env, {
    mcpServers: { servers: [{ name: 'files', command: process.execPath, args: [ECHO_SERVER], env: {}, tier: 'unisolated' }] },
    principals: {
      principals: [
        { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
        { id: 'carol', token: CAROL, tenant: 'acme', roles: ['approver'] },
        { id: 'rita', token: RITA, tenant: 'acme', roles: ['worker', 'approver'] },
        { id: 'gina', token: GINA, tenant: 'globex', roles: ['worker', 'approver', 'operator'] },
      ],
      roles: { worker: ['*'] },
      tenants: {
        acme: { tools: ['*'], selfApproval: false, grants: [{ type: 'exec', scope: 'mcp:files' }] },
        globex: { tools: ['*'], selfApproval: false, grants: [{ type: 'exec', scope: 'mcp:files' }] },
      },
    },
  });
  // Discovery of the upstream server runs after the start; wait until its tool is listed.
  for (let i = 0; i < 200; i++) {
    const listed = await h.call('/api/v1/tools', { token: ALICE });
    if (listed.body.tools.some((t: { name: string }) => t.name === 'files__echo')) return h;
    await new Promise((r) => setTimeout(r, 50));
  }
  await h.stop();
  throw new Error('files__echo was never listed');
}

/** Asks for an approval of `files__echo` with `text` as `token`'s principal; returns its id. */
export async function requestEcho(h: Harness, text: string, token = ALICE): Promise<string> {
  const answer = await h.call('/api/v1/approvals', { method: 'POST', token, json: { tool: 'files__echo', args: { text } } });
  if (answer.status !== 200 || !answer.body.ok) throw new Error(`approval request refused: ${JSON.stringify(answer.body)}`);
  return answer.body.approval.id as string;
}
