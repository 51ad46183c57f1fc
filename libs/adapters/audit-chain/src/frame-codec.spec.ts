import { SPEC_GENESIS, specFrameDigest } from '@toolgate/testing';
import type { AuditEvent } from '@toolgate/contracts';
import { describe, expect, it } from 'vitest';
import { GENESIS_DIGEST, InvalidAuditEventError, chainPrefix, createFrameDigester, decodeFrameJson, encodeFrame } from './frame-codec.js';

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

  it('refuses unknown members and malformed JSON when decoding', () => {
    expect(() => decodeFrameJson('{"seq":1', 'x')).toThrow(InvalidAuditEventError);
    const frame = encodeFrame(1, GENESIS_DIGEST, event, createFrameDigester());
    expect(() => decodeFrameJson(frame.json.replace('{', '{"evil":1,'), frame.digest)).toThrow(/unknown member "evil"/);
  });
});
