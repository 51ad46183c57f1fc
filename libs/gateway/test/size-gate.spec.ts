import { describe, expect, it } from 'vitest';
import { denialOf, harness, searchTool } from './harness.js';

describe('gate 4: size', () => {
  it('refuses arguments whose UTF-8 JSON exceeds the limit, counting bytes not characters', async () => {
    const tool = searchTool();
    const h = harness({ tools: [tool], deps: { limits: { maxArgsBytes: 100 } } });
    // 44 × 'é' is 44 characters but 88 bytes; with the 12 bytes of JSON framing that is 100.
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'é'.repeat(44) } })).ok).toBe(true);
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'é'.repeat(45) } }));
    expect(denial).toMatchObject({ gate: 'size', code: 'INPUT_TOO_LARGE', data: { bytes: 102, limit: 100 } });
    expect(tool.calls).toHaveLength(1);
  });

  it('lets arguments at the limit through', async () => {
    const h = harness({ tools: [searchTool()], deps: { limits: { maxArgsBytes: 20 } } });
    // {"query":"abcdefghi"} is exactly 21 bytes; one character less fits.
    expect((await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'abcdefgh' } })).ok).toBe(true);
    expect(denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'abcdefghi' } })).code).toBe('INPUT_TOO_LARGE');
  });

  it('uses 64 KiB by default', async () => {
    const h = harness({ tools: [searchTool()] });
    const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: { query: 'x'.repeat(70_000) } }));
    expect(denial).toMatchObject({ code: 'INPUT_TOO_LARGE', data: { limit: 65_536 } });
  });

  it('refuses arguments that are not a JSON object', async () => {
    const h = harness({ tools: [searchTool()] });
    for (const args of [null, [], 'x', 5]) {
      const denial = denialOf(await h.gateway.invoke(h.who('worker-1'), { tool: 'search', args: args as never }));
      expect(denial).toMatchObject({ gate: 'size', code: 'INVALID_INPUT' });
    }
  });
});
