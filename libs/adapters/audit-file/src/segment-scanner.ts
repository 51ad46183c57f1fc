import { FRAME_PREFIX_BYTES as PREFIX_BYTES, MAX_FRAME_BYTES, type FrameDigester } from '@toolgate/adapter-kit-audit';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { keyMismatch, parseHeader, type SegmentHeader } from './segment-format.js';

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

/** Where a scan stands between two runs of frames (across chunks of one segment). */
interface ScanState {
  /** Seq the next frame must have; -1 until the first frame when reading without a chain position. */
  seq: number;
  /** Digest of the last verified frame (or the header's prev). */
  prev: string;
  /** Verified frames so far in this segment. */
  record: number;
  firstSeq: number;
}

interface RunResult {
  /** Index after the last verified frame. */
  readonly pos: number;
  /** Why the frame at `pos` is bad; undefined when the run ended cleanly or needs more bytes. */
  readonly failure?: string;
  /** The frame at `pos` continues past `end` (only when not `final`). */
  readonly needMore: boolean;
}

/**
 * Verifies the complete frames in `bytes[start, end)`, advancing `state`. With `final` false, a
 * frame that runs past `end` stops the run (`needMore`) instead of failing it.
 *
 * This is the hot loop of `verify`: nothing in it is captured by a closure (V8 keeps the locals
 * in registers), the digest is compared through a hex-pair table, and the chain is checked by
 * comparing the JSON's mandatory `{"seq":N,"prev":"…",` prefix in place, never by parsing JSON.
 */
