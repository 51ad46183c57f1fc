import type { DigestAlgorithm, FrameDigester } from '@toolgate/adapter-kit-audit';

/** Format name and version written at the start of every segment. */
export const FORMAT_TAG = 'toolgate-audit/1';

/** Segment files are `audit-<number, zero-padded to at least 8 digits>.log`, numbered from 1. */
export const SEGMENT_FILE = /^audit-(\d{8,})\.log$/;
/** A segment being created: header written and synced, not yet renamed into place. */
export const SEGMENT_TEMP_FILE = /^audit-(\d{8,})\.log\.tmp$/;
/** The header line never exceeds this (it is ~120 bytes); a longer first line is damage. */
export const MAX_HEADER_BYTES = 256;

export function segmentFileName(segment: number): string {
  return `audit-${String(segment).padStart(8, '0')}.log`;
}

/** The first line of a segment. */
export interface SegmentHeader {
  readonly segment: number;
  readonly algorithm: DigestAlgorithm;
  /** Key id of the HMAC key (only with `hmac-sha256`). */
  readonly keyId?: string;
  /** Digest of the last frame before this segment (64 zeros for segment 1). */
  readonly prev: string;
}

/**
 * `toolgate-audit/1 segment=00000002 alg=sha256 prev=<64 hex>\n`, or with
 * `alg=hmac-sha256 key=<16 hex>` for a keyed trail.
 */
export function formatHeader(header: SegmentHeader): string {
  const alg = header.algorithm === 'hmac-sha256' ? `alg=hmac-sha256 key=${header.keyId}` : 'alg=sha256';
  return `${FORMAT_TAG} segment=${String(header.segment).padStart(8, '0')} ${alg} prev=${header.prev}\n`;
}

const HEADER_LINE = /^toolgate-audit\/1 segment=(\d{8,}) alg=(sha256|hmac-sha256)(?: key=([0-9a-f]{16}))? prev=([0-9a-f]{64})$/;

export type HeaderParse =
  | { readonly ok: true; readonly header: SegmentHeader; readonly length: number }
  | { readonly ok: false; readonly reason: string };

/** Parses the header line at the start of `bytes`; `length` includes its newline. */
export function parseHeader(bytes: Uint8Array): HeaderParse {
  const limit = Math.min(bytes.length, MAX_HEADER_BYTES);
  let newline = -1;
  for (let i = 0; i < limit; i++) {
    if (bytes[i] === 0x0a) {
      newline = i;
      break;
    }
  }
  if (newline < 0) {
    return { ok: false, reason: bytes.length === 0 ? 'the segment is empty (no header line)' : 'the header line is damaged or truncated (no end of line)' };
  }
  const line = Buffer.from(bytes.buffer, bytes.byteOffset, newline).toString('latin1');
  const match = HEADER_LINE.exec(line);
  if (!match) {
    return {
      ok: false,
      reason: line.startsWith('toolgate-audit/')
        ? `the header line is damaged or of an unsupported version ("${line.slice(0, 40).replace(/[^\x20-\x7e]/g, '?')}")`
        : 'the header line is damaged (it does not start with toolgate-audit/1)',
    };
  }
  const [, number, algorithm, keyId, prev] = match as unknown as [string, string, DigestAlgorithm, string | undefined, string];
  if ((algorithm === 'hmac-sha256') !== (keyId !== undefined)) {
    return { ok: false, reason: 'the header line is damaged (a key id goes with alg=hmac-sha256 and only with it)' };
  }
  const segment = Number(number);
  if (!Number.isSafeInteger(segment) || String(segment).padStart(8, '0') !== number) {
    return { ok: false, reason: 'the header line is damaged (bad segment number)' };
  }
  return { ok: true, header: { segment, algorithm, ...(keyId ? { keyId } : {}), prev }, length: newline + 1 };
}

/** Why a trail's digests cannot be checked with `digester`, or undefined when they can. */
export function keyMismatch(header: SegmentHeader, digester: FrameDigester): string | undefined {
  if (header.algorithm === 'hmac-sha256' && digester.algorithm === 'sha256') {
    return `the trail is keyed with HMAC-SHA-256 (key id ${header.keyId}); the HMAC key is needed to verify or extend it`;
  }
  if (header.algorithm === 'sha256' && digester.algorithm === 'hmac-sha256') {
    return 'the trail uses plain SHA-256 but an HMAC key was given; a trail keeps the digest it was created with';
  }
  if (header.algorithm === 'hmac-sha256' && header.keyId !== digester.keyId) {
    return `the HMAC key given (key id ${digester.keyId}) is not the trail's key (key id ${header.keyId})`;
  }
  return undefined;
}
