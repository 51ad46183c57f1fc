import { describe, expect, it } from 'vitest';
import { denialOf, harness, searchTool, testTool } from './harness.js';

/** A payment-like tool: the amount is a number, any size the schema allows. */
function payTool() {
  return testTool({
    name: 'pay',
    input: { type: 'object', properties: { amount: { type: 'number' }, note: { type: 'string' } }, required: ['amount'], additionalProperties: false },
  });
}

async function invoke(tool: ReturnType<typeof payTool>, args: Record<string, unknown>) {
  const h = harness({ tools: [tool] });
  return h.gateway.invoke(h.who('worker-1'), { tool: tool.manifest.name, args: args as never });
}

describe('gate 6: a numeric string is converted only when a number holds it exactly (ADR 0063 premise)', () => {
  describe('precision loss', () => {
    it('refuses a big integer INVALID_INPUT naming the argument, not its value, and the handler never runs', async () => {
      for (const amount of ['9007199254740993', '-9007199254740993', '9.007199254740993e15', '123456789012345678901234567890']) {
        const tool = payTool();
        const denial = denialOf(await invoke(tool, { amount }));
        expect(denial.code, amount).toBe('INVALID_INPUT');
        expect(denial.message, amount).toContain("'amount' is a numeric string that no number holds exactly");
        expect(denial.message, amount).not.toContain(amount);
        expect(JSON.stringify(denial), amount).not.toContain(amount.slice(0, 12));
        expect(tool.calls, amount).toHaveLength(0);
      }
    });

    it('does not let 10.0000000000000001 pass a maximum of 10 as 10', async () => {
      for (const value of ['10.0000000000000001', '10.00000000000000000000000001', '1.00000000000000001e1']) {
        const tool = searchTool();
        const denial = denialOf(await invoke(tool, { query: 'x', max_results: value }));
        expect(denial.code, value).toBe('INVALID_INPUT');
        expect(denial.message, value).toContain("'max_results' is a numeric string");
        expect(denial.data?.['inexactNumbers'], value).toEqual(['/max_results']);
        expect(tool.calls, value).toHaveLength(0);
      }
    });

    it('does not echo a long value in the refusal', async () => {
      const amount = '1' + '7'.repeat(5000);
      const denial = denialOf(await invoke(payTool(), { amount }));
      expect(denial.code).toBe('INVALID_INPUT');
      expect(JSON.stringify(denial)).not.toContain('7'.repeat(20));
    });
  });

  it('still converts exact spellings: 10, 10.0, 1e1, +10, 0.1', async () => {
    for (const [text, number] of [['10', 10], ['10.0', 10], ['1e1', 10], ['+10', 10], ['0.1', 0.1]] as const) {
      const tool = payTool();
      expect(await invoke(tool, { amount: text }), text).toMatchObject({ ok: true, repaired: [{ kind: 'coerce', path: '/amount' }] });
      expect(tool.calls[0]?.args['amount'], text).toBe(number);
    }
  });
});
