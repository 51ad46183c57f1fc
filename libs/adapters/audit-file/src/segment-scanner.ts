import { chainPrefix, MAX_FRAME_BYTES, type FrameDigester } from './chain/frame-codec.js';
import { keyMismatch, parseHeader, type SegmentHeader } from './segment-format.js';

/** `<length:8 hex>:<digest:64 hex>:` */
const PREFIX_BYTES = 8 + 1 + 64 + 1;
const COLON = 0x3a;
const NEWLINE = 0x0a;
const CLOSE_BRACE = 0x7d;

/** Where the chain stands before a segment: the last seq and digest seen so far. */
export interface ChainHead {
  readonly seq: number;
  readonly digest: string;
}

/** The first fault of a segment. `record` is the 1-based position of the frame in the segment. */
export interface ScanFault {
  /** `key`: the trail is keyed differently than the reader; `damage`: anything else. */
  readonly kind: 'damage' | 'key';
  readonly record?: number;
  readonly seq?: number;
  readonly offset: number;
  readonly reason: string;
}

export interface SegmentScan {
  readonly header?: SegmentHeader;
  /** Complete, verified frames. */
  readonly frames: number;
  /** Byte length up to the end of the last verified frame (or of the header). */
  readonly goodLength: number;
  /** Bytes of a partial final frame (crash mid-write), when `allowTorn`. */
  readonly tornBytes: number;
  /** The chain after this segment's last verified frame. */
  readonly head: ChainHead;
  /** The first seq in this segment (head.seq + 1 of the previous segment). */
  readonly firstSeq: number;
  readonly fault?: ScanFault;
}

export interface ScanOptions {
  /** Segment number the file name says; the header must agree. */
  readonly segment: number;
  /** The chain before this segment. Undefined: trust the header's prev and the first frame's seq (reading a page, not verifying). */
  readonly before?: ChainHead;
  readonly digester: FrameDigester;
  /** Only the final segment of a trail may end in a partial frame. */
  readonly allowTorn: boolean;
  /** Called for every verified frame with the bounds of its JSON in `bytes`. */
  readonly onFrame?: (seq: number, digest: string, jsonStart: number, jsonEnd: number) => void;
}

function hexNibble(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** The 8 lowercase hex digits at `at` as a number, or -1. */
function readLength(bytes: Uint8Array, at: number): number {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const nibble = hexNibble(bytes[at + i] ?? 0);
    if (nibble < 0) return -1;
    value = value * 16 + nibble;
  }
  return value;
}

