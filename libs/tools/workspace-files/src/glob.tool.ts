import type { JsonObject, ToolContext, ToolDefinition, ToolManifest } from '@toolgate/contracts';
import { integerArg, stringArg, WORKSPACE_PERMISSION } from './arguments.js';
import { compileGlob, MAX_GLOB_LENGTH } from './glob-pattern.js';
import { walkTree } from './tree-walk.js';
import { MAX_PATH_LENGTH, Workspace } from './workspace.js';

export const DEFAULT_GLOB_RESULTS = 1000;
export const MAX_GLOB_RESULTS = 10_000;
/** Entries a glob looks at before it stops and reports a partial result. */
export const MAX_GLOB_VISITS = 200_000;

export const globManifest: ToolManifest = {
  name: 'glob',
  version: '1.0.0',
  description:
    "Finds paths in the workspace matching a glob, relative to `path` (default the root): `*` and `?` within one name, `**` across directories, `[a-z]`, `{ts,js}`. `*.ts` matches only directly in `path`; `**/*.ts` at any depth. Returns workspace-relative paths sorted by name, directories with a trailing '/'. Symlinks are listed, never followed; .git is not searched.",
  provenance: 'first-party',
  risk: 'low',
  permissions: WORKSPACE_PERMISSION,
  input: {
    type: 'object',
    properties: {
      pattern: { type: 'string', minLength: 1, maxLength: MAX_GLOB_LENGTH, description: "A glob such as '**/*.ts' or 'src/*.{js,json}'." },
      path: { type: 'string', minLength: 1, maxLength: MAX_PATH_LENGTH, description: "Directory to search from, relative to the workspace root. Default '.'." },
      limit: { type: 'integer', minimum: 1, maximum: MAX_GLOB_RESULTS, description: `Most paths to return. Default ${DEFAULT_GLOB_RESULTS}.` },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      matches: { type: 'array', items: { type: 'string' } },
      truncated: { type: 'boolean' },
    },
    required: ['matches', 'truncated'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 20_000,
};

async function glob(args: JsonObject, ctx: ToolContext) {
  const pattern = compileGlob(stringArg(args, 'pattern'));
  const given = stringArg(args, 'path', '.');
  const limit = integerArg(args, 'limit', DEFAULT_GLOB_RESULTS, 1, MAX_GLOB_RESULTS);
  const workspace = await Workspace.open(ctx.workspaceRoot);
  const { handle, rel } = await workspace.openDirectory(given);
  try {
    const prefix = rel.length === 0 ? '' : `${rel.join('/')}/`;
    const matches: string[] = [];
    let truncated = false;
    const complete = await walkTree(handle, { maxDepth: pattern.maxDepth, maxEntries: MAX_GLOB_VISITS, signal: ctx.signal }, (entry) => {
      if (!pattern.test(entry.path)) return true;
      if (matches.length >= limit) {
        truncated = true;
        return false;
      }
      matches.push(`${prefix}${entry.path}${entry.type === 'directory' ? '/' : ''}`);
      return true;
    });
    return { matches, truncated: truncated || !complete };
  } finally {
    await handle.close();
  }
}

export const globTool: ToolDefinition = { manifest: globManifest, handler: { invoke: glob } };
