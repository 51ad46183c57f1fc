import { ToolError } from '@toolgate/contracts';

/** Longest glob accepted. */
export const MAX_GLOB_LENGTH = 1024;

/** A compiled glob: the matcher and how deep a walk needs to go for it. */
export interface Glob {
  readonly test: (path: string) => boolean;
  /** Path components a match can have at most; Infinity with `**`. */
  readonly maxDepth: number;
}

/**
 * Compiles a glob over `/`-separated relative paths: `*` any characters but `/`, `?` one
 * character but `/`, `**` as a whole component any number of components (including none),
 * `[abc]`/`[!a-z]` character classes, `{a,b}` alternatives (nestable). Dot files match like any
 * other name. The pattern is matched against the whole path, as in a shell: `*.ts` matches only
 * at the top level, `**\/*.ts` at any depth.
 */
export function compileGlob(pattern: string): Glob {
  if (typeof pattern !== 'string' || pattern.length === 0) throw new ToolError('the glob pattern is empty', 'INVALID_PATTERN');
  if (pattern.length > MAX_GLOB_LENGTH) throw new ToolError(`the glob pattern is longer than ${MAX_GLOB_LENGTH} characters`, 'INVALID_PATTERN');
  if (pattern.includes('\0')) throw new ToolError('the glob pattern contains a NUL byte', 'INVALID_PATTERN');
  if (pattern.startsWith('/')) throw new ToolError('the glob pattern must be relative to the search directory', 'INVALID_PATTERN');
  const segments = pattern.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new ToolError("the glob pattern must not contain '..'", 'INVALID_PATTERN');

  let source = '';
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '**') {
      // Zero or more whole components, each followed by '/', or everything when last.
      source += last ? '.*' : '(?:[^/]+/)*';
      return;
    }
    source += translateSegment(segment, pattern) + (last ? '' : '/');
  });
  const regex = new RegExp(`^${source}$`, 's');
  return {
    test: (path) => regex.test(path),
    maxDepth: segments.includes('**') ? Number.POSITIVE_INFINITY : segments.length,
  };
}

/** One path component of a glob as a regular expression (never matching `/`). */
function translateSegment(segment: string, pattern: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] ?? '';
    if (c === '\\' && i + 1 < segment.length) {
      out += escape(segment[++i] ?? '');
    } else if (c === '*') {
      while (segment[i + 1] === '*') i++;
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const close = segment.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
        continue;
      }
      let body = segment.slice(i + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      // Only backslash and a leading caret are special inside a JS class besides ']' (excluded above).
      body = body.replace(/\\/g, '\\\\').replace(/^\^/, '\\^');
      out += negated ? `[^/${body}]` : `[${body}]`;
      i = close;
    } else if (c === '{') {
      braces++;
      out += '(?:';
    } else if (c === ',' && braces > 0) {
      out += '|';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else {
      out += escape(c);
    }
  }
  if (braces !== 0) throw new ToolError(`the glob pattern '${pattern}' has an unclosed '{'`, 'INVALID_PATTERN');
  return out;
}

function escape(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
