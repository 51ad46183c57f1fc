import { describe, expect, it } from 'vitest';
import { formatLine, formatSummary, formatTarget, isMet, target } from './targets.js';

describe('bench targets: a missed one stands out, a met one does not', () => {
  it.each([
    ['reaches an at-least goal', target('64 writers vs 1 writer', 12.34, '>=', 10, 'x', 1), true, '  met     64 writers vs 1 writer: 12.3x (target >= 10.0x)'],
    ['sits exactly on an at-least goal', target('verify ratio', 0.7, '>=', 0.7), true, '  met     verify ratio: 0.70 (target >= 0.70)'],
    ['falls short of an at-least goal', target('64 writers vs 1 writer', 6.1, '>=', 10, 'x', 1), false, '  MISSED  64 writers vs 1 writer: 6.1x (target >= 10.0x)  <-- MISSED'],
    ['stays under a below goal', target('overhead at p50', 18.25, '<', 25, ' µs', 1), true, '  met     overhead at p50: 18.3 µs (target < 25.0 µs)'],
    ['sits exactly on a strictly-below goal', target('overhead at p50', 25, '<', 25, ' µs', 1), false, '  MISSED  overhead at p50: 25.0 µs (target < 25.0 µs)  <-- MISSED'],
    ['sits exactly on an at-most goal', target('worst ratio', 1.5, '<=', 1.5, '×'), true, '  met     worst ratio: 1.50× (target <= 1.50×)'],
    ['exceeds an at-most goal', target('worst ratio', 2.01, '<=', 1.5, '×'), false, '  MISSED  worst ratio: 2.01× (target <= 1.50×)  <-- MISSED'],
    // A division by a zero baseline must not pass as a met target.
    ['measured NaN', target('ratio', Number.NaN, '>=', 0.5), false, '  MISSED  ratio: NaN (target >= 0.50)  <-- MISSED'],
    ['measured Infinity against an at-most goal', target('ratio', Number.POSITIVE_INFINITY, '<=', 1.5), false, '  MISSED  ratio: Infinity (target <= 1.50)  <-- MISSED'],
  ])('%s', (_name, check, met, line) => {
    expect(isMet(check)).toBe(met);
    expect(formatTarget(check)).toBe(line);
    expect(formatLine(check)).toBe(line);
    // MISSED in capitals only when missed, so a skim or a grep finds every miss and nothing else.
    expect(/MISSED/.test(line)).toBe(!met);
  });

  it('prints plain lines as they are', () => {
    expect(formatLine('audit: verify 900 MB/s')).toBe('audit: verify 900 MB/s');
  });

  it('closes with a count of met and missed targets, naming the missed with their bench', () => {
    const met = target('toolgate / bare', 0.8, '>=', 0.5);
    const missedA = target('64 writers vs 1 writer', 3, '>=', 10, 'x');
    const missedB = target('overhead at p50', 40, '<', 25, ' µs');
    expect(formatSummary([{ bench: 'http', check: met }])).toBe('targets: all 1 met');
    expect(
      formatSummary([
        { bench: 'http', check: met },
        { bench: 'audit', check: missedA },
        { bench: 'pipeline', check: missedB },
      ]),
    ).toBe('targets: 1 met, 2 MISSED (audit: 64 writers vs 1 writer; pipeline: overhead at p50)');
    expect(formatSummary([])).toBe('targets: none checked');
    expect(formatSummary([{ bench: 'http', check: met }], ['tiers'])).toBe('targets: all 1 met; 1 bench(es) FAILED to run (tiers)');
  });
});
