import { describe, expect, it } from 'vitest';
import { progressOf } from '../src/progress-relay.js';

function sink(meta: unknown) {
  const sent: { method: string; params: Record<string, unknown> }[] = [];
  const { progress } = progressOf(meta, async (n) => void sent.push(n));
  return { progress, sent };
}

describe('progress relay to the MCP client', () => {
  it('sends notifications/progress with the client\'s own token, total and message when present', () => {
    const { progress, sent } = sink({ progressToken: 'tok' });
    progress?.({ progress: 1 });
    progress?.({ progress: 2, total: 4, message: 'half' });
    expect(sent).toEqual([
      { method: 'notifications/progress', params: { progressToken: 'tok', progress: 1 } },
      { method: 'notifications/progress', params: { progressToken: 'tok', progress: 2, total: 4, message: 'half' } },
    ]);
    const numeric = sink({ progressToken: 7 });
    numeric.progress?.({ progress: 1 });
    expect(numeric.sent[0]?.params['progressToken']).toBe(7);
  });

  describe('progress tokens a client may not use', () => {
    it.each([
      ['no _meta', undefined],
      ['no token', {}],
      ['null', { progressToken: null }],
      ['a fraction', { progressToken: 1.5 }],
      ['an unsafe integer', { progressToken: 2 ** 60 }],
      ['an object', { progressToken: { id: 1 } }],
      ['an array', { progressToken: ['a'] }],
      ['a boolean', { progressToken: true }],
      ['a string of 257 characters', { progressToken: 'x'.repeat(257) }],
    ])('%s: no progress at all', (_what, meta) => {
      expect(sink(meta).progress).toBeUndefined();
    });
  });

  it('a stream that is gone does not fail the call', async () => {
    const { progress } = progressOf({ progressToken: 'tok' }, () => Promise.reject(new Error('stream closed')));
    expect(() => progress?.({ progress: 1 })).not.toThrow();
    await new Promise((r) => setTimeout(r, 5));
  });
});
