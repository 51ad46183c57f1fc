import { ToolAbortedError, type JsonObject, type ToolContext, type ToolDefinition, type ToolManifest } from '@toolgate/contracts';
import { integerArg, stringArg, WORKSPACE_PERMISSION } from './arguments.js';
import { BINARY_SNIFF_BYTES, cutToBytes, looksBinary } from './text.js';
import { MAX_PATH_LENGTH, Workspace } from './workspace.js';

/** Most content one read returns, in bytes of UTF-8. */
export const MAX_READ_BYTES = 1024 * 1024;
export const DEFAULT_READ_LINES = 2000;
export const MAX_READ_LINES = 100_000;
const CHUNK_BYTES = 64 * 1024;

export const readFileManifest: ToolManifest = {
  name: 'read_file',
  version: '1.0.0',
  description:
    'Reads a text file in the workspace. Returns up to `limit` lines (default 2000) starting at line `offset` (1-based) and at most 1 MiB; `truncated` says there is more. Binary files (a NUL byte in the first 8 KiB) are reported as binary without content.',
  provenance: 'first-party',
  risk: 'low',
  permissions: WORKSPACE_PERMISSION,
  input: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, maxLength: MAX_PATH_LENGTH, description: 'File path relative to the workspace root.' },
      offset: { type: 'integer', minimum: 1, description: 'First line to return (1-based). Default 1.' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_READ_LINES, description: `Most lines to return. Default ${DEFAULT_READ_LINES}.` },
    },
    required: ['path'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      path: { type: 'string' },
      binary: { type: 'boolean' },
      size: { type: 'integer', minimum: 0 },
      content: { type: 'string' },
      start_line: { type: 'integer', minimum: 0 },
      end_line: { type: 'integer', minimum: 0 },
      truncated: { type: 'boolean' },
    },
    required: ['path', 'binary', 'size', 'content', 'start_line', 'end_line', 'truncated'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 10_000,
};

/**
 * Streams the file through its verified handle, so memory stays bounded by the output cap even
 * for a huge file or a single enormous line.
 */
async function readFile(args: JsonObject, ctx: ToolContext) {
  const given = stringArg(args, 'path');
  const offset = integerArg(args, 'offset', 1, 1, Number.MAX_SAFE_INTEGER);
  const limit = integerArg(args, 'limit', DEFAULT_READ_LINES, 1, MAX_READ_LINES);
  const workspace = await Workspace.open(ctx.workspaceRoot);
  const { handle, rel } = await workspace.openFile(given);
  try {
    const { size } = await handle.stat();
    const path = Workspace.display(rel);
    const head = Buffer.alloc(Math.min(BINARY_SNIFF_BYTES, size));
    await handle.read(head, 0, head.length, 0);
    if (looksBinary(head)) return { path, binary: true, size, content: '', start_line: 0, end_line: 0, truncated: false };

    const decoder = new TextDecoder('utf-8');
    const chunk = Buffer.alloc(CHUNK_BYTES);
    let position = 0;
    let line = 1;
    let returned = 0;
    let inLine = false;
    let content = '';
    let contentBytes = 0;
    let truncated = false;

    // One piece of one line; `ends` when the piece carries the line's newline.
    const take = (piece: string, ends: boolean): boolean => {
      if (line < offset) {
        if (ends) line++;
        return true;
      }
      if (!inLine) {
        if (returned >= limit) return !(truncated = true);
        inLine = true;
        returned++;
      }
      const bytes = Buffer.byteLength(piece);
      if (contentBytes + bytes > MAX_READ_BYTES) {
        content += cutToBytes(piece, MAX_READ_BYTES - contentBytes);
        return !(truncated = true);
      }
      content += piece;
      contentBytes += bytes;
      if (ends) {
        line++;
        inLine = false;
      }
      return true;
    };

    reading: for (;;) {
      if (ctx.signal.aborted) throw new ToolAbortedError('the call was aborted');
      const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, position);
      position += bytesRead;
      const text = bytesRead === 0 ? decoder.decode() : decoder.decode(chunk.subarray(0, bytesRead), { stream: true });
      let from = 0;
      while (from < text.length) {
        const newline = text.indexOf('\n', from);
        const end = newline === -1 ? text.length : newline + 1;
        if (!take(text.slice(from, end), newline !== -1)) break reading;
        from = end;
      }
      if (bytesRead === 0) break;
    }
    return { path, binary: false, size, content, start_line: offset, end_line: offset + returned - 1, truncated };
  } finally {
    await handle.close();
  }
}

export const readFileTool: ToolDefinition = { manifest: readFileManifest, handler: { invoke: readFile } };
