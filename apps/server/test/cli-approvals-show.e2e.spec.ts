import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as toolgate, type Harness } from './e2e-harness.js';
import { ALICE, CAROL, GINA, requestEcho, startApprovalServer } from './approval-page-setup.js';

describe('toolgate approvals show', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startApprovalServer();
  });
  afterAll(async () => h?.stop());

  it('shows one approval with its hidden characters pointed out, and --json the view itself', async () => {
    const id = await requestEcho(h, 'ship\u202Eit');
    const shown = await toolgate(h, ['approvals', 'show', id], CAROL);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`${id}  pending  files__echo@`);
    expect(shown.stdout).toContain('requested by alice');
    expect(shown.stdout).toContain('  hidden characters: U+202E at args.text:4');
    expect(shown.stdout).toContain('  args as shown: {"text":"ship\\\\u{202E}it"}');
    expect(shown.stdout).toMatch(/ {2}note: An approval binds these exact arguments/);
    const json = await toolgate(h, ['--json', 'approvals', 'show', id], ALICE);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, requester: 'alice', args: { text: 'ship\u202Eit' }, hidden: ['U+202E at args.text:4'] });
  });

  it("says an unknown or another tenant's id does not exist, exit 1", async () => {
    const id = await requestEcho(h, 'acme only');
    for (const [who, token, asked] of [['unknown', CAROL, 'no-such-approval'], ['another tenant', GINA, id]] as const) {
      const answer = await toolgate(h, ['approvals', 'show', asked], token);
      expect(answer.code, who).toBe(1);
      expect(answer.stderr, who).toContain(`There is no approval '${asked}' that you can see in your tenant.`);
      expect(answer.stdout, who).toBe('');
    }
  });
});
