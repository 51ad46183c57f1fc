import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { ToolAbortedError, ToolError, type JsonObject, type ToolContext, type ToolDefinition, type ToolManifest } from '@toolgate/contracts';
import { booleanArg, integerArg, optionalStringArg, stringArg, WORKSPACE_PERMISSION } from './arguments.js';
import { compileGlob, MAX_GLOB_LENGTH } from './glob-pattern.js';
import { RegexWorker, type LineMatch } from './regex-worker.js';
import { looksBinary } from './text.js';
import { walkTree } from './tree-walk.js';
import { MAX_PATH_LENGTH, Workspace } from './workspace.js';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

export const MAX_PATTERN_LENGTH = 1024;
export const DEFAULT_GREP_MATCHES = 200;
export const MAX_GREP_MATCHES = 2000;
/** Files larger than this are skipped (reported in `files_skipped`). */
export const MAX_GREP_FILE_BYTES = 4 * 1024 * 1024;
/** Bytes searched in total before the search stops with a partial result. */
export const MAX_GREP_TOTAL_BYTES = 64 * 1024 * 1024;
/** Characters of a matching line returned. */
export const MATCH_LINE_WIDTH = 500;
/** Time one file may take to match before the pattern is declared too slow. */
export const PATTERN_BUDGET_MS = 2000;
const MAX_GREP_VISITS = 200_000;

export const grepManifest: ToolManifest = {
  name: 'grep',
  version: '1.0.0',
  description:
    'Searches text files of the workspace for lines matching a JavaScript regular expression (or a fixed string), in a file or under a directory (default the root), optionally only files matching `glob`. Returns file, line number and line text (cut at 500 characters), at most `max_matches`. Binary files, files over 4 MiB and .git are skipped; symlinks are not followed.',
  provenance: 'first-party',
  risk: 'low',
  permissions: WORKSPACE_PERMISSION,
  input: {
    type: 'object',
    properties: {
      pattern: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_LENGTH, description: 'Regular expression (JavaScript syntax), or the literal text with fixed_string.' },
      path: { type: 'string', minLength: 1, maxLength: MAX_PATH_LENGTH, description: "File or directory to search, relative to the workspace root. Default '.'." },
      glob: { type: 'string', minLength: 1, maxLength: MAX_GLOB_LENGTH, description: "Only search files whose path below `path` matches this glob, e.g. '**/*.ts'." },
      ignore_case: { type: 'boolean', description: 'Match case-insensitively. Default false.' },
      fixed_string: { type: 'boolean', description: 'Treat the pattern as literal text. Default false.' },
      max_matches: { type: 'integer', minimum: 1, maximum: MAX_GREP_MATCHES, description: `Most matches to return. Default ${DEFAULT_GREP_MATCHES}.` },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      matches: {
        type: 'array',
        items: {
          type: 'object',
          properties: { path: { type: 'string' }, line: { type: 'integer', minimum: 1 }, text: { type: 'string' } },
          required: ['path', 'line', 'text'],
          additionalProperties: false,
        },
      },
      truncated: { type: 'boolean' },
      files_searched: { type: 'integer', minimum: 0 },
      files_skipped: { type: 'integer', minimum: 0 },
    },
    required: ['matches', 'truncated', 'files_searched', 'files_skipped'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 30_000,
};

async function grep(args: JsonObject, ctx: ToolContext) {
  const pattern = stringArg(args, 'pattern');
  const given = stringArg(args, 'path', '.');
  const fileGlob = optionalStringArg(args, 'glob');
  const ignoreCase = booleanArg(args, 'ignore_case', false);
  const fixed = booleanArg(args, 'fixed_string', false);
  const maxMatches = integerArg(args, 'max_matches', DEFAULT_GREP_MATCHES, 1, MAX_GREP_MATCHES);
  const filter = fileGlob === undefined ? undefined : compileGlob(fileGlob);
  if (!fixed) {
    try {
      new RegExp(pattern, ignoreCase ? 'i' : '');
    } catch (error) {
      throw new ToolError(`the pattern is not a valid regular expression: ${(error as Error).message}`, 'INVALID_PATTERN');
    }
  }

  const workspace = await Workspace.open(ctx.workspaceRoot);
  // Every file is matched in the worker, fixed strings too: the gateway's thread only reads files.
  let worker: RegexWorker | undefined;
  const match = (content: Uint8Array, limit: number): Promise<LineMatch[]> => {
    worker ??= new RegexWorker(pattern, ignoreCase ? 'i' : '', fixed);
    return worker.match(content, limit, MATCH_LINE_WIDTH, PATTERN_BUDGET_MS, ctx.signal);
  };

  const matches: { path: string; line: number; text: string }[] = [];
  let searched = 0;
  let skipped = 0;
  let bytes = 0;
  let truncated = false;

  /** Searches one opened file; false once the search must stop. */
  const search = async (file: FileHandle, display: string): Promise<boolean> => {
    if (ctx.signal.aborted) throw new ToolAbortedError('the call was aborted');
    await workspace.verify(file, display);
    const stat = await file.stat();
    if (!stat.isFile() || stat.size > MAX_GREP_FILE_BYTES) {
      skipped++;
      return true;
    }
    if (bytes + stat.size > MAX_GREP_TOTAL_BYTES) {
      truncated = true;
      return false;
    }
    const content = await file.readFile();
    bytes += content.length;
    if (looksBinary(content)) {
      skipped++;
      return true;
    }
    searched++;
    const found = await match(content, maxMatches - matches.length + 1);
    for (const m of found) {
      if (matches.length >= maxMatches) {
        truncated = true;
        return false;
      }
      matches.push({ path: display, line: m.line, text: m.text });
    }
    return true;
  };

  try {
    const target = await workspace.openFile(given).catch(async (error: unknown) => {
      if (error instanceof ToolError && error.reason === 'IS_A_DIRECTORY') return undefined;
      throw error;
    });
    if (target) {
      try {
        await search(target.handle, Workspace.display(target.rel));
      } finally {
        await target.handle.close();
      }
    } else {
      const { handle, rel } = await workspace.openDirectory(given);
      const prefix = rel.length === 0 ? '' : `${rel.join('/')}/`;
      try {
        const complete = await walkTree(handle, { maxDepth: Number.POSITIVE_INFINITY, maxEntries: MAX_GREP_VISITS, signal: ctx.signal }, async (entry) => {
          if (entry.type !== 'file' || (filter && !filter.test(entry.path))) return true;
          let file: FileHandle;
          try {
            // Relative to the open parent, never following a link: the file is the one the walk saw.
            file = await open(`/proc/self/fd/${entry.parent.fd}/${entry.name}`, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
          } catch {
            skipped++;
            return true;
          }
          try {
            return await search(file, `${prefix}${entry.path}`);
          } finally {
            await file.close();
          }
        });
        if (!complete) truncated = true;
      } finally {
        await handle.close();
      }
    }
  } finally {
    await worker?.close();
  }
  return { matches, truncated, files_searched: searched, files_skipped: skipped };
}

export const grepTool: ToolDefinition = { manifest: grepManifest, handler: { invoke: grep } };
