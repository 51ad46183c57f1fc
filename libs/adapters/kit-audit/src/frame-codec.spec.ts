import { SPEC_GENESIS, specFrameDigest } from '@toolgate/testing';
import { InvalidAuditEventError, type AuditEvent } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { GENESIS_DIGEST, chainPrefix, createFrameDigester, decodeFrameJson, encodeFrame } from './frame-codec.js';

const event: AuditEvent = {
  event: 'succeeded',
  ts: '2026-11-30T10:00:00.000Z',
  tenant: 'acme',
  principal: 'alice',
  tool: 'calculator',
  version: '1.0.0',
  durationMs: 3,
  argsDigest: `sha256:${'a'.repeat(64)}`,
  callId: 'c-1',
};

/** The codec agrees with the independent reference written from docs/audit-format.md. */
describe('frame codec', () => {
  it('frames `<length:8 hex>:<digest:64 hex>:<json>\\n` with the digest the specification defines', () => {
    const frame = encodeFrame(1, GENESIS_DIGEST, event, createFrameDigester());
    const text = frame.line.toString('utf8');
    expect(text).toMatch(/^[0-9a-f]{8}:[0-9a-f]{64}:\{.*\}\n$/);
    expect(Number.parseInt(text.slice(0, 8), 16)).toBe(Buffer.byteLength(frame.json));
    expect(GENESIS_DIGEST).toBe(SPEC_GENESIS);
    const record = decodeFrameJson(frame.json, frame.digest);
    expect(frame.digest).toBe(specFrameDigest(record));
    expect(frame.json.startsWith(chainPrefix(1, GENESIS_DIGEST))).toBe(true);
  });

  it('keys frames with HMAC-SHA-256 when given a key, so the digest depends on it', () => {
    const key = 'k'.repeat(32);
    const keyed = encodeFrame(1, GENESIS_DIGEST, event, createFrameDigester(key));
    const plain = encodeFrame(1, GENESIS_DIGEST, event, createFrameDigester());
    expect(keyed.json).toBe(plain.json);
    expect(keyed.digest).not.toBe(plain.digest);
    expect(keyed.digest).toBe(specFrameDigest(decodeFrameJson(keyed.json, keyed.digest), key));
  });

  it('redacts secrets in any field before hashing', () => {
    const frame = encodeFrame(2, 'b'.repeat(64), { ...event, detail: 'failed with Authorization: Bearer abc.def.ghi' }, createFrameDigester());
    expect(frame.json).not.toContain('abc.def.ghi');
  });

  it('frames the approval kinds, with approvalId after every older member (ADR 0020)', () => {
    const decided: AuditEvent = {
      event: 'approval_decided',
      ts: '2026-11-30T10:00:01.000Z',
      tenant: 'acme',
      principal: 'carol',
      tool: 'deploy',
      version: '1.0.0',
      argsDigest: `sha256:${'b'.repeat(64)}`,
      approvedBy: 'carol',
      approvalReason: 'change window',
      detail: 'approved',
      approvalId: 'ap-1',
    };
    const frame = encodeFrame(2, 'c'.repeat(64), decided, createFrameDigester());
    expect(frame.json.endsWith(',"detail":"approved","approvalId":"ap-1"}')).toBe(true);
    const record = decodeFrameJson(frame.json, frame.digest);
    expect(record).toMatchObject({ event: 'approval_decided', approvalId: 'ap-1', approvedBy: 'carol' });
    expect(frame.digest).toBe(specFrameDigest(record));
    expect(() => encodeFrame(1, GENESIS_DIGEST, { ...event, event: 'approval_revoked' as never }, createFrameDigester())).toThrow(/approval_requested, approval_decided/);
  });

  it('frames tool_accepted with both digests intact (ADR 0060): a definition digest is not taken for a secret', () => {
    const accepted: AuditEvent = {
      event: 'tool_accepted',
      ts: '2026-12-01T10:00:00.000Z',
      tenant: 'acme',
      principal: 'root',
      tool: 'files__read_file',
      version: '1.0.0',
      detail: `accepted sha256:${'1f'.repeat(32)} in place of sha256:${'e0'.repeat(32)}`,
    };
    const frame = encodeFrame(4, 'e'.repeat(64), accepted, createFrameDigester());
    const record = decodeFrameJson(frame.json, frame.digest);
    expect(record).toMatchObject(accepted);
    expect(frame.digest).toBe(specFrameDigest(record));
  });

  it('frames the standing grants a call used as member 19, after approvalId (ADR 0022)', () => {
    const authorized: AuditEvent = { ...event, event: 'authorized', gate: 'audit', grants: ['exec:*', 'network:api.example.com'] };
    const frame = encodeFrame(3, 'd'.repeat(64), authorized, createFrameDigester());
    expect(frame.json.endsWith(',"callId":"c-1","grants":["exec:*","network:api.example.com"]}')).toBe(true);
    const record = decodeFrameJson(frame.json, frame.digest);
    expect(record.grants).toEqual(['exec:*', 'network:api.example.com']);
    expect(frame.digest).toBe(specFrameDigest(record));
    // A grants member anywhere but last is not what a writer wrote.
    const moved = frame.json.replace(',"grants":["exec:*","network:api.example.com"]', '').replace('"ts":', '"grants":["exec:*"],"ts":');
    expect(() => decodeFrameJson(moved, frame.digest)).toThrow(/canonical v1 form/);
    expect(() => encodeFrame(1, GENESIS_DIGEST, { ...event, grants: 'exec:*' as never }, createFrameDigester())).toThrow(/grants must be an array of strings/);
    expect(() => encodeFrame(1, GENESIS_DIGEST, { ...event, grants: [{ type: 'exec', scope: '*' }] as never }, createFrameDigester())).toThrow(/grants must be an array of strings/);
  });

  it('redacts and caps grants like every other string member', () => {
    const many = Array.from({ length: 40 }, (_, i) => `network:host-${i}.example`);
    const frame = encodeFrame(1, GENESIS_DIGEST, { ...event, grants: ['env:token=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB', ...many] }, createFrameDigester());
    const record = decodeFrameJson(frame.json, frame.digest);
    expect(frame.json).not.toContain('ghp_0123456789');
    expect(record.grants).toHaveLength(33);
    expect(record.grants?.[32]).toBe('9 more grants…[truncated]');
  });

  it('frames an event without the later members byte for byte as before (docs/audit-format.md §12)', () => {
    const first: AuditEvent = {
      ts: '2025-03-01T12:00:00.000Z',
      tenant: 'acme',
      principal: 'alice',
      tool: 'web_search',
      version: '1.0.0',
      event: 'authorized',
      gate: 'audit',
      argsDigest: 'sha256:3f2c0d4c8b1e6f7a9d5b2c4e6f8a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1f2a',
      callId: 'c-1',
    };
    expect(encodeFrame(1, GENESIS_DIGEST, first, createFrameDigester()).digest).toBe('2af92de99be3550fe7ec6bd8f5b68218ac7be4d28d41e402ceca24e3e66f31fa');
  });

  it('refuses unknown members and malformed JSON when decoding', () => {
    expect(() => decodeFrameJson('{"seq":1', 'x')).toThrow(InvalidAuditEventError);
    const frame = encodeFrame(1, GENESIS_DIGEST, event, createFrameDigester());
    expect(() => decodeFrameJson(frame.json.replace('{', '{"evil":1,'), frame.digest)).toThrow(/unknown member "evil"/);
  });
});
