import { fstatSync, lstatSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import {
  AuditCorruptError,
  AuditUnavailableError,
  type AuditEvent,
  type AuditQuery,
  type AuditReceipt,
  type AuditRecord,
  type AuditReport,
  type AuditSink,
  type Clock,
} from '@toolgate/contracts';
import {
  createFrameDigester,
  encodePrepared,
  GENESIS_DIGEST,
  GroupCommitQueue,
  type EncodedFrame,
  type FrameDigester,
  type PendingAppend,
} from '@toolgate/adapter-kit-audit';
import { nodeAuditFileIo, type AuditFileIo } from './audit-file-io.js';
import { acquireDirectoryLock, type DirectoryLock } from './directory-lock.js';
import { errnoText } from './errno-text.js';
import { segmentFileName } from './segment-format.js';
import { createSegment, openForAppend, removeInterruptedRotations, SegmentPublishedError, type OpenSegment } from './segment-files.js';
import type { ChainHead } from './segment-scanner.js';
import { tailRecords, type SegmentIndexEntry } from './tail-query.js';
import { verifyTrail, type SegmentSummary } from './trail-reader.js';

/** Options of `FileAuditSink.open`. */
export interface FileAuditSinkOptions {
  /**
   * Key for HMAC-SHA-256 frame digests (a string is used as its UTF-8 bytes; at least 16 bytes).
   * A trail keeps the digest it was created with: a keyed trail cannot be opened without its key.
   */
  readonly hmacKey?: string | Uint8Array;
  /** Rotate to a new segment before one would grow past this many bytes. Default 16 MiB. */
  readonly segmentBytes?: number;
  /** Most frames group-committed in one write + fdatasync. Default 1024. */
  readonly maxBatchFrames?: number;
  /** The write-path file operations (tests inject failures). */
  readonly io?: AuditFileIo;
  /** Time of the `recovered` event written after a torn tail is cut. */
  readonly clock?: Clock;
}

/** Segment size bound when `segmentBytes` is not given: 16 MiB. */
export const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
const MIN_SEGMENT_BYTES = 4096;
const MAX_SEGMENT_BYTES = 256 * 1024 * 1024;

/**
 * The embedded audit sink: an append-only, hash-chained trail of segment files in one directory
 * (format: docs/audit-format.md). Appends are group-committed: everything queued while one batch
 * is being made durable goes out in the next single write + `fdatasync`, and each caller's
 * promise resolves only after its frame is on disk. One writer per directory (an OS lock).
 *
 * Fails closed: a failed write is rolled back and rejected; a failed `fdatasync`, a segment that
 * changed behind the writer's back, or damage found by `verify`/`tail` make the sink unhealthy,
 * and every later append is rejected until the process restarts.
 */
export class FileAuditSink implements AuditSink {
  private readonly appends: GroupCommitQueue;
  private failure: string | undefined;
  private closed = false;

  private constructor(
    private readonly dir: string,
    private readonly label: string,
    private readonly digester: FrameDigester,
    private readonly io: AuditFileIo,
    private readonly segmentBytes: number,
    maxBatchFrames: number,
    private readonly lock: DirectoryLock,
    private current: OpenSegment,
    private head: ChainHead,
    private readonly index: SegmentIndexEntry[],
  ) {
    this.appends = new GroupCommitQueue({
      maxBatch: maxBatchFrames,
      commit: (batch) => this.commit(batch),
      refusal: () => (this.failure ? new AuditUnavailableError(this.failure) : undefined),
      onCommitError: (batch, error) => {
        // Unexpected (a stat of the segment failed, say): the file's state is unknown.
        this.fail(`the audit trail failed unexpectedly (${errnoText(error)}); appends are refused until restart`);
        for (const pending of batch) pending.reject(new AuditUnavailableError(this.failure as string));
      },
    });
  }

  /**
   * Opens (creating if needed) the trail in `dir` (e.g. `<data dir>/audit`), taking its
   * single-writer lock and verifying every frame and the whole chain first. A torn final frame
   * is cut off and a `recovered` event recording it is appended before this resolves.
   *
   * Rejects with `AuditCorruptError` (naming segment and record) when the trail is damaged, and
   * with `AuditUnavailableError` when another writer holds the directory or the HMAC key does not
   * fit; the server then installs an `UnavailableAuditSink` with the error's message.
   */
  static async open(dir: string, options: FileAuditSinkOptions = {}): Promise<FileAuditSink> {
    const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    if (!Number.isInteger(segmentBytes) || segmentBytes < MIN_SEGMENT_BYTES || segmentBytes > MAX_SEGMENT_BYTES) {
      throw new RangeError(`segmentBytes must be an integer from ${MIN_SEGMENT_BYTES} to ${MAX_SEGMENT_BYTES}`);
    }
    const maxBatchFrames = options.maxBatchFrames ?? 1024;
    if (!Number.isInteger(maxBatchFrames) || maxBatchFrames < 1) throw new RangeError('maxBatchFrames must be a positive integer');
    const digester = createFrameDigester(options.hmacKey);
    const io = options.io ?? nodeAuditFileIo;
    const label = basename(dir);

    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      if (!(await stat(dir)).isDirectory()) throw new AuditUnavailableError(`the audit path ${label} is not a directory`);
    } catch (error) {
      if (error instanceof AuditUnavailableError) throw error;
      throw new AuditUnavailableError(`the audit directory ${label} cannot be created or read (${errnoText(error)})`);
    }
    let lock: DirectoryLock;
    try {
      lock = await acquireDirectoryLock(dir, label);
    } catch (error) {
      if (error instanceof AuditUnavailableError) throw error;
      throw new AuditUnavailableError(`the audit directory lock in ${label} cannot be taken (${errnoText(error)})`);
    }
    let current: OpenSegment | undefined;
    try {
      const checked = await verifyTrail({ dir, digester, allowTorn: true });
      if (!checked.report.ok) {
        if (checked.faultKind === 'key') throw new AuditUnavailableError(checked.report.fault?.reason ?? 'the HMAC key does not fit the trail');
        throw new AuditCorruptError(checked.report);
      }
      await removeInterruptedRotations(dir, checked.temps);

      let summaries = checked.segments;
      if (summaries.length === 0) {
        const headerBytes = await createSegment(dir, 1, GENESIS_DIGEST, digester, io);
        summaries = [{ segment: 1, name: segmentFileName(1), firstSeq: 1, lastSeq: 0, goodLength: headerBytes }];
      }
      const last = summaries[summaries.length - 1] as SegmentSummary;
      current = await openForAppend(dir, last.segment);
      if (current.length !== last.goodLength + checked.tornBytes) {
        throw new AuditUnavailableError(`${last.name} changed while the trail was being verified (another writer?)`);
      }
      if (checked.tornBytes > 0) {
        // The partial frame was never acknowledged (its fdatasync never returned): cut it off.
        await io.truncate(current.handle, last.goodLength);
        await io.datasync(current.handle);
        current.length = last.goodLength;
      }
      current.frames = last.lastSeq - last.firstSeq + 1;
      const index: SegmentIndexEntry[] = summaries.map((s) => ({
        segment: s.segment,
        name: s.name,
        prev: s.header?.prev ?? GENESIS_DIGEST,
        firstSeq: s.firstSeq,
        lastSeq: s.lastSeq,
      }));
      const sink = new FileAuditSink(dir, label, digester, io, segmentBytes, maxBatchFrames, lock, current, checked.head, index);
      current = undefined; // the sink owns it now
      if (checked.tornBytes > 0) {
        const now = options.clock?.now() ?? Date.now();
        await sink.append({
          event: 'recovered',
          ts: new Date(now).toISOString(),
          detail: `cut ${checked.tornBytes} bytes of a partial frame after seq ${checked.head.seq} at the end of ${last.name}: the writer stopped mid-write and that record was never acknowledged`,
        }).catch(async (error: unknown) => {
          await sink.close();
          throw error;
        });
      }
      return sink;
    } catch (error) {
      await current?.handle.close().catch(() => undefined);
      await lock.release();
      if (error instanceof AuditCorruptError || error instanceof AuditUnavailableError || error instanceof RangeError) throw error;
      // File-system errors name host paths; say what failed in the directory's terms instead.
      throw new AuditUnavailableError(`the audit trail in ${label} cannot be opened (${errnoText(error)})`);
    }
  }

  append(event: AuditEvent): Promise<AuditReceipt> {
    if (this.closed) return Promise.reject(new AuditUnavailableError('the audit sink is closed'));
    if (this.failure) return Promise.reject(new AuditUnavailableError(this.failure));
    return this.appends.enqueue(event);
  }

  /** Verifies the committed trail and that it ends where this writer's chain ends. */
  async verify(): Promise<AuditReport> {
    if (this.closed) throw new AuditUnavailableError('the audit sink is closed');
    const committed = { segment: this.current.segment, length: this.current.length };
    const expected = this.head;
    const checked = await verifyTrail({ dir: this.dir, digester: this.digester, allowTorn: false, committed });
    let report = checked.report;
    if (report.ok && (checked.head.seq !== expected.seq || checked.head.digest !== expected.digest)) {
      report = {
        ...report,
        ok: false,
        fault: { segment: this.current.name, seq: expected.seq, reason: `the trail ends at seq ${checked.head.seq} but this writer committed seq ${expected.seq}: records were removed` },
      };
    }
    if (!report.ok) this.fail(`the audit trail is damaged: ${report.fault?.reason}`);
    return report;
  }

  /** The newest `limit` matching records with seq > `afterSeq`, oldest first (see `tailRecords`). */
  async tail(query: AuditQuery): Promise<readonly AuditRecord[]> {
    if (this.closed) throw new AuditUnavailableError('the audit sink is closed');
    const source = {
      dir: this.dir,
      digester: this.digester,
      segments: this.index.map((s) => ({ ...s })),
      committed: { segment: this.current.segment, length: this.current.length },
    };
    try {
      return await tailRecords(source, query);
    } catch (error) {
      // Damage found by a read makes the sink unhealthy, as damage found by verify does.
      if (error instanceof AuditCorruptError) this.fail(error.message);
      throw error;
    }
  }

  health(): { readonly ok: boolean; readonly reason?: string } {
    if (this.closed) return { ok: false, reason: 'the audit sink is closed' };
    if (this.failure) return { ok: false, reason: this.failure };
    return { ok: true };
  }

  /** Waits for queued appends to be committed (or refused), then releases file and lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.appends.drain();
    await this.current.handle.close().catch(() => undefined);
    await this.lock.release();
  }

  private fail(reason: string): void {
    this.failure ??= reason;
  }

  /** Writes one batch: frames chained from the committed head, split at segment boundaries. */
  private async commit(batch: PendingAppend[]): Promise<void> {
    let offset = 0;
    while (offset < batch.length) {
      if (this.failure) {
        for (const pending of batch.slice(offset)) pending.reject(new AuditUnavailableError(this.failure));
        return;
      }
      let seq = this.head.seq;
      let prev = this.head.digest;
      const frames: EncodedFrame[] = [];
      let bytes = 0;
      let rotate = false;
      for (let i = offset; i < batch.length; i++) {
        const frame = encodePrepared(seq + 1, prev, (batch[i] as PendingAppend).event, this.digester);
        const segmentHasFrames = this.current.frames > 0 || frames.length > 0;
        if (segmentHasFrames && this.current.length + bytes + frame.line.length > this.segmentBytes) {
          rotate = frames.length === 0;
          break;
        }
        frames.push(frame);
        bytes += frame.line.length;
        seq = frame.seq;
        prev = frame.digest;
      }
      if (rotate) {
        try {
          await this.rotate();
        } catch (error) {
          if (error instanceof SegmentPublishedError) this.fail(`the new audit segment could not be made durable (${errnoText(error.cause)}); appends are refused until restart`);
          const reason = this.failure ?? `the audit trail could not start a new segment (${errnoText(error)}); nothing was recorded`;
          for (const pending of batch.slice(offset)) pending.reject(new AuditUnavailableError(reason));
          return;
        }
        continue;
      }
      const chunk = batch.slice(offset, offset + frames.length);
      offset += frames.length;
      const ok = await this.writeDurably(frames, bytes);
      if (ok !== true) {
        for (const pending of [...chunk, ...batch.slice(offset)]) pending.reject(ok);
        return;
      }
      for (let i = 0; i < chunk.length; i++) {
        const frame = frames[i] as EncodedFrame;
        (chunk[i] as PendingAppend).resolve({ seq: frame.seq, digest: frame.digest });
      }
    }
  }

  /** One write + one fdatasync; true once durable, else the error to give the callers. */
  private async writeDurably(frames: EncodedFrame[], bytes: number): Promise<true | Error> {
    const segment = this.current;
    const identity = this.checkUntouched(segment);
    if (identity) {
      this.fail(identity);
      return new AuditUnavailableError(identity);
    }
    const data = frames.length === 1 ? (frames[0] as EncodedFrame).line : Buffer.concat(frames.map((f) => f.line), bytes);
    let written = 0;
    try {
      while (written < data.length) {
        const n = await this.io.write(segment.handle, data.subarray(written), segment.length + written);
        if (n <= 0) throw Object.assign(new Error('short write'), { code: 'EIO' });
        written += n;
      }
    } catch (error) {
      // Roll back to the last good length, so the next batch starts from a clean end of file.
      try {
        await this.io.truncate(segment.handle, segment.length);
      } catch (truncateError) {
        const reason = `the audit trail could not be written (${errnoText(error)}) nor rolled back (${errnoText(truncateError)})`;
        this.fail(reason);
        return new AuditUnavailableError(reason);
      }
      return new AuditUnavailableError(`the audit trail could not be written (${errnoText(error)}); nothing was recorded`);
    }
    try {
      await this.io.datasync(segment.handle);
    } catch (error) {
      // After a failed fdatasync the kernel may have dropped the dirty pages and cleared the
      // error: a retry could "succeed" without the data. Nothing written from now on is trusted.
      const reason = `fdatasync of the audit trail failed (${errnoText(error)}); appends are refused until restart`;
      this.fail(reason);
      return new AuditUnavailableError(reason);
    }
    segment.length += data.length;
    segment.frames += frames.length;
    const last = frames[frames.length - 1] as EncodedFrame;
    this.head = { seq: last.seq, digest: last.digest };
    (this.index[this.index.length - 1] as SegmentIndexEntry).lastSeq = last.seq;
    return true;
  }

  /** Why the segment is not what this writer left (another writer, a replaced file), if it is not. */
  private checkUntouched(segment: OpenSegment): string | undefined {
    // Synchronous on purpose: two stat calls cost microseconds, a thread-pool round trip each
    // would add more than that to every batch's latency.
    const open = fstatSync(segment.handle.fd);
    const linked = lstatSync(join(this.dir, segment.name), { throwIfNoEntry: false });
    if (!linked || linked.dev !== segment.dev || linked.ino !== segment.ino) {
      return `${segment.name} in ${this.label} was replaced or removed behind the writer; appends are refused until restart`;
    }
    if (open.size !== segment.length) {
      return `${segment.name} in ${this.label} changed length behind the writer (${segment.length} → ${open.size} bytes; a second writer?); appends are refused until restart`;
    }
    return undefined;
  }

  private async rotate(): Promise<void> {
    const next = this.current.segment + 1;
    await createSegment(this.dir, next, this.head.digest, this.digester, this.io);
    let opened: OpenSegment;
    try {
      opened = await openForAppend(this.dir, next);
    } catch (error) {
      // The new segment is in place but unusable: the trail's end is now uncertain.
      this.fail(`the new audit segment ${segmentFileName(next)} cannot be opened (${errnoText(error)})`);
      throw error;
    }
    const previous = this.current;
    this.current = opened;
    this.index.push({ segment: next, name: opened.name, prev: this.head.digest, firstSeq: this.head.seq + 1, lastSeq: this.head.seq });
    await previous.handle.close().catch(() => undefined);
  }
}




