import { describe, expect, it } from 'vitest';
import { exportNotes, formatEgress, formatInvoke, formatTools } from './format.js';

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

describe('the notes beside a --format export', () => {
  it('says what each alias stands for and why a tool was left out, one line each', () => {
    expect(
      exportNotes({
        aliases: [{ alias: 'docs__long_0123456789ab', tool: 'docs__long_name' }],
        withheld: [{ tool: 'docs__other', reason: "its alias 'x' is the name of another tool" }],
      }),
    ).toEqual([
      "'docs__long_0123456789ab' stands for 'docs__long_name' (its name breaks this format's naming rule); a call by either name reaches it",
      "'docs__other' is left out: its alias 'x' is the name of another tool",
    ]);
    expect(exportNotes({ aliases: [], withheld: [] })).toEqual([]);
  });
});
