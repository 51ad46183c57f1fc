import type { ApprovalDecision, ApprovalRecord, ApprovalStatus } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { checkDecision, consumeProblem, decideProblem, requireListLimit } from './approval-rules.js';

const EXPIRES = 10_000;
const DIGEST = 'a'.repeat(64);
const record = (status: ApprovalStatus): ApprovalRecord => ({
  id: 'ap-1',
  tenant: 'tenant-a',
  requester: 'worker-1',
  tool: 'bash',
  version: '1.0.0',
  args: {},
  payloadDigest: DIGEST,
  status,
  createdAt: 1000,
  expiresAt: EXPIRES,
});

describe('checkDecision', () => {
  it('checks and names every field; only a literal `true` marks a self-approval', () => {
    expect(checkDecision({ approve: true, by: 'boss', at: 5, selfApproved: false })).toEqual({
      status: 'approved',
      by: 'boss',
      reason: undefined,
      at: 5,
      selfApproved: false,
    });
    const loose = { approve: true, by: 'boss', at: 5, selfApproved: 'yes' } as unknown as ApprovalDecision;
    expect(checkDecision(loose).selfApproved).toBe(false);
    expect(checkDecision({ approve: false, by: 'boss', at: 5, reason: 'no', selfApproved: true })).toEqual({
      status: 'denied',
      by: 'boss',
      reason: 'no',
      at: 5,
      selfApproved: true,
    });
  });

  it('refuses unstorable fields before anything is looked up', () => {
    expect(() => checkDecision({ approve: true, by: 'b\u0000ss', at: 5, selfApproved: false })).toThrow('decision.by must be well-formed Unicode text');
    expect(() => checkDecision({ approve: true, by: 'boss', at: 5, reason: '\uD800', selfApproved: false })).toThrow('decision.reason must be well-formed');
    expect(() => checkDecision({ approve: true, by: 'boss', at: 5.5, selfApproved: false })).toThrow('decision.at must be an integer');
  });
});

describe('decideProblem', () => {
  it('lets a pending approval be decided until it expires, the expiry instant included in "expired"', () => {
    expect(decideProblem(record('pending'), EXPIRES - 1)).toBeUndefined();
    expect(decideProblem(record('pending'), EXPIRES)).toBe('expired');
  });

  it.each(['approved', 'denied', 'consumed'] as const)('refuses a %s approval as not_pending, expired or not', (status) => {
    expect(decideProblem(record(status), 0)).toBe('not_pending');
    expect(decideProblem(record(status), EXPIRES + 1)).toBe('not_pending');
  });
});

describe('consumeProblem', () => {
  it('lets an approved, unexpired approval be consumed once for its own payload', () => {
    expect(consumeProblem(record('approved'), DIGEST, EXPIRES - 1)).toBeUndefined();
  });

  it('answers in order: consumed, not approved, expired, then payload mismatch', () => {
    expect(consumeProblem(record('consumed'), 'other', EXPIRES + 1)).toBe('consumed');
    expect(consumeProblem(record('pending'), 'other', EXPIRES + 1)).toBe('not_approved');
    expect(consumeProblem(record('denied'), DIGEST, 0)).toBe('not_approved');
    expect(consumeProblem(record('approved'), 'other', EXPIRES)).toBe('expired');
    expect(consumeProblem(record('approved'), 'other', EXPIRES - 1)).toBe('payload_mismatch');
  });
});

describe('requireListLimit', () => {
  it('accepts zero and positive integers and refuses anything else with RangeError', () => {
    expect(requireListLimit(0)).toBe(0);
    expect(requireListLimit(50)).toBe(50);
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => requireListLimit(bad)).toThrow(new RangeError('limit must be a non-negative integer'));
    }
  });
});
