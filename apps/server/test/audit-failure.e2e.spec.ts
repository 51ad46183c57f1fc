import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './e2e-harness.js';

const invoke = { tool: 'calculator', version: '1.0.0', args: { expression: '1+1' } };

/** A damaged audit trail: the server keeps serving health, says why, and refuses every call. */
describe('a corrupted audit trail fails closed', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    for (let i = 0; i < 3; i++) await h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: invoke });
    // Flip one byte inside the JSON of the second frame of the first segment, then restart.
    const dir = join(h.dataDir, 'data', 'audit');
    const segment = (await readdir(dir)).filter((f) => /^audit-\d+\.log$/.test(f)).sort()[0]!;
    const bytes = await readFile(join(dir, segment));
    const lines = bytes.toString('utf8').split('\n');
    lines[2] = lines[2]!.replace('"calculator"', '"calculatoR"');
    await writeFile(join(dir, segment), lines.join('\n'));
    await h.restart();
  });
  afterAll(async () => h?.stop());

  it('reports the damage on /healthz with 503', async () => {
    const { status, body } = await h.call('/healthz');
    expect(status).toBe(503);
    expect(body.ok).toBe(false);
    expect(body.reasons.join(' ')).toMatch(/audit/);
  });

  it('refuses every tool call with AUDIT_UNAVAILABLE and runs nothing', async () => {
    const { body } = await h.call('/api/v1/tools/invoke', { method: 'POST', token: 'demo', json: invoke });
    expect(body.ok).toBe(false);
    expect(body.denial).toMatchObject({ gate: 'audit', code: 'AUDIT_UNAVAILABLE' });
  });
});
