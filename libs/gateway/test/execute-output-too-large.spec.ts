import { ToolError } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { denialOf, harness, testTool } from './harness.js';

// A handler that could not carry its answer (an MCP source whose server answered more than one
// message may hold, ADR 0059) says so with ToolError reason OUTPUT_TOO_LARGE: the caller gets the
// same code as the output gate's, at the execute gate, and the call counts as handed to the tool.

describe('gate 10: execute, an answer too large to carry', () => {
  it('answers OUTPUT_TOO_LARGE with the handler message and the output hint, audited as failed:OUTPUT_TOO_LARGE', async () => {
    const message = "'fs__read_text_file' answered with more than 4194304 bytes, the most one MCP message may carry; the answer was dropped";
    const h = harness({ tools: [testTool({ name: 'big' }, async () => Promise.reject(new ToolError(message, 'OUTPUT_TOO_LARGE')))] });
    const result = await h.gateway.invoke(h.who('worker-1'), { tool: 'big', args: {} });
    expect(denialOf(result)).toEqual({
      gate: 'execute',
      code: 'OUTPUT_TOO_LARGE',
      message,
      hint: 'Ask for less, e.g. a narrower query or a smaller page.',
      data: { reason: 'OUTPUT_TOO_LARGE' },
    });
    expect(result).not.toHaveProperty('output');
    expect(h.audit.kinds()).toEqual(['authorized', 'failed:OUTPUT_TOO_LARGE']);
  });

  it('keeps every other ToolError reason an EXECUTION_FAILED carrying its reason', async () => {
    for (const reason of ['MCP_PROTOCOL_ERROR', 'output_too_large', 'OUTPUT_TOO_LARGE ', 'TOO_LARGE']) {
      const h = harness({ tools: [testTool({ name: 't' }, async () => Promise.reject(new ToolError('no', reason)))] });
      expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 't', args: {} })), reason).toMatchObject({
        gate: 'execute',
        code: 'EXECUTION_FAILED',
        data: { reason },
      });
    }
  });
});
