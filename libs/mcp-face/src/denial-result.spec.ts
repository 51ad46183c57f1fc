import type { Denial } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { denialResult, denialText, mcpHint, successResult } from './denial-result.js';

describe('denials as MCP tool errors', () => {
  it('names the gate, the code, the message and the hint for a model', () => {
    const denial: Denial = { gate: 'approval', code: 'APPROVAL_REQUIRED', message: 'This call needs an approval.', hint: 'Ask an approver.' };
    expect(denialText(denial, 'c1')).toBe(
      'Toolgate refused this call at the approval gate: APPROVAL_REQUIRED.\nThis call needs an approval.\nHint: Ask an approver.\nCall id: c1.',
    );
  });

  it('tells a model whom to delegate to on TOOL_NOT_ALLOWED, or not to retry when nobody may', () => {
    const base: Denial = { gate: 'allow', code: 'TOOL_NOT_ALLOWED', message: "You may not call 'bash'." };
    expect(denialText({ ...base, data: { delegates: ['ops', 'builder'] } }, 'c')).toContain('delegate the task to one of: ops, builder.');
    expect(denialText({ ...base, data: { delegates: [] } }, 'c')).toContain('do not retry');
    // Data from a denial is not trusted to be well-formed: non-strings are left out.
    expect(denialText({ ...base, data: { delegates: ['ops', 3, null] } }, 'c')).toContain('one of: ops.');
  });

  it('is isError with the denial as structuredContent', () => {
    const denial: Denial = { gate: 'lookup', code: 'TOOL_NOT_FOUND', message: 'No tool.' };
    expect(denialResult('c2', denial)).toMatchObject({ isError: true, structuredContent: { ok: false, callId: 'c2', denial } });
  });

  it("says the gateway's tRPC procedure names in MCP's words, in the text and in structuredContent", () => {
    const denial: Denial = { gate: 'lookup', code: 'TOOL_NOT_FOUND', message: "No tool 'x'.", hint: 'Call tools.list to see the tools you may use; then tools.invoke.' };
    const result = denialResult('c3', denial);
    expect(result.content[0]!.text).toContain('Hint: Call tools/list to see the tools you may use; then tools/call.');
    expect(result.structuredContent).toMatchObject({ denial: { hint: 'Call tools/list to see the tools you may use; then tools/call.' } });
    // Only the whole procedure names: a tool whose name merely contains them is left alone.
    expect(mcpHint("Try 'my_tools.listing' or tools.lists.")).toBe("Try 'my_tools.listing' or tools.lists.");
  });

  it('puts an output into structuredContent and a JSON text block', () => {
    expect(successResult({ result: 1 })).toEqual({ content: [{ type: 'text', text: '{"result":1}' }], structuredContent: { result: 1 } });
  });
});