function scanFrames(
  bytes: Buffer,
  words: DataView,
  start: number,
  end: number,
  state: ScanState,
  digester: FrameDigester,
  onFrame: ScanOptions['onFrame'],
  final: boolean,
): RunResult {
  let pos = start;
  let seq = state.seq;
  const prevText = state.prev;
  // Where the previous frame's digest field is in `bytes` (-1 before this run's first frame).
  let prevAt = -1;
  let record = state.record;
  let failure: string | undefined;
  let needMore = false;
  while (pos < end) {
    if (end - pos < PREFIX_BYTES) {
      if (!final) needMore = true;
      else failure = 'the file ends inside a frame';
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
      if (!final) needMore = true;
      else failure = 'the file ends inside a frame';
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
      state.firstSeq = seq;
    }
    if (!startsWithChain(bytes, words, jsonStart, jsonEnd, seq, prevAt, prevText)) {
      failure = chainFault(bytes.toString('utf8', jsonStart, jsonEnd), seq, prevAt >= 0 ? bytes.toString('latin1', prevAt, prevAt + 64) : prevText);
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
  state.seq = seq;
  state.record = record;
  if (prevAt >= 0) state.prev = bytes.toString('latin1', prevAt, prevAt + 64);
  return failure === undefined ? { pos, needMore } : { pos, failure, needMore: false };
}

type HeaderCheck = { readonly ok: true; readonly header: SegmentHeader; readonly length: number } | { readonly ok: false; readonly scan: SegmentScan };

/** Parses the header at the start of `bytes` and checks it against the options and the chain. */
function checkHeader(bytes: Uint8Array, options: ScanOptions): HeaderCheck {
  const parsed = parseHeader(bytes);
  const startSeq = (options.before?.seq ?? 0) + 1;
  if (!parsed.ok) {
    return {
      ok: false,
      scan: { frames: 0, goodLength: 0, tornBytes: 0, head: options.before ?? { seq: 0, digest: '' }, firstSeq: startSeq, fault: { kind: 'damage', offset: 0, reason: parsed.reason } },
    };
  }
  const h = parsed.header;
  const atHeader = (kind: ScanFault['kind'], reason: string): HeaderCheck => ({
    ok: false,
    scan: { header: h, frames: 0, goodLength: 0, tornBytes: 0, head: options.before ?? { seq: 0, digest: h.prev }, firstSeq: startSeq, fault: { kind, offset: 0, reason } },
  });
  if (h.segment !== options.segment) return atHeader('damage', `the header names segment ${h.segment}, not ${options.segment}`);
  const mismatch = keyMismatch(h, options.digester);
  if (mismatch) return atHeader('key', mismatch);
  if (options.before && h.prev !== options.before.digest) {
    return atHeader(
      'damage',
      options.segment === 1
        ? 'the header prev of the first segment is not the genesis value (segments before it are missing)'
        : `the header prev is not the digest that closed segment ${options.segment - 1} (a segment is missing or was replaced)`,
    );
  }
  return { ok: true, header: h, length: parsed.length };
}

/** The scan result once the frames are done: a failure at the end is a torn tail or a fault. */
function finish(
  header: SegmentHeader,
  options: ScanOptions,
  state: ScanState,
  run: RunResult,
  tail: { readonly bytes: Buffer; readonly end: number; readonly base: number },
): SegmentScan {
  let fault: ScanFault | undefined;
  let tornBytes = 0;
  if (run.failure !== undefined) {
    // A frame cut short by a crash has no newline after it (a complete frame always ends in
    // one, and JSON text never contains one); that, and only that, is a torn tail.
    const newline = tail.bytes.indexOf(NEWLINE, run.pos);
    if (options.allowTorn && (newline < 0 || newline >= tail.end)) tornBytes = tail.end - run.pos;
    else fault = { kind: 'damage', record: state.record + 1, offset: tail.base + run.pos, reason: run.failure, ...(state.seq > 0 ? { seq: state.seq } : {}) };
  }
  const lastSeq = state.seq < 0 ? (options.before?.seq ?? 0) : state.seq - 1;
  return {
    header,
    frames: state.record,
    goodLength: tail.base + run.pos,
    tornBytes,
    head: { seq: lastSeq, digest: state.prev },
    firstSeq: state.firstSeq,
    ...(fault ? { fault } : {}),
  };
}

/**
 * Verifies one segment held in memory: header, then every frame's syntax, digest and place in
 * the chain. Stops at the first fault.
 */
export function scanSegment(bytes: Buffer, options: ScanOptions): SegmentScan {
  const checked = checkHeader(bytes, options);
  if (!checked.ok) return checked.scan;
  const state: ScanState = {
    seq: options.before ? options.before.seq + 1 : -1,
    prev: checked.header.prev,
    record: 0,
    firstSeq: (options.before?.seq ?? 0) + 1,
  };
  const words = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const run = scanFrames(bytes, words, checked.length, bytes.length, state, options.digester, options.onFrame, true);
  return finish(checked.header, options, state, run, { bytes, end: bytes.length, base: 0 });
}

/** Bytes read per chunk when a segment is verified from its file. */
const CHUNK_BYTES = 1024 * 1024;
/** Room in front of each chunk for the unfinished frame carried over from the chunk before. */
const CARRY_BYTES = PREFIX_BYTES + MAX_FRAME_BYTES + 1;

/**
 * Verifies a segment file in 1 MiB chunks, reading the next chunk on the thread pool while this
 * one is checked: memory stays bounded whatever the segment size, and each chunk is hashed while
 * it is still in the CPU cache. `length` limits the scan to what a running writer committed.
 * Opens without following symbolic links, and only regular files.
 */
export async function scanSegmentFile(path: string, name: string, options: ScanOptions & { readonly length?: number }): Promise<{ scan: SegmentScan; size: number }> {
  const handle = await openSegmentForRead(path, name);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new UnsafeSegmentError(`${name} is not a regular file`);
    const size = options.length === undefined ? stat.size : Math.min(options.length, stat.size);
    const buffers = [Buffer.allocUnsafe(CARRY_BYTES + CHUNK_BYTES), Buffer.allocUnsafe(CARRY_BYTES + CHUNK_BYTES)] as const;
    const views = buffers.map((b) => new DataView(b.buffer, b.byteOffset, b.byteLength));
    const readChunk = async (index: number, into: Buffer): Promise<number> => {
      const from = index * CHUNK_BYTES;
      const want = Math.max(0, Math.min(CHUNK_BYTES, size - from));
      let got = 0;
      while (got < want) {
        const { bytesRead } = await handle.read(into, CARRY_BYTES + got, want - got, from + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got;
    };

    let index = 0;
    let current = 0;
    let pending = readChunk(0, buffers[0]);
    let carryFrom = 0;
    let carryLength = 0;
    let header: SegmentHeader | undefined;
    let state: ScanState | undefined;
    for (;;) {
      const got = await pending;
      const bytes = buffers[current] as Buffer;
      const final = (index + 1) * CHUNK_BYTES >= size || got < CHUNK_BYTES;
      // Carry the unfinished frame in front of this chunk, then the other buffer is free to refill.
      if (carryLength > 0) (buffers[1 - current] as Buffer).copy(bytes, CARRY_BYTES - carryLength, carryFrom, carryFrom + carryLength);
      if (!final) pending = readChunk(index + 1, buffers[1 - current] as Buffer);
      const start = CARRY_BYTES - carryLength;
      const end = CARRY_BYTES + got;
      // File offset of bytes[0]: the chunk starts at index * CHUNK_BYTES, at CARRY_BYTES in the buffer.
      const base = index * CHUNK_BYTES - CARRY_BYTES;
      let from = start;
      if (!header || !state) {
        const checked = checkHeader(bytes.subarray(start, end), options);
        if (!checked.ok) return { scan: checked.scan, size };
        header = checked.header;
        state = { seq: options.before ? options.before.seq + 1 : -1, prev: header.prev, record: 0, firstSeq: (options.before?.seq ?? 0) + 1 };
        from = start + checked.length;
      }
      const run = scanFrames(bytes, views[current] as DataView, from, end, state, options.digester, options.onFrame, final);
      if (final || run.failure !== undefined) {
        if (!final) await pending.catch(() => undefined);
        return { scan: finish(header, options, state, run, { bytes, end, base }), size };
      }
      carryFrom = run.pos;
      carryLength = end - run.pos;
      current = 1 - current;
      index += 1;
    }
  } finally {
    await handle.close();
  }
}

/** A segment file that is not a plain file: refused, never followed or read. */
export class UnsafeSegmentError extends Error {
  override readonly name = 'UnsafeSegmentError';
}

/** Opens a segment read-only without following a symbolic link; O_NONBLOCK so a FIFO cannot hang us. */
export async function openSegmentForRead(path: string, name: string): Promise<FileHandle> {
  try {
    return await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') throw new UnsafeSegmentError(`${name} is a symbolic link; refusing to follow it`);
    if (code === 'ENOENT') throw new UnsafeSegmentError(`${name} disappeared while it was being read`);
    throw new UnsafeSegmentError(`${name} cannot be opened (${code ?? 'error'})`);
  }
}
