import type { FileHandle } from 'node:fs/promises';

/**
 * The file operations on the write path, injectable so tests can make a disk "full" (a write
 * that fails part-way with ENOSPC) or make `fdatasync` fail, without root or a real full disk.
 */
export interface AuditFileIo {
  /** Writes `data` at `position`; resolves with how many bytes were written (may be fewer). */
  write(handle: FileHandle, data: Uint8Array, position: number): Promise<number>;
  datasync(handle: FileHandle): Promise<void>;
  truncate(handle: FileHandle, length: number): Promise<void>;
}

/** The real thing. */
export const nodeAuditFileIo: AuditFileIo = {
  write: async (handle, data, position) => (await handle.write(data, 0, data.length, position)).bytesWritten,
  datasync: (handle) => handle.datasync(),
  truncate: (handle, length) => handle.truncate(length),
};
