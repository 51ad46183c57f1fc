import { isUtf8 } from 'node:buffer';
import { ToolError, type JsonObject, type ToolContext, type ToolDefinition, type ToolManifest } from '@toolgate/contracts';
import { booleanArg, stringArg, WORKSPACE_PERMISSION } from './arguments.js';
import { looksBinary } from './text.js';
import { TimeSlice } from './time-slice.js';
import { MAX_PATH_LENGTH, shown, Workspace } from './workspace.js';
import { MAX_WRITE_BYTES } from './write-file.tool.js';

/** Longest `old_string` / `new_string`. */
export const MAX_EDIT_STRING = 1024 * 1024;

export const editFileManifest: ToolManifest = {
  name: 'edit_file',
  version: '1.0.0',
  description:
    'Replaces `old_string` with `new_string` in a text file of the workspace. `old_string` must occur exactly once unless `replace_all` is true; matching is exact (whitespace included). The file is rewritten atomically and the edit fails if the file changed since it was read.',
  provenance: 'first-party',
  risk: 'medium',
  permissions: WORKSPACE_PERMISSION,
  input: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, maxLength: MAX_PATH_LENGTH, description: 'File path relative to the workspace root.' },
      old_string: { type: 'string', minLength: 1, maxLength: MAX_EDIT_STRING, description: 'The exact text to replace.' },
      new_string: { type: 'string', maxLength: MAX_EDIT_STRING, description: 'The replacement text.' },
      replace_all: { type: 'boolean', description: 'Replace every occurrence instead of requiring exactly one. Default false.' },
    },
    required: ['path', 'old_string', 'new_string'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      path: { type: 'string' },
      replacements: { type: 'integer', minimum: 1 },
      bytes_written: { type: 'integer', minimum: 0 },
    },
    required: ['path', 'replacements', 'bytes_written'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 10_000,
};

// One code unit looked at around each surrogate: linear in the string.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Occurrences of `needle` in `haystack` (non-overlapping), counted no further than `stopAt`. */
async function occurrences(haystack: Buffer, needle: Buffer, stopAt: number, slice: TimeSlice): Promise<number> {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1 && count < stopAt; at = haystack.indexOf(needle, at + needle.length)) {
    count++;
    if ((count & 1023) === 0 && slice.due()) await slice.yield();
  }
  return count;
}

/** `haystack` with its first `count` occurrences of `needle` replaced, built at its known final size. */
async function replaced(haystack: Buffer, needle: Buffer, replacement: Buffer, count: number, size: number, slice: TimeSlice): Promise<Buffer> {
  const out = Buffer.allocUnsafe(size);
  let from = 0;
  let to = 0;
  for (let done = 0; done < count; done++) {
    const at = haystack.indexOf(needle, from);
    to += haystack.copy(out, to, from, at);
    to += replacement.copy(out, to);
    from = at + needle.length;
    if ((done & 1023) === 1023 && slice.due()) await slice.yield();
  }
  haystack.copy(out, to, from);
  return out;
}

async function editFile(args: JsonObject, ctx: ToolContext) {
  const given = stringArg(args, 'path');
  const oldString = stringArg(args, 'old_string');
  const newString = stringArg(args, 'new_string');
  const replaceAll = booleanArg(args, 'replace_all', false);
  if (oldString.length === 0) throw new ToolError("'old_string' must not be empty", 'INVALID_ARGUMENT');
  if (oldString === newString) throw new ToolError("'old_string' and 'new_string' are identical: nothing to change", 'NO_CHANGE');
  // A lone surrogate has no UTF-8 spelling: it would match, or be written as, U+FFFD.
  if (LONE_SURROGATE.test(oldString)) throw new ToolError("'old_string' is not well-formed Unicode (a lone surrogate)", 'INVALID_ARGUMENT');
  if (LONE_SURROGATE.test(newString)) throw new ToolError("'new_string' is not well-formed Unicode (a lone surrogate)", 'INVALID_ARGUMENT');
  const needle = Buffer.from(oldString, 'utf8');
  const replacement = Buffer.from(newString, 'utf8');

  const workspace = await Workspace.open(ctx.workspaceRoot);
  const { handle } = await workspace.openFile(given);
  let bytes: Buffer;
  let ino: number;
  try {
    const stat = await handle.stat();
    ino = stat.ino;
    if (stat.size > MAX_WRITE_BYTES) {
      throw new ToolError(`'${shown(given)}' is ${stat.size} bytes; edit_file changes files of at most ${MAX_WRITE_BYTES} bytes`, 'TOO_LARGE');
    }
    bytes = await handle.readFile();
    if (bytes.length > MAX_WRITE_BYTES) throw new ToolError(`'${shown(given)}' grew past ${MAX_WRITE_BYTES} bytes while it was read`, 'TOO_LARGE');
    if (looksBinary(bytes)) throw new ToolError(`'${shown(given)}' is a binary file; edit_file changes text files only`, 'BINARY_FILE');
    if (!isUtf8(bytes)) throw new ToolError(`'${shown(given)}' is not valid UTF-8; edit_file changes UTF-8 text only`, 'NOT_UTF8');
  } finally {
    await handle.close();
  }

  // Matching the UTF-8 bytes is matching the text: in valid UTF-8 a character's encoding never
  // starts inside another's. Nothing is built before its size is known to fit, and the counting
  // and copying share the event loop: a 1-byte old_string can occur five million times.
  const slice = new TimeSlice();
  const growth = replacement.length - needle.length;
  // Past this many replacements the result cannot fit, so counting further is wasted work.
  const fitting = growth > 0 ? Math.floor((MAX_WRITE_BYTES - bytes.length) / growth) + 1 : Number.POSITIVE_INFINITY;
  const count = await occurrences(bytes, needle, replaceAll ? fitting : 2 ** 31, slice);
  if (count === 0) throw new ToolError(`'old_string' was not found in '${shown(given)}'`, 'NO_MATCH');
  if (count > 1 && !replaceAll) {
    throw new ToolError(
      `'old_string' occurs ${count} times in '${shown(given)}'; add surrounding text to make it unique, or set replace_all`,
      'AMBIGUOUS_MATCH',
    );
  }
  const size = bytes.length + count * growth;
  if (size > MAX_WRITE_BYTES) {
    const many = replaceAll && count >= fitting ? `at least ${count} replacements` : `${count} replacement${count === 1 ? '' : 's'}`;
    throw new ToolError(`the edited file would exceed ${MAX_WRITE_BYTES} bytes (${many} of ${needle.length} bytes by ${replacement.length})`, 'TOO_LARGE');
  }
  const data = await replaced(bytes, needle, replacement, count, size, slice);
  const { rel } = await workspace.writeFile(given, data, { createDirs: false, expectIno: ino });
  return { path: Workspace.display(rel), replacements: count, bytes_written: data.length };
}

export const editFileTool: ToolDefinition = { manifest: editFileManifest, handler: { invoke: editFile } };
