import type { JsonValue } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { denialOf, harness, testTool } from './harness.js';

function returning(value: unknown, manifest: Parameters<typeof testTool>[0] = { name: 'out' }) {
  return testTool(manifest, async () => value as JsonValue);
}

describe('gate 11: output', () => {
  it('refuses output over the gateway limit', async () => {
    const h = harness({ tools: [returning({ text: 'x'.repeat(200) })], deps: { limits: { maxOutputBytes: 100 } } });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'out', args: {} });
    expect(denialOf(result)).toMatchObject({ gate: 'output', code: 'OUTPUT_TOO_LARGE', data: { bytes: 211, limit: 100 } });
    expect(result).not.toHaveProperty('output');
    expect(h.audit.kinds()).toEqual(['authorized', 'failed:OUTPUT_TOO_LARGE']);
  });

  it('uses the manifest limit when it sets one, counting UTF-8 bytes', async () => {
    const h = harness({ tools: [returning('€'.repeat(10), { name: 'out', maxOutputBytes: 31 })] });
    // "€€€€€€€€€€" is 12 characters of JSON but 32 bytes.
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'out', args: {} }))).toMatchObject({ code: 'OUTPUT_TOO_LARGE', data: { bytes: 32, limit: 31 } });
  });

  it('refuses output that does not match the declared schema', async () => {
    const output = { type: 'object', properties: { result: { type: 'number' } }, required: ['result'], additionalProperties: false };
    const h = harness({ tools: [returning({ result: 'NaN', extra: 1 }, { name: 'out', output })] });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'out', args: {} }));
    expect(denial).toMatchObject({ gate: 'output', code: 'INVALID_OUTPUT' });
    expect(denial.message).toContain("unknown field 'extra'");
    expect(denial.message).toContain("'result' must be number");
  });

  it('refuses a value that is not JSON', async () => {
    for (const value of [undefined, () => 1, 10n]) {
      const h = harness({ tools: [returning(value)] });
      expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'out', args: {} })).code).toBe('INVALID_OUTPUT');
    }
  });

  it('returns the JSON form of what it validated', async () => {
    const h = harness({ tools: [returning({ when: new Date(Date.UTC(2030, 0, 1)), gone: undefined })] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'out', args: {} });
    expect(result).toMatchObject({ ok: true, output: { when: '2030-01-01T00:00:00.000Z' } });
    expect(result.ok && Object.keys(result.output as object)).toEqual(['when']);
  });
});
