import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startHarness, type Harness } from './e2e-harness.js';

/**
 * Repairs in the CLI (issue 12, defect 10): a repair changes what the call does (a clamped
 * `limit` runs as the bound), so `toolgate tools invoke` and `tools explain` show every repair in
 * their human output, with its kind and argument, and `--json` keeps the gateway's list as it is.
 * The real command against a real server, with `list_dir`, whose `limit` has a minimum and maximum.
 */
describe('repairs shown by the toolgate CLI', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  // A numeric string over the maximum: coerced to a number, then clamped to the bound.
  const args = JSON.stringify({ path: '.', limit: '100000' });

  it('`tools invoke` prints every repair after the result, one line each', async () => {
    const ran = await runCli(h, ['tools', 'invoke', 'list_dir', '--args', args], 'demo');
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    const repairs = ran.stdout.split('\n').filter((line) => line.startsWith('repaired: '));
    expect(repairs).toEqual([expect.stringMatching(/^repaired: coerce \/limit: /), expect.stringMatching(/^repaired: clamp \/limit: lowered 'limit' to the maximum \d+$/)]);
  });

  it('`tools explain` prints the same repairs', async () => {
    const invoked = await runCli(h, ['tools', 'invoke', 'list_dir', '--args', args], 'demo');
    const explained = await runCli(h, ['tools', 'explain', 'list_dir', '--args', args], 'demo');
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(/^would run: yes$/m);
    const lines = (text: string) => text.split('\n').filter((line) => line.startsWith('repaired: '));
    expect(lines(explained.stdout)).toHaveLength(2);
    expect(lines(explained.stdout)).toEqual(lines(invoked.stdout));
  });

  it('`--json` keeps the repairs as the gateway reported them, for both commands', async () => {
    for (const command of ['invoke', 'explain']) {
      const ran = await runCli(h, ['--json', 'tools', command, 'list_dir', '--args', args], 'demo');
      expect(ran.code, command).toBe(0);
      const body = JSON.parse(ran.stdout);
      expect(body.repaired, command).toEqual([
        { kind: 'coerce', path: '/limit', detail: expect.any(String) },
        { kind: 'clamp', path: '/limit', detail: expect.stringMatching(/^lowered 'limit' to the maximum \d+$/) },
      ]);
      expect(ran.stdout, command).not.toMatch(/^repaired: /m);
    }
  });

  it('prints no repair line for a call that needed none', async () => {
    const ran = await runCli(h, ['tools', 'invoke', 'list_dir', '--args', JSON.stringify({ path: '.', limit: 5 })], 'demo');
    expect(ran.code).toBe(0);
    expect(ran.stdout).not.toMatch(/repaired/);
  });
});
