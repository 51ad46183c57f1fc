import { constants } from 'node:fs';
import { lstat, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditCorruptError, AuditUnavailableError } from '@toolgate/contracts';
import type { FrameDigester } from '@toolgate/adapter-kit-audit';
import type { AuditFileIo } from './audit-file-io.js';
import { formatHeader, MAX_HEADER_BYTES, parseHeader, segmentFileName } from './segment-format.js';
import { readSegmentFile } from './trail-reader.js';

// The life of a segment file on disk: created whole (or not at all), opened for appending,
// and the leftovers of an interrupted rotation removed. The sink decides when; this file how.

/** The segment being appended to. */
export interface OpenSegment {
  readonly segment: number;
  readonly name: string;
  readonly handle: FileHandle;
  readonly dev: number;
  readonly ino: number;
  /** Bytes known durable; the file must be exactly this long between batches. */
  length: number;
  frames: number;
}

/** The new segment was renamed into place but the directory sync failed: its durability is unknown. */
export class SegmentPublishedError extends Error {
  constructor(override readonly cause: unknown) {
    super('the directory holding the new segment could not be synced');
  }
}

/**
 * Creates segment `n` atomically: header into `<name>.tmp`, fdatasync, rename into place, fsync
 * the directory. A crash leaves either no segment or a complete header, never a torn one.
 * Resolves with the header's length.
 */
export async function createSegment(dir: string, segment: number, prev: string, digester: FrameDigester, io: AuditFileIo): Promise<number> {
  const name = segmentFileName(segment);
  const temp = join(dir, `${name}.tmp`);
  const header = Buffer.from(
    formatHeader({ segment, algorithm: digester.algorithm, ...(digester.keyId ? { keyId: digester.keyId } : {}), prev }),
    'latin1',
  );
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    let written = 0;
    while (written < header.length) {
      const n = await io.write(handle, header.subarray(written), written);
      if (n <= 0) throw Object.assign(new Error('short write'), { code: 'EIO' });
      written += n;
    }
    await io.datasync(handle);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, join(dir, name));
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  try {
    await syncDirectory(dir);
  } catch (error) {
    throw new SegmentPublishedError(error);
  }
  return header.length;
}

/** Opens the segment for positional writes, refusing symbolic links and non-regular files. */
export async function openForAppend(dir: string, segment: number): Promise<OpenSegment> {
  const name = segmentFileName(segment);
  let handle: FileHandle;
  try {
    handle = await open(join(dir, name), constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new AuditUnavailableError(`${name} is a symbolic link; refusing to follow it`);
    throw error;
  }
  const info = await handle.stat();
  if (!info.isFile()) {
    await handle.close();
    throw new AuditUnavailableError(`${name} is not a regular file`);
  }
  return { segment, name, handle, dev: info.dev, ino: info.ino, length: info.size, frames: 0 };
}

/**
 * Removes `<segment>.tmp` files of a rotation that a crash interrupted. Such a file holds at most
 * a header (frames are only written after the rename), so nothing acknowledged is lost; anything
 * else under that name is not ours to delete and refuses the open.
 */
export async function removeInterruptedRotations(dir: string, temps: readonly string[]): Promise<void> {
  for (const name of temps) {
    const path = join(dir, name);
    const refuse = (why: string): never => {
      throw new AuditCorruptError({
        ok: false,
        records: 0,
        segments: 0,
        fault: { segment: name, reason: `${name} ${why}, so it is not the leftover of an interrupted rotation; move it away to open the trail` },
      });
    };
    const info = await lstat(path);
    if (!info.isFile()) refuse('is not a regular file');
    if (info.size > MAX_HEADER_BYTES) refuse('holds data after its header');
    const bytes = await readSegmentFile(path, name);
    const header = parseHeader(bytes);
    if (bytes.length > 0 && header.ok && header.length !== bytes.length) refuse('holds data after its header');
    await unlink(path);
  }
  if (temps.length > 0) await syncDirectory(dir);
}

/** fsyncs a directory, so a rename or unlink in it survives a crash. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
