/**
 * A file-system error as `CODE: what it means`, since Node's own message names the host path;
 * any other error as its message.
 */
export function errnoText(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  if (e && typeof e.code === 'string') {
    const known: Record<string, string> = {
      ENOSPC: 'no space left on device',
      EDQUOT: 'disk quota exceeded',
      EIO: 'input/output error',
      EROFS: 'read-only file system',
      EFBIG: 'file too large',
      EACCES: 'permission denied',
      EPERM: 'operation not permitted',
      ENOTDIR: 'not a directory',
      ELOOP: 'symbolic link refused',
      EMFILE: 'too many open files',
    };
    return `${e.code}${known[e.code] ? `: ${known[e.code]}` : ''}`;
  }
  return e instanceof Error ? e.message : String(error);
}
