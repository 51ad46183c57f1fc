import { describe, expect, it } from 'vitest';
import { ecmaToLinearPattern, MAX_PATTERN_SOURCE, PatternRefused } from './ecma-pattern.js';

describe('ecmaToLinearPattern', () => {
  const refusal = (source: string) => {
    try {
      ecmaToLinearPattern(source);
    } catch (error) {
      return error instanceof PatternRefused ? error.message : `not a PatternRefused: ${String(error)}`;
    }
    return 'translated';
  };

  describe('constructs only a backtracking engine can run', () => {
    it.each(['(a)\\1', '(a)(b)\\2', '^(a+)\\1$', '(?:(x))\\1', '(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\\10'])('refuses the backreference %s', (source) => {
      expect(refusal(source)).toMatch(/backreference/);
    });
    it.each(['(?<w>a)\\k<w>', '(?<first>x)(?<second>y)\\k<second>'])('refuses the named backreference %s', (source) => {
      expect(refusal(source)).toMatch(/named backreference/);
    });
    it.each(['a(?=b)', 'a(?!b)', '(?=.*\\d)', '^(?!.*(.).*\\1)'])('refuses the lookahead %s', (source) => {
      expect(refusal(source)).toMatch(/lookahead/);
    });
    it.each(['(?<=a)b', '(?<!a)b', '(?<=\\$)\\d+'])('refuses the lookbehind %s', (source) => {
      expect(refusal(source)).toMatch(/lookbehind/);
    });
  });

  it('refuses what is not ECMA-262 at all, or too long, with a reason', () => {
    expect(refusal('(unclosed')).toMatch(/not a valid ECMA-262/);
    expect(refusal('\\k')).toMatch(/not a valid ECMA-262/);
    expect(refusal('a'.repeat(MAX_PATTERN_SOURCE + 1))).toMatch(/longer than/);
    expect(refusal('\\uDC00')).toMatch(/lone surrogate/);
  });

  it('spells out what RE2 reads differently and keeps the rest', () => {
    expect(ecmaToLinearPattern('')).toBe('(?:)');
    expect(ecmaToLinearPattern('^(a+)+$')).toBe('^(a+)+$');
    expect(ecmaToLinearPattern('a.b')).toBe('a[^\\x{A}\\x{D}\\x{2028}\\x{2029}]b');
    expect(ecmaToLinearPattern('\\u00e9\\u{1F600}\\uD83D\\uDE00')).toBe('\\x{E9}\\x{1F600}\\x{1F600}');
    expect(ecmaToLinearPattern('(?<year>\\d{4})')).toBe('(?:\\d{4})');
    expect(ecmaToLinearPattern('[^]|[]')).toBe('[\\x{0}-\\x{10FFFF}]|[^\\x{0}-\\x{10FFFF}]');
    expect(ecmaToLinearPattern('\\p{sc=Greek}\\P{gc=Lu}')).toBe('\\p{Greek}\\P{Lu}');
    expect(ecmaToLinearPattern('\\s')).toContain('\\x{A0}');
  });
});
