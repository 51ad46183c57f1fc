import { resolve } from 'node:path';
import type { AuditRecord } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

const ALICE = 'alice-token-0123456789';
const CAROL = 'carol-token-0123456789';
const ECHO_SERVER = resolve(__dirname, '../../../libs/adapters/mcp-client/test/fixtures/echo-server.mjs');

/**
 * The exact-payload approval flow end to end, through a tool of a real MCP server (MCP tools are
 * unverified, so `high` risk by default).
 */
describe('approvals of an MCP tool, end to end', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      {},
      {
        mcpServers: { servers: [{ name: 'files', command: process.execPath, args: [ECHO_SERVER], env: {}, tier: 'unisolated' }] },
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'carol', token: CAROL, tenant: 'acme', roles: ['approver', 'operator'] },
          ],
          roles: { worker: ['*'] },
          tenants: { acme: { tools: ['*'], selfApproval: false, grants: [{ type: 'exec', scope: 'mcp:files' }] } },
        },
      },
    );
  });
  afterAll(async () => h?.stop());

  const invoke = (args: object, extra: object = {}) =>
    h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool: 'files__echo', args, ...extra } });

  it('registers the MCP tool as high risk with its provenance', async () => {
    const { body } = await h.call('/api/v1/tools', { token: ALICE });
    const tool = body.tools.find((t: { name: string }) => t.name === 'files__echo');
    expect(tool).toMatchObject({ risk: 'high', provenance: 'mcp:files', version: '1.2.3' });
  });

  it('needs, binds, and uses up an approval of the exact payload', async () => {
    const first = await invoke({ text: 'hello' });
    expect(first.body.denial).toMatchObject({ gate: 'approval', code: 'APPROVAL_REQUIRED' });

    const request = await h.call('/api/v1/approvals', { method: 'POST', token: ALICE, json: { tool: 'files__echo', args: { text: 'hello' } } });
    expect(request.status).toBe(200);
    const id = request.body.approval.id as string;
    expect(request.body.approval.payloadDigest).toMatch(/^sha256:[0-9a-f]{64}$/);

    const selfDecide = await h.call(`/api/v1/approvals/${id}/decide`, { method: 'POST', token: ALICE, json: { approve: true } });
    expect(selfDecide.status).toBe(403);

    const decide = await h.call(`/api/v1/approvals/${id}/decide`, { method: 'POST', token: CAROL, json: { approve: true, reason: 'looks fine' } });
    expect(decide.body).toMatchObject({ status: 'approved', decidedBy: 'carol' });

    const altered = await invoke({ text: 'hello!' }, { approvalId: id });
    expect(altered.body.denial.code).toBe('APPROVAL_PAYLOAD_MISMATCH');

    const ok = await invoke({ text: 'hello' }, { approvalId: id });
    expect(ok.body).toMatchObject({ ok: true, output: { content: [{ type: 'text', text: 'hello' }] } });

    const replay = await invoke({ text: 'hello' }, { approvalId: id });
    expect(replay.body.ok).toBe(false);
    expect(replay.body.denial.gate).toBe('approval');

    const audit = await h.call('/api/v1/audit?limit=20', { token: CAROL });
    const succeeded = audit.body.find((r: { event: string; tool?: string }) => r.event === 'succeeded' && r.tool === 'files__echo');
    expect(succeeded).toMatchObject({ principal: 'alice', approvedBy: 'carol' });
    expect(JSON.stringify(audit.body)).not.toContain('hello');

    // Who asked for the approval, who decided it, and when, in the trail before the call it allowed.
    const rows = audit.body as AuditRecord[];
    // The refused self-decision is recorded as denied (DESIGN §3), never as a decision.
    const refusedSelf = rows.filter((r) => r.approvalId === id && r.event === 'denied');
    expect(refusedSelf).toEqual([expect.objectContaining({ principal: 'alice', gate: 'approval', code: 'PERMISSION_NOT_GRANTED', detail: expect.stringMatching(/^approval decision refused: FORBIDDEN: /) })]);
    const about = rows.filter((r) => r.approvalId === id && r.event !== 'denied');
    expect(about).toHaveLength(2);
    const [requested, decided] = about;
    expect(requested).toMatchObject({ event: 'approval_requested', tenant: 'acme', principal: 'alice', tool: 'files__echo', version: '1.2.3' });
    expect(decided).toMatchObject({ event: 'approval_decided', principal: 'carol', approvedBy: 'carol', approvalReason: 'looks fine', detail: 'approved' });
    expect(decided?.argsDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(decided?.argsDigest).toBe(requested?.argsDigest);
    const authorized = rows.find((r) => r.event === 'authorized' && r.approvalReason === `approval:${id}`);
    expect(authorized).toMatchObject({ argsDigest: decided?.argsDigest });
    expect(requested!.seq).toBeLessThan(decided!.seq);
    expect(decided!.seq).toBeLessThan(authorized!.seq);

    // The trail with the new kinds still verifies end to end.
    const verified = await h.call('/api/v1/audit/verify', { token: CAROL });
    expect(verified.body).toMatchObject({ ok: true });
  });

  it('does not let a worker read the whole tenant audit', async () => {
    const { body } = await h.call('/api/v1/audit?limit=50', { token: ALICE });
    expect(body.every((r: { principal?: string }) => r.principal === 'alice')).toBe(true);
  });
});
