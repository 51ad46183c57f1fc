import { describe, expect, it } from 'vitest';
import {
  EXECUTOR_TIER_TRAITS,
  EXECUTOR_TIERS,
  isLongLivedTier,
  isProcessTier,
  LONG_LIVED_TIERS,
  PROCESS_TIERS,
  type ExecutorTier,
  type LongLivedTier,
  type ProcessTier,
} from './executor-tiers.js';

describe('the one tier definition', () => {
  it('lists the tiers from least to most isolated, each with its traits', () => {
    expect(EXECUTOR_TIERS).toEqual(['inprocess', 'unisolated', 'bwrap', 'container']);
    expect(Object.keys(EXECUTOR_TIER_TRAITS).sort()).toEqual([...EXECUTOR_TIERS].sort());
  });

  it('derives the process tiers: every tier but tier 0, in the same order', () => {
    expect(PROCESS_TIERS).toEqual(['unisolated', 'bwrap', 'container']);
    for (const tier of EXECUTOR_TIERS) expect(PROCESS_TIERS.includes(tier as ProcessTier)).toBe(EXECUTOR_TIER_TRAITS[tier].runsProcesses);
  });

  it('derives the tiers that can host a long-lived process, all of them process tiers', () => {
    expect(LONG_LIVED_TIERS).toEqual(['unisolated', 'bwrap']);
    for (const tier of LONG_LIVED_TIERS) expect(isProcessTier(tier)).toBe(true);
  });

  it('keeps the derived types in step with the lists', () => {
    // Compile-time: each list's type is exactly its union (a tier added to the traits shows up here).
    const processTiers: readonly ProcessTier[] = ['unisolated', 'bwrap', 'container'];
    const longLived: readonly LongLivedTier[] = ['unisolated', 'bwrap'];
    const all: readonly ExecutorTier[] = EXECUTOR_TIERS;
    expect([processTiers, longLived, all.length]).toEqual([PROCESS_TIERS, LONG_LIVED_TIERS, 4]);
  });

  describe('guards refuse what is not a tier of their kind', () => {
    const notTiers = ['', 'inprocess', 'subprocess', 'BWRAP', ' bwrap', 'bwrap ', 'container\0', 'constructor', '__proto__', 'toString', 'unisolated,bwrap'];
    it.each(notTiers)('isProcessTier(%j) is false', (value) => {
      expect(isProcessTier(value)).toBe(false);
    });
    it.each([...notTiers, 'container'])('isLongLivedTier(%j) is false', (value) => {
      expect(isLongLivedTier(value)).toBe(false);
    });
    it('accepts exactly the listed names', () => {
      expect(EXECUTOR_TIERS.filter(isProcessTier)).toEqual(PROCESS_TIERS);
      expect(EXECUTOR_TIERS.filter(isLongLivedTier)).toEqual(LONG_LIVED_TIERS);
    });
  });

  // These lists decide which tiers configuration may name; no importer may widen them.
  it('cannot be changed at run time by an importer', () => {
    for (const list of [EXECUTOR_TIERS, PROCESS_TIERS, LONG_LIVED_TIERS]) {
      expect(() => (list as string[]).push('host')).toThrow(TypeError);
      expect(() => ((list as string[])[0] = 'host')).toThrow(TypeError);
    }
    expect(() => ((EXECUTOR_TIER_TRAITS.container as { hostsLongLived: boolean }).hostsLongLived = true)).toThrow(TypeError);
    expect(() => ((EXECUTOR_TIER_TRAITS as Record<string, unknown>)['host'] = { runsProcesses: true, hostsLongLived: true })).toThrow(TypeError);
    expect(isLongLivedTier('container')).toBe(false);
    expect(isProcessTier('host')).toBe(false);
  });
});
