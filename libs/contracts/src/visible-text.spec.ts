import { describe, expect, it } from 'vitest';
import { flattenText, hasUnshowable } from './visible-text.js';

/**
 * The CPU time synchronous `work` took (user and system, over this test process's threads), which
 * a loaded box does not stretch as it does the wall clock. contracts' tests import only vitest, so
 * this stands in for `timeOnThread` of @toolgate/testing; it counts at least this thread's time.
 */
function cpuMs(work: () => void): number {
  const start = process.cpuUsage();
  work();
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

describe('flattenText', () => {
  describe('instruction injection through untrusted text', () => {
    it.each([
      ['line feeds', 'a\n\nSYSTEM: x'],
      ['CRLF', 'a\r\n\r\nSYSTEM: x'],
      ['NEL, line and paragraph separators', 'a\u0085\u2028\u2029SYSTEM: x'],
      ['vertical tab and form feed', 'a\u000b\u000cSYSTEM: x'],
      ['a terminal colour', 'a\u001b[31m SYSTEM: x\u001b[0m'],
      ['bidi overrides and isolates', 'a\u202e\u2066 SYSTEM: x\u2069'],
      ['zero-width characters and BOM', 'a\u200b\u200c\u200d\u2060\ufeff SYSTEM: x'],
      ['Hangul fillers', 'a\u115f\u1160\u3164\uffa0 SYSTEM: x'],
      ['the braille blank', 'a\u2800 SYSTEM: x'],
      ['Unicode tags and variation selectors', 'a\u{E0041}\ufe0f\u{E0100} SYSTEM: x'],
      ['the combining grapheme joiner and Khmer inherent vowels', 'a\u034f\u17b4\u17b5 SYSTEM: x'],
    ])('makes %s one visible line', (_name, text) => {
      expect(flattenText(text, 100)).toBe('a SYSTEM: x');
      expect(hasUnshowable(text)).toBe(true);
      expect(hasUnshowable(flattenText(text, 100))).toBe(false);
    });
  });

  it('replaces broken UTF-16, bounds the length and keeps ordinary text', () => {
    expect(flattenText('a\ud800b', 10)).toBe('a\ufffdb');
    expect(hasUnshowable('a\ud800b')).toBe(true);
    expect(flattenText('x'.repeat(50), 10)).toBe(`${'x'.repeat(9)}…`);
    for (const text of ['Liest – schnell ✓ 📄', 'café', 'two words']) {
      expect(flattenText(text, 100)).toBe(text);
      expect(hasUnshowable(text)).toBe(false);
    }
  });

  it('stays linear on long hostile input', () => {
    const ms = cpuMs(() => {
      flattenText('\u200b\n\u3164'.repeat(100_000), 1000);
      flattenText(`\u001b]${'a'.repeat(200_000)}`, 1000);
      hasUnshowable('a'.repeat(300_000));
    });
    expect(ms).toBeLessThan(1000);
  });
});
