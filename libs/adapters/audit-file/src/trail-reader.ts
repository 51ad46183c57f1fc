import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditReport } from '@toolgate/contracts';
import { GENESIS_DIGEST, type FrameDigester } from '@toolgate/adapter-kit-audit';
import type { SegmentHeader } from './segment-format.js';
import { SEGMENT_FILE, SEGMENT_TEMP_FILE, segmentFileName } from './segment-format.js';
import { openSegmentForRead, scanSegmentFile, UnsafeSegmentError, type ChainHead, type ScanFault } from './segment-scanner.js';

export { UnsafeSegmentError };

/** A segment file of a trail. */
export interface SegmentEntry {
  readonly segment: number;
  readonly name: string;
}

/** The files of a trail directory: segments in order, and leftovers of an interrupted rotation. */
export interface TrailListing {
  readonly segments: readonly SegmentEntry[];
  readonly temps: readonly string[];
  /** Why the listing itself is broken (a gap in the numbering). */
  readonly fault?: { readonly segment: string; readonly reason: string };
}

/** Lists segment files; numbering must run 1, 2, … without gaps. */
export async function listTrail(dir: string): Promise<TrailListing> {
  const names = await readdir(dir);
  const segments: SegmentEntry[] = [];
  const temps: string[] = [];
  for (const name of names) {
    const segment = SEGMENT_FILE.exec(name);
    if (segment) segments.push({ segment: Number(segment[1]), name });
    else if (SEGMENT_TEMP_FILE.test(name)) temps.push(name);
  }
  segments.sort((a, b) => a.segment - b.segment);
  for (let i = 0; i < segments.length; i++) {
    const entry = segments[i] as SegmentEntry;
    if (entry.segment !== i + 1 || entry.name !== segmentFileName(entry.segment)) {
      const missing = segmentFileName(i + 1);
      return {
        segments,
        temps,
        fault: {
          segment: missing,
          reason:
            entry.segment === i
              ? `two files claim segment ${entry.segment}`
              : `segment ${missing} is missing (the trail jumps to ${entry.name}): segments were removed`,
        },
      };
    }
  }
  return { segments, temps };
}

/**
 * Reads a segment without following a symbolic link (O_NOFOLLOW) and only if it is a regular
 * file, up to `length` bytes when given (the committed length of a segment being written).
 */
export async function readSegmentFile(path: string, name: string, length?: number): Promise<Buffer> {
  const handle = await openSegmentForRead(path, name);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new UnsafeSegmentError(`${name} is not a regular file`);
    const size = length === undefined ? stat.size : Math.min(length, stat.size);
    const buffer = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const { bytesRead } = await handle.read(buffer, read, size - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return read === size ? buffer : buffer.subarray(0, read);
  } finally {
    await handle.close();
  }
}

/** What is known about one verified segment. */
export interface SegmentSummary {
  readonly segment: number;
  readonly name: string;
  readonly header?: SegmentHeader;
  readonly firstSeq: number;
  /** Seq of the last frame (firstSeq - 1 when the segment holds none). */
  readonly lastSeq: number;
  readonly goodLength: number;
}

export interface TrailVerification {
  readonly report: AuditReport;
  /** The chain after the last verified frame. */
  readonly head: ChainHead;
  readonly segments: readonly SegmentSummary[];
  readonly temps: readonly string[];
  /** Bytes of a partial final frame at the end of the last segment (only with `allowTorn`). */
  readonly tornBytes: number;
  readonly faultKind?: ScanFault['kind'];
}

export interface VerifyTrailOptions {
  readonly dir: string;
  readonly digester: FrameDigester;
  readonly allowTorn: boolean;
  /** Verify only what a running writer has committed: up to this segment, and this many bytes of it. */
  readonly committed?: { readonly segment: number; readonly length: number };
  /** Called with every verified frame's seq and digest. */
  readonly onFrame?: (segment: number, seq: number, digest: string) => void;
}

/**
 * Verifies a whole trail: segment numbering, each header, each frame's digest, and the chain
 * from the genesis value through every segment boundary. Stops at the first fault and names it.
 */
export async function verifyTrail(options: VerifyTrailOptions): Promise<TrailVerification> {
  const { dir, digester, allowTorn, committed, onFrame } = options;
  const listing = await listTrail(dir);
  const all = committed ? listing.segments.filter((s) => s.segment <= committed.segment) : listing.segments;
  const summaries: SegmentSummary[] = [];
  let head: ChainHead = { seq: 0, digest: GENESIS_DIGEST };
  let records = 0;
  const done = (fault?: AuditReport['fault'], extra: { tornBytes?: number; faultKind?: ScanFault['kind'] } = {}): TrailVerification => ({
    report: { ok: fault === undefined, records, segments: summaries.length, ...(fault ? { fault } : {}) },
    head,
    segments: summaries,
    temps: listing.temps,
    tornBytes: extra.tornBytes ?? 0,
    ...(extra.faultKind ? { faultKind: extra.faultKind } : {}),
  });
  if (listing.fault) return done(listing.fault, { faultKind: 'damage' });
  if (committed && all.length !== committed.segment) {
    return done({ segment: segmentFileName(all.length + 1), reason: 'a segment the writer is using has disappeared' }, { faultKind: 'damage' });
  }

  for (let i = 0; i < all.length; i++) {
    const entry = all[i] as SegmentEntry;
    const last = i === all.length - 1;
    let result: Awaited<ReturnType<typeof scanSegmentFile>>;
    try {
      result = await scanSegmentFile(join(dir, entry.name), entry.name, {
        segment: entry.segment,
        before: head,
        digester,
        allowTorn: allowTorn && last,
        ...(last && committed ? { length: committed.length } : {}),
        ...(onFrame ? { onFrame: (seq: number, digest: string) => onFrame(entry.segment, seq, digest) } : {}),
      });
    } catch (error) {
      if (error instanceof UnsafeSegmentError) return done({ segment: entry.name, reason: error.message }, { faultKind: 'damage' });
      throw error;
    }
    const { scan, size } = result;
    if (last && committed && size < committed.length) {
      return done(
        { segment: entry.name, seq: head.seq + 1, reason: `the segment is shorter (${size} bytes) than the writer committed (${committed.length}): it was truncated` },
        { faultKind: 'damage' },
      );
    }
    records += scan.frames;
    head = scan.head;
    summaries.push({
      segment: entry.segment,
      name: entry.name,
      ...(scan.header ? { header: scan.header } : {}),
      firstSeq: scan.firstSeq,
      lastSeq: scan.head.seq,
      goodLength: scan.goodLength,
    });
    if (scan.fault) {
      const { record, seq, offset, reason } = scan.fault;
      const where = record === undefined ? 'header' : `record ${record}${seq === undefined ? '' : ` (seq ${seq})`} at byte ${offset}`;
      return done(
        { segment: entry.name, ...(record !== undefined ? { record } : {}), ...(seq !== undefined ? { seq } : {}), reason: `${entry.name}, ${where}: ${reason}` },
        { faultKind: scan.fault.kind },
      );
    }
    if (last) return done(undefined, { tornBytes: scan.tornBytes });
  }
  return done();
}