/** Whether `bytes` at `at` hold exactly the ASCII `text` (no string allocated: this is the hot loop). */
function equalsAscii(bytes: Uint8Array, at: number, text: string): boolean {
  if (at + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

function isLowerHexAt(bytes: Uint8Array, at: number, count: number): boolean {
  for (let i = 0; i < count; i++) if (hexNibble(bytes[at + i] ?? 0) < 0) return false;
  return true;
}

/** Explains a frame whose JSON does not start with the expected seq and prev (the slow path). */
function chainFault(json: string, seq: number, prev: string): string {
  try {
    const parsed = JSON.parse(json) as { seq?: unknown; prev?: unknown };
    if (parsed.seq !== seq) {
      return typeof parsed.seq === 'number'
        ? `seq ${parsed.seq} where seq ${seq} was expected (a record is missing, duplicated or out of order)`
        : 'the frame has no numeric seq';
    }
    if (parsed.prev !== prev) {
      return 'prev is not the digest of the previous record (a record before it was removed, reordered or replaced)';
    }
    return 'the frame JSON does not begin with {"seq":…,"prev":"…", as the format requires';
  } catch {
    return 'the frame JSON is malformed';
  }
}

/**
 * Verifies one segment held in memory: header, then every frame's syntax, digest and place in
 * the chain. Stops at the first fault. This is the hot loop of `verify`, so the chain is checked
 * by comparing the JSON's mandatory `{"seq":N,"prev":"…",` prefix, not by parsing the JSON.
 */
export function scanSegment(bytes: Buffer, options: ScanOptions): SegmentScan {
  const { digester, allowTorn, onFrame } = options;
  const header = parseHeader(bytes);
  const startSeq = (options.before?.seq ?? 0) + 1;
  if (!header.ok) {
    return { frames: 0, goodLength: 0, tornBytes: 0, head: options.before ?? { seq: 0, digest: '' }, firstSeq: startSeq, fault: { kind: 'damage', offset: 0, reason: header.reason } };
  }
  const h = header.header;
  const atHeader = (kind: ScanFault['kind'], reason: string): SegmentScan => ({
    header: h,
    frames: 0,
    goodLength: 0,
    tornBytes: 0,
    head: options.before ?? { seq: 0, digest: h.prev },
    firstSeq: startSeq,
    fault: { kind, offset: 0, reason },
  });
  if (h.segment !== options.segment) return atHeader('damage', `the header names segment ${h.segment}, not ${options.segment}`);
  const mismatch = keyMismatch(h, digester);
  if (mismatch) return atHeader('key', mismatch);
  if (options.before && h.prev !== options.before.digest) {
    return atHeader(
      'damage',
      options.segment === 1
        ? 'the header prev of the first segment is not the genesis value (segments before it are missing)'
        : `the header prev is not the digest that closed segment ${options.segment - 1} (a segment is missing or was replaced)`,
    );
  }

  const end = bytes.length;
  let pos = header.length;
  let seq = options.before ? startSeq : -1;
  let prev = h.prev;
  let record = 0;
  let firstSeq = startSeq;
  let fault: ScanFault | undefined;
  let tornBytes = 0;

  const fail = (reason: string): void => {
    // A frame cut short by a crash has no newline after it (a complete frame always ends in
    // one, and JSON text never contains one); that, and only that, is a torn tail.
    if (allowTorn && bytes.indexOf(NEWLINE, pos) < 0) tornBytes = end - pos;
    else fault = { kind: 'damage', record: record + 1, offset: pos, reason, ...(seq > 0 ? { seq } : {}) };
  };

  while (pos < end) {
    if (end - pos < PREFIX_BYTES) {
      fail('the file ends inside a frame');
      break;
    }
    const length = readLength(bytes, pos);
    if (length < 0 || bytes[pos + 8] !== COLON || bytes[pos + 73] !== COLON) {
      fail('the frame does not start with <length:8 hex>:<digest:64 hex>:');
      break;
    }
    if (!isLowerHexAt(bytes, pos + 9, 64)) {
      fail('the frame digest is not 64 lowercase hex digits');
      break;
    }
    if (length < 2 || length > MAX_FRAME_BYTES) {
      fail(`the frame length ${length} is out of range`);
      break;
    }
    const jsonStart = pos + PREFIX_BYTES;
    const jsonEnd = jsonStart + length;
    if (jsonEnd >= end) {
      fail('the file ends inside a frame');
      break;
    }
    if (bytes[jsonEnd] !== NEWLINE) {
      fail('the frame length does not match its content (no end of line where the frame should end)');
      break;
    }
    const digest = digester.digest(bytes.subarray(jsonStart, jsonEnd));
    if (!equalsAscii(bytes, pos + 9, digest)) {
      fail('the digest does not match the frame (the record was altered)');
      break;
    }
    if (seq < 0) {
      // Reading without a known chain position: take the first frame's seq as it says.
      const match = /^\{"seq":([1-9]\d{0,15}),/.exec(bytes.toString('latin1', jsonStart, Math.min(jsonEnd, jsonStart + 32)));
      seq = match ? Number(match[1]) : 0;
      firstSeq = seq;
    }
    const expected = chainPrefix(seq, prev);
    if (length < expected.length + 1 || !equalsAscii(bytes, jsonStart, expected)) {
      fail(chainFault(bytes.toString('utf8', jsonStart, jsonEnd), seq, prev));
      break;
    }
    if (bytes[jsonEnd - 1] !== CLOSE_BRACE) {
      fail('the frame JSON is not an object');
      break;
    }
    onFrame?.(seq, digest, jsonStart, jsonEnd);
    prev = digest;
    seq += 1;
    record += 1;
    pos = jsonEnd + 1;
  }

  const lastSeq = seq < 0 ? (options.before?.seq ?? 0) : seq - 1;
  return {
    header: h,
    frames: record,
    goodLength: pos,
    tornBytes,
    head: { seq: lastSeq, digest: prev },
    firstSeq,
    ...(fault ? { fault } : {}),
  };
}
