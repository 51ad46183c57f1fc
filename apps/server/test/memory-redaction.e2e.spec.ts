import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789';

/**
 * Secret disclosure through shared memory: a failing call's message and target are written to the
 * tenant's graph as known failures, which every teammate reads back with `memory_query`. Each
 * spelling below is a file name that does not exist, so `read_file` fails with "does not exist"
 * naming it, through the real gateway, listener and Oxigraph graph. (Credentials in a URL cannot
 * survive as a workspace path, whose `//` collapses: the recorder's own spec holds that spelling.)
 */
describe('secret disclosure through known failures', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      {},
      {
        principals: {
          principals: [
            { id: 'alice', token: ALICE, tenant: 'acme', roles: ['worker'] },
            { id: 'bob', token: BOB, tenant: 'acme', roles: ['worker'] },
          ],
          roles: { worker: ['*'] },
          tenants: {
            acme: {
              tools: ['*'],
              grants: [
                { type: 'filesystem', scope: 'workspace' },
                { type: 'memory', scope: '*' },
              ],
            },
          },
        },
      },
    );
  });
  afterAll(async () => h?.stop());

  // [what the secret is, the missing path that carries it, the secret itself]
  const SPELLINGS: readonly [string, string, string][] = [
    ['a bearer header', 'notes/Authorization: Bearer sk-live0123456789abcdef.md', 'sk-live0123456789abcdef'],
    ['a bearer token alone', 'Bearer tok_0123456789abcdefghij', 'tok_0123456789abcdefghij'],
    ['a basic auth header', 'req/Authorization: Basic dXNlcjpodW50ZXIy', 'dXNlcjpodW50ZXIy'],
    ['an api_key pair', 'cache/api_key=k3y0123456789.json', 'k3y0123456789'],
    ['an OpenAI-style key', 'keys/sk-proj-abcdefgh12345678.txt', 'sk-proj-abcdefgh12345678'],
    ['a GitHub token', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
    ['an AWS access key id', 'aws/AKIAIOSFODNN7EXAMPLE.csv', 'AKIAIOSFODNN7EXAMPLE'],
    ['an AWS secret key pair', 'env/AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCY', 'wJalrXUtnFEMIK7MDENGbPxRfiCY'],
    ['a JSON password', 'cfg/{"password":"correct horse battery"}', 'correct horse battery'],
  ];

  const readMissing = (path: string) =>
    h.call('/api/v1/tools/invoke', { method: 'POST', token: ALICE, json: { tool: 'read_file', version: '1.0.0', args: { path } } });

  async function knownFailures(): Promise<{ rows: unknown[]; text: string }> {
    const { body } = await h.call('/api/v1/tools/invoke', {
      method: 'POST',
      token: BOB,
      json: {
        tool: 'memory_query',
        version: '1.0.0',
        args: { sparql: 'SELECT ?about ?finding WHERE { ?f a tg:KnownFailure ; tg:about ?about ; tg:finding ?finding }' },
      },
    });
    expect(body.ok).toBe(true);
    return { rows: body.output.rows, text: JSON.stringify(body.output.rows) };
  }

  /** The listener runs after the answer: wait until the new failure is visible to a teammate. */
  async function failAndReadBack(path: string): Promise<string> {
    const before = (await knownFailures()).rows.length;
    const failed = await readMissing(path);
    expect(failed.body).toMatchObject({ ok: false, denial: { code: 'EXECUTION_FAILED' } });
    expect(failed.body.denial.message).toMatch(/does not exist/);
    for (let i = 0; i < 100; i++) {
      const now = await knownFailures();
      if (now.rows.length > before) return now.text;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no known failure was recorded for ${path}`);
  }

  it.each(SPELLINGS)('keeps %s out of memory_query', async (_name, path, secret) => {
    const stored = await failAndReadBack(path);
    expect(stored).toContain('[REDACTED]');
    expect(stored).not.toContain(secret);
  });

  it('still records failures that hold no secret, word for word', async () => {
    const stored = await failAndReadBack('docs/setup-guide.md');
    expect(stored).toContain('docs/setup-guide.md');
  });

  it('never shows any spelling to a teammate, after all of them', async () => {
    const { rows, text } = await knownFailures();
    expect(rows.length).toBe(SPELLINGS.length + 1);
    for (const [, , secret] of SPELLINGS) expect(text).not.toContain(secret);
  });
});
