import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnavailable, startHarness, type Harness } from './e2e-harness.js';

const SECRET = 'do-not-leak-0123456789';
const hasBwrap = (await bwrapUnavailable('shell e2e')) === undefined;

const GRANTS = [
  { type: 'exec', scope: '*' },
  { type: 'filesystem', scope: 'workspace' },
];

/** Workspace files and bash through the whole server, at the bubblewrap tier. */
describe.runIf(hasBwrap)('workspace and shell tools end to end (bwrap tier)', () => {
  let h: Harness;
  beforeAll(async () => {
    process.env['TOOLGATE_TEST_SECRET'] = SECRET;
    h = await startHarness({ TOOLGATE_SHELL_TIER: 'bwrap' });
  });
  afterAll(async () => {
    delete process.env['TOOLGATE_TEST_SECRET'];
    await h?.stop();
  });

  const invoke = (tool: string, args: object) =>
    h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: { tool, args, grants: GRANTS, approved: true } });

  it('writes a file with write_file and reads it back with bash inside the sandbox', async () => {
    const write = await invoke('write_file', { path: 'notes/hello.txt', content: 'hi from the workspace\n' });
    expect(write.body.ok).toBe(true);
    const cat = await invoke('bash', { command: 'cat notes/hello.txt && pwd' });
    expect(cat.body).toMatchObject({ ok: true, output: { exit_code: 0 } });
    expect(cat.body.output.stdout).toBe('hi from the workspace\n/workspace\n');
  });

  it("never shows the server's environment to the shell", async () => {
    const env = await invoke('bash', { command: 'env' });
    expect(env.body.ok).toBe(true);
    expect(env.body.output.stdout).not.toContain(SECRET);
    expect(env.body.output.stdout).not.toContain('TOOLGATE_');
  });

  it('cannot read the host /etc/passwd or leave the workspace', async () => {
    const passwd = await invoke('bash', { command: 'cat /etc/passwd' });
    expect(passwd.body.output.stdout).not.toMatch(/^root:x:0:0/m);
    const escape = await invoke('read_file', { path: '../../../../etc/passwd' });
    expect(escape.body.ok).toBe(false);
    expect(escape.body.denial.message).toMatch(/PathEscape: '\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd'/);
    expect(escape.body.denial.message).not.toContain(h.dataDir);
  });

  it('refuses bash without an approval, since it is high risk', async () => {
    const res = await h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: { tool: 'bash', args: { command: 'true' }, grants: GRANTS } });
    expect(res.body.denial.code).toBe('APPROVAL_REQUIRED');
  });
});
