import { join } from 'node:path';
import { AuditCorruptError, type AuditQuery, type AuditRecord } from '@toolgate/contracts';
import { decodeFrameJson, type FrameDigester } from '@toolgate/adapter-kit-audit';
import { scanSegment } from './segment-scanner.js';
import { readSegmentFile, UnsafeSegmentError } from './trail-reader.js';

/** What the sink knows about each committed segment, to page `tail` without rereading all. */
export interface SegmentIndexEntry {
  readonly segment: number;
  readonly name: string;
  readonly prev: string;
  readonly firstSeq: number;
  lastSeq: number;
}

/** `tail` never returns more than this many records in one page. */
export const MAX_TAIL_LIMIT = 10_000;

/** Where a tail read looks: the trail, its segments as the writer knows them, and how far is committed. */
export interface TailSource {
  readonly dir: string;
  readonly digester: FrameDigester;
  /** A copy of the writer's index, so appends meanwhile do not move it under the read. */
  readonly segments: readonly SegmentIndexEntry[];
  /** The open segment and its durable length: bytes past it are not read. */
  readonly committed: { readonly segment: number; readonly length: number };
}

/**
 * The newest `limit` matching records with seq > `afterSeq`, oldest first. Reads segments from
 * the newest back, verifying each frame it reads, and stops once `limit` records matched or
 * `afterSeq` is reached: a filter that matches nothing recent reads the whole trail (there is no
 * per-tenant index in files; the PostgreSQL sink has one). Damage found on the way rejects with
 * `AuditCorruptError` naming the segment.
 */
export async function tailRecords(source: TailSource, query: AuditQuery): Promise<AuditRecord[]> {
  const { limit, afterSeq = 0, tenant, principal } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_TAIL_LIMIT) throw new RangeError(`limit must be an integer from 1 to ${MAX_TAIL_LIMIT}`);
  if (!Number.isInteger(afterSeq) || afterSeq < 0) throw new RangeError('afterSeq must be an integer >= 0');
  const { segments, committed } = source;
  const found: AuditRecord[] = [];
  for (let i = segments.length - 1; i >= 0 && found.length < limit; i--) {
    const entry = segments[i] as SegmentIndexEntry;
    if (entry.lastSeq <= afterSeq) break;
    if (entry.lastSeq < entry.firstSeq) continue;
    const bytes = await readCommitted(source.dir, entry, committed);
    const frames: { seq: number; digest: string; start: number; end: number }[] = [];
    const scan = scanSegment(bytes, {
      segment: entry.segment,
      before: { seq: entry.firstSeq - 1, digest: entry.prev },
      digester: source.digester,
      allowTorn: false,
      onFrame: (seq, digest, start, end) => {
        if (seq > afterSeq) frames.push({ seq, digest, start, end });
      },
    });
    if (scan.fault || scan.head.seq < entry.lastSeq) {
      const reason = `${entry.name}: ${scan.fault?.reason ?? 'records the writer committed are missing'}`;
      throw new AuditCorruptError({ ok: false, records: 0, segments: 0, fault: { segment: entry.name, reason } });
    }
    const page: AuditRecord[] = [];
    for (let f = frames.length - 1; f >= 0 && found.length + page.length < limit; f--) {
      const frame = frames[f] as (typeof frames)[number];
      const record = decodeFrameJson(bytes.toString('utf8', frame.start, frame.end), frame.digest);
      if (tenant !== undefined && record.tenant !== tenant) continue;
      if (principal !== undefined && record.principal !== principal) continue;
      page.push(record);
    }
    found.push(...page);
  }
  return found.reverse();
}

async function readCommitted(dir: string, entry: SegmentIndexEntry, committed: TailSource['committed']): Promise<Buffer> {
  try {
    return await readSegmentFile(join(dir, entry.name), entry.name, entry.segment === committed.segment ? committed.length : undefined);
  } catch (error) {
    if (error instanceof UnsafeSegmentError) {
      throw new AuditCorruptError({ ok: false, records: 0, segments: 0, fault: { segment: entry.name, reason: error.message } });
    }
    throw error;
  }
}
