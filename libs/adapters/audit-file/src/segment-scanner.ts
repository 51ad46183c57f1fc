import { MAX_FRAME_BYTES, type FrameDigester } from './chain/frame-codec.js';
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

/** Two lowercase hex digits (as a big-endian 16-bit pair) → their byte value, or -1. */
const HEX_PAIR = new Int16Array(65536).fill(-1);
for (let hi = 0; hi < 16; hi++) {
  for (let lo = 0; lo < 16; lo++) HEX_PAIR[('0123456789abcdef'.charCodeAt(hi) << 8) | '0123456789abcdef'.charCodeAt(lo)] = hi * 16 + lo;
}

/** The 8 lowercase hex digits at `at` as a number, or -1. */
function readLength(words: DataView, at: number): number {
  let value = 0;
  for (let i = 0; i < 8; i += 2) {
    const byte = HEX_PAIR[words.getUint16(at + i)] as number;
    if (byte < 0) return -1;
    value = value * 256 + byte;
  }
  return value;
}

/**
 * Whether the 64 hex digits at `at` spell the raw 32-byte digest `raw` (a 'binary' = latin1 string, one
 * char per byte): 32 table lookups instead of 64 character comparisons.
 */
function digestMatches(words: DataView, at: number, raw: string): boolean {
  for (let i = 0; i < 32; i++) if (HEX_PAIR[words.getUint16(at + 2 * i)] !== raw.charCodeAt(i)) return false;
  return true;
}

const SEQ_OPEN = Array.from('{"seq":', (c) => c.charCodeAt(0));
const PREV_OPEN = Array.from(',"prev":"', (c) => c.charCodeAt(0));
const QUOTE = 0x22;
const COMMA = 0x2c;

/**
 * Whether the JSON at `at` starts with `{"seq":<seq>,"prev":"<prev>",`, where prev is either the
 * 64 bytes at `prevAt` (the previous frame's verified digest field) or, for a segment's first
 * frame, the string `prevText`. Compares bytes in place: no string is built per frame.
 */
function startsWithChain(bytes: Uint8Array, words: DataView, at: number, end: number, seq: number, prevAt: number, prevText: string): boolean {
  if (end - at < SEQ_OPEN.length + PREV_OPEN.length + 64 + 3) return false;
  for (let i = 0; i < SEQ_OPEN.length; i++) if (bytes[at + i] !== SEQ_OPEN[i]) return false;
  let p = at + SEQ_OPEN.length;
  // Canonical decimal: no leading zero (seq >= 1), at most 16 digits.
  if (bytes[p] === 0x30) return false;
  let value = 0;
  const digitsEnd = Math.min(end, p + 16);
  while (p < digitsEnd) {
    const c = bytes[p] as number;
    if (c < 0x30 || c > 0x39) break;
    value = value * 10 + (c - 0x30);
    p += 1;
  }
  if (value !== seq) return false;
  for (let i = 0; i < PREV_OPEN.length; i++) if (bytes[p + i] !== PREV_OPEN[i]) return false;
  p += PREV_OPEN.length;
  if (prevAt >= 0) {
    // Four bytes at a time: this comparison runs for every frame.
    for (let i = 0; i < 64; i += 4) if (words.getUint32(p + i) !== words.getUint32(prevAt + i)) return false;
  } else {
    for (let i = 0; i < 64; i++) if (bytes[p + i] !== prevText.charCodeAt(i)) return false;
  }
  return bytes[p + 64] === QUOTE && bytes[p + 65] === COMMA;
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
  const words = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = header.length;
  let seq = options.before ? startSeq : -1;
  let prev = h.prev;
  // Where the previous frame's digest field is in `bytes` (-1 before the first frame: use `prev`).
  let prevAt = -1;
  let record = 0;
  let firstSeq = startSeq;
  // Nothing in this loop is captured by a closure, so V8 keeps these in registers: this loop is
  // what bounds verify throughput.
  let failure: string | undefined;
  while (pos < end) {
    if (end - pos < PREFIX_BYTES) {
      failure = 'the file ends inside a frame';
      break;
    }
    const length = readLength(words, pos);
    if (length < 0 || bytes[pos + 8] !== COLON || bytes[pos + 73] !== COLON) {
      failure = 'the frame does not start with <length:8 hex>:<digest:64 hex>:';
      break;
    }
    if (length < 2 || length > MAX_FRAME_BYTES) {
      failure = `the frame length ${length} is out of range`;
      break;
    }
    const jsonStart = pos + PREFIX_BYTES;
    const jsonEnd = jsonStart + length;
    if (jsonEnd >= end) {
      failure = 'the file ends inside a frame';
      break;
    }
    if (bytes[jsonEnd] !== NEWLINE) {
      failure = 'the frame length does not match its content (no end of line where the frame should end)';
      break;
    }
    const raw = digester.raw(bytes.subarray(jsonStart, jsonEnd));
    if (!digestMatches(words, pos + 9, raw)) {
      failure = isLowerHexAt(bytes, pos + 9, 64)
        ? 'the digest does not match the frame (the record was altered)'
        : 'the frame digest is not 64 lowercase hex digits';
      break;
    }
    if (seq < 0) {
      // Reading without a known chain position: take the first frame's seq as it says.
      const match = /^\{"seq":([1-9]\d{0,15}),/.exec(bytes.toString('latin1', jsonStart, Math.min(jsonEnd, jsonStart + 32)));
      seq = match ? Number(match[1]) : 0;
      firstSeq = seq;
    }
    if (!startsWithChain(bytes, words, jsonStart, jsonEnd, seq, prevAt, prev)) {
      failure = chainFault(bytes.toString('utf8', jsonStart, jsonEnd), seq, prevAt >= 0 ? bytes.toString('latin1', prevAt, prevAt + 64) : prev);
      break;
    }
    if (bytes[jsonEnd - 1] !== CLOSE_BRACE) {
      failure = 'the frame JSON is not an object';
      break;
    }
    if (onFrame) onFrame(seq, bytes.toString('latin1', pos + 9, pos + 73), jsonStart, jsonEnd);
    prevAt = pos + 9;
    seq += 1;
    record += 1;
    pos = jsonEnd + 1;
  }

  let fault: ScanFault | undefined;
  let tornBytes = 0;
  if (failure !== undefined) {
    // A frame cut short by a crash has no newline after it (a complete frame always ends in
    // one, and JSON text never contains one); that, and only that, is a torn tail.
    if (allowTorn && bytes.indexOf(NEWLINE, pos) < 0) tornBytes = end - pos;
    else fault = { kind: 'damage', record: record + 1, offset: pos, reason: failure, ...(seq > 0 ? { seq } : {}) };
  }

  if (prevAt >= 0) prev = bytes.toString('latin1', prevAt, prevAt + 64);
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
