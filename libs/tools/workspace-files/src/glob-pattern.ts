import { ToolError } from '@toolgate/contracts';
import { RE2JS } from 're2js';

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
 * at the top level, `**\/*.ts` at any depth. A `]` first in a class is a member (`[]a]` is `]` or
 * `a`, `[!]a]` neither), as in POSIX shells.
 *
 * The glob becomes an RE2 expression run by a linear-time engine: a backtracking matcher on the
 * event loop can take exponential time on patterns like `*a*a*a*a*a*b`, and an agent chooses the
 * pattern. Matching is by character (code point), so `?` matches one emoji.
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
      source += last ? '(?s:.*)' : '(?:[^/]+/)*';
      return;
    }
    source += translateSegment(segment, pattern) + (last ? '' : '/');
  });
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(source);
  } catch {
    // What is left to fail is a class range written backwards, like `[z-a]`.
    throw new ToolError(`the glob pattern '${pattern}' has an invalid character class`, 'INVALID_PATTERN');
  }
  return {
    // Anchored at both ends: the glob describes the whole path.
    test: (path) => regex.testExact(path),
    maxDepth: segments.includes('**') ? Number.POSITIVE_INFINITY : segments.length,
  };
}

/** One path component of a glob as an RE2 expression (never matching `/`). */
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
      const negated = segment[i + 1] === '!' || segment[i + 1] === '^';
      const first = i + (negated ? 2 : 1);
      // The first member is never the closing bracket: `[]a]` and `[!]a]` hold a `]`.
      const close = segment.indexOf(']', first + 1);
      if (close === -1) {
        out += '\\[';
        continue;
      }
      let body = segment.slice(first, close);
      // Every member is literal but `-` (a range): backslash, brackets and caret are escaped.
      body = body.replace(/[\\[\]^]/g, '\\$&');
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
  return c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
