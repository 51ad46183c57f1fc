import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { MCP_CONFIG_LIMITS, type McpRemoteServerConfig } from './mcp-servers-config.js';

/**
 * A header file of a remote server cannot be used. The message names the server and the header
 * and says why; never the file's content, and not its path (the operator's config names it).
 */
export class RemoteHeaderError extends Error {
  override readonly name = 'RemoteHeaderError';
}

// Visible ASCII, Latin-1 and horizontal whitespace: what an HTTP header value may hold (no CR, LF, NUL).
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Reads every header of a remote server from its file, now: called at each connect, so a file
 * the operator rotated is used by the next connection. One trailing newline (`\n` or `\r\n`) is
 * dropped; any other line break or control character refuses the file, since a value with CR/LF
 * would forge headers.
 */
export async function readRemoteHeaders(server: McpRemoteServerConfig): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [name, source] of Object.entries(server.headers)) {
    const where = `MCP server '${server.name}': header "${name}"`;
    const text = await readBounded(source.file, where);
    const value = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
    if (value.trim() === '') throw new RemoteHeaderError(`${where}: its file is empty`);
    if (/[\r\n]/.test(value)) throw new RemoteHeaderError(`${where}: its file holds a line break (CR or LF) inside the value; a header value is one line`);
    if (!HEADER_VALUE.test(value)) throw new RemoteHeaderError(`${where}: its file holds characters an HTTP header cannot carry (control characters or beyond Latin-1)`);
    headers[name] = `${source.prefix ?? ''}${value}`;
  }
  return headers;
}

/** Longest one header file's open and read may take (a hung network mount). */
export const HEADER_FILE_TIMEOUT_MS = 2_000;

/** Reads one header file within {@link HEADER_FILE_TIMEOUT_MS}; past it the read is abandoned. */
async function readBounded(path: string, where: string): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RemoteHeaderError(`${where}: its file could not be read within ${HEADER_FILE_TIMEOUT_MS} ms`)), HEADER_FILE_TIMEOUT_MS);
    timer.unref?.();
  });
  const reading = readFile(path, where);
  reading.catch(() => undefined);
  try {
    return await Promise.race([reading, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function readFile(path: string, where: string): Promise<string> {
  let handle: FileHandle;
  try {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer, forever.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw new RemoteHeaderError(`${where}: its file ${fileProblem(error)}`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new RemoteHeaderError(`${where}: its file is not a regular file`);
    const limit = MCP_CONFIG_LIMITS.headerFileBytes;
    // Read one byte past the limit, so a file that grew since stat is caught too.
    const buffer = Buffer.alloc(limit + 1);
    const { bytesRead } = await handle.read(buffer, 0, limit + 1, 0);
    if (bytesRead > limit) throw new RemoteHeaderError(`${where}: its file is larger than ${limit} bytes`);
    return buffer.subarray(0, bytesRead).toString('latin1');
  } catch (error) {
    if (error instanceof RemoteHeaderError) throw error;
    throw new RemoteHeaderError(`${where}: its file ${fileProblem(error)}`);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function fileProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENOENT':
      return 'does not exist';
    case 'EACCES':
    case 'EPERM':
      return 'cannot be read (permission denied)';
    case 'EISDIR':
      return 'is not a regular file';
    default:
      return `cannot be read (${typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : 'error'})`;
  }
}
