import { lstat } from 'node:fs/promises';
import type { JsonObject, ToolContext, ToolDefinition, ToolManifest } from '@toolgate/contracts';
import { integerArg, stringArg, WORKSPACE_PERMISSION } from './arguments.js';
import { walkTree } from './tree-walk.js';
import { MAX_PATH_LENGTH, Workspace } from './workspace.js';

export const DEFAULT_LIST_ENTRIES = 1000;
export const MAX_LIST_ENTRIES = 5000;

export const listDirManifest: ToolManifest = {
  name: 'list_dir',
  version: '1.0.0',
  description:
    'Lists a directory of the workspace (default its root), sorted by name: each entry with its type (file, directory, symlink, other) and, for files, its size in bytes. Symlinks are listed, not followed.',
  provenance: 'first-party',
  risk: 'low',
  permissions: WORKSPACE_PERMISSION,
  input: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, maxLength: MAX_PATH_LENGTH, description: "Directory relative to the workspace root. Default '.'." },
      limit: { type: 'integer', minimum: 1, maximum: MAX_LIST_ENTRIES, description: `Most entries to return. Default ${DEFAULT_LIST_ENTRIES}.` },
    },
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      path: { type: 'string' },
      entries: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string' },
            type: { enum: ['file', 'directory', 'symlink', 'other'] },
            size: { type: 'integer', minimum: 0 },
          },
          required: ['name', 'type'],
          additionalProperties: false,
        },
      },
      truncated: { type: 'boolean' },
    },
    required: ['path', 'entries', 'truncated'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 10_000,
};

async function listDir(args: JsonObject, ctx: ToolContext) {
  const given = stringArg(args, 'path', '.');
  const limit = integerArg(args, 'limit', DEFAULT_LIST_ENTRIES, 1, MAX_LIST_ENTRIES);
  const workspace = await Workspace.open(ctx.workspaceRoot);
  const { handle, rel } = await workspace.openDirectory(given);
  try {
    const entries: { name: string; type: string; size?: number }[] = [];
    const complete = await walkTree(handle, { maxDepth: 1, maxEntries: limit, signal: ctx.signal }, async (entry) => {
      if (entry.type !== 'file') {
        entries.push({ name: entry.name, type: entry.type });
        return;
      }
      // lstat relative to the open directory: the size of the entry itself, never a link target.
      const stat = await lstat(`/proc/self/fd/${entry.parent.fd}/${entry.name}`).catch(() => undefined);
      entries.push(stat ? { name: entry.name, type: 'file', size: stat.size } : { name: entry.name, type: 'file' });
    });
    return { path: Workspace.display(rel), entries, truncated: !complete };
  } finally {
    await handle.close();
  }
}

export const listDirTool: ToolDefinition = { manifest: listDirManifest, handler: { invoke: listDir } };
