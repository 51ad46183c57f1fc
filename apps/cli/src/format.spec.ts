import { describe, expect, it } from 'vitest';
import { formatEgress, formatInvoke, formatTools } from './format.js';

describe('human-readable output', () => {
  it('renders a denial with its gate, code and hint', () => {
    const text = formatInvoke({
      ok: false,
      callId: 'c1',
      denial: { gate: 'egress', code: 'EGRESS_BLOCKED', message: "egress to 'example.com' is not allowed", hint: 'toolgate settings egress allow example.com' },
    });
    expect(text).toBe("denied at egress: EGRESS_BLOCKED: egress to 'example.com' is not allowed\nhint: toolgate settings egress allow example.com");
  });

  it('renders repairs after a result', () => {
    expect(formatInvoke({ ok: true, callId: 'c', output: { result: 14 }, repaired: [{ kind: 'coerce', path: '/n', detail: "coerced '3' to 3" }] })).toBe(
      '{\n  "result": 14\n}\nrepaired: coerced \'3\' to 3',
    );
  });

  it('says what each egress state means', () => {
    expect(formatEgress({ enabled: false, allowAny: false, hosts: [] })).toMatch(/disabled/);
    expect(formatEgress({ enabled: true, allowAny: false, hosts: [] })).toMatch(/no host is allowed/);
    expect(formatEgress({ enabled: true, allowAny: true, hosts: [] })).toMatch(/any public host/);
  });

  it('aligns the tool list', () => {
    expect(formatTools([])).toBe('No tools are available to you.');
  });
});
