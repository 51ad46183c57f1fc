import { ToolError, type JsonObject, type ToolContext, type ToolDefinition, type ToolManifest } from '@toolgate/contracts';
import { booleanArg, stringArg, WORKSPACE_PERMISSION } from './arguments.js';
import { looksBinary } from './text.js';
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

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

async function editFile(args: JsonObject, ctx: ToolContext) {
  const given = stringArg(args, 'path');
  const oldString = stringArg(args, 'old_string');
  const newString = stringArg(args, 'new_string');
  const replaceAll = booleanArg(args, 'replace_all', false);
  if (oldString.length === 0) throw new ToolError("'old_string' must not be empty", 'INVALID_ARGUMENT');
  if (oldString === newString) throw new ToolError("'old_string' and 'new_string' are identical: nothing to change", 'NO_CHANGE');

  const workspace = await Workspace.open(ctx.workspaceRoot);
  const { handle } = await workspace.openFile(given);
  let text: string;
  let ino: number;
  try {
    const stat = await handle.stat();
    ino = stat.ino;
    if (stat.size > MAX_WRITE_BYTES) {
      throw new ToolError(`'${shown(given)}' is ${stat.size} bytes; edit_file changes files of at most ${MAX_WRITE_BYTES} bytes`, 'TOO_LARGE');
    }
    const bytes = await handle.readFile();
    if (looksBinary(bytes)) throw new ToolError(`'${shown(given)}' is a binary file; edit_file changes text files only`, 'BINARY_FILE');
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new ToolError(`'${shown(given)}' is not valid UTF-8; edit_file changes UTF-8 text only`, 'NOT_UTF8');
    }
  } finally {
    await handle.close();
  }

  const count = occurrences(text, oldString);
  if (count === 0) throw new ToolError(`'old_string' was not found in '${shown(given)}'`, 'NO_MATCH');
  if (count > 1 && !replaceAll) {
    throw new ToolError(
      `'old_string' occurs ${count} times in '${shown(given)}'; add surrounding text to make it unique, or set replace_all`,
      'AMBIGUOUS_MATCH',
    );
  }
  // split/join and slice, not String.replace: '$&' and friends in new_string stay literal.
  const at = text.indexOf(oldString);
  const edited = replaceAll ? text.split(oldString).join(newString) : text.slice(0, at) + newString + text.slice(at + oldString.length);
  const data = Buffer.from(edited, 'utf8');
  if (data.length > MAX_WRITE_BYTES) throw new ToolError(`the edited file would exceed ${MAX_WRITE_BYTES} bytes`, 'TOO_LARGE');
  const { rel } = await workspace.writeFile(given, data, { createDirs: false, expectIno: ino });
  return { path: Workspace.display(rel), replacements: replaceAll ? count : 1, bytes_written: data.length };
}

export const editFileTool: ToolDefinition = { manifest: editFileManifest, handler: { invoke: editFile } };
