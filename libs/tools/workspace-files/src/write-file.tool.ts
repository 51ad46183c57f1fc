import { ToolError, type JsonObject, type ToolContext, type ToolDefinition, type ToolManifest } from '@toolgate/contracts';
import { booleanArg, stringArg, WORKSPACE_PERMISSION } from './arguments.js';
import { MAX_PATH_LENGTH, shown, Workspace } from './workspace.js';

/** Largest file one write may produce, in bytes of UTF-8. */
export const MAX_WRITE_BYTES = 5 * 1024 * 1024;

export const writeFileManifest: ToolManifest = {
  name: 'write_file',
  version: '1.0.0',
  description:
    'Creates or replaces a text file in the workspace with `content` (at most 5 MiB), atomically: readers see the old file or the new one, never a mix. Missing parent directories are created unless `create_dirs` is false. Files inside .git are refused.',
  provenance: 'first-party',
  risk: 'medium',
  permissions: WORKSPACE_PERMISSION,
  input: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, maxLength: MAX_PATH_LENGTH, description: 'File path relative to the workspace root.' },
      content: { type: 'string', maxLength: MAX_WRITE_BYTES, description: 'The complete new content of the file.' },
      create_dirs: { type: 'boolean', description: 'Create missing parent directories. Default true.' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      path: { type: 'string' },
      bytes_written: { type: 'integer', minimum: 0 },
      created: { type: 'boolean' },
    },
    required: ['path', 'bytes_written', 'created'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 10_000,
};

async function writeFile(args: JsonObject, ctx: ToolContext) {
  const given = stringArg(args, 'path');
  const content = stringArg(args, 'content');
  const createDirs = booleanArg(args, 'create_dirs', true);
  const data = Buffer.from(content, 'utf8');
  if (data.length > MAX_WRITE_BYTES) {
    throw new ToolError(`the content of '${shown(given)}' is ${data.length} bytes; at most ${MAX_WRITE_BYTES} may be written`, 'TOO_LARGE');
  }
  const workspace = await Workspace.open(ctx.workspaceRoot);
  const { rel, created } = await workspace.writeFile(given, data, { createDirs });
  return { path: Workspace.display(rel), bytes_written: data.length, created };
}

export const writeFileTool: ToolDefinition = { manifest: writeFileManifest, handler: { invoke: writeFile } };
