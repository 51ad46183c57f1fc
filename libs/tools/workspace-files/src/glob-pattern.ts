import { ToolError } from '@toolgate/contracts';
import { RE2JS } from 're2js';

/** Longest glob accepted. */
export const MAX_GLOB_LENGTH = 1024;

/** Most path components a glob may have; deeper globs are refused, not slow. */
export const MAX_GLOB_SEGMENTS = 32;
/** Most `*` wildcards a glob may hold: each one is a state the matcher may have to track. */
export const MAX_GLOB_STARS = 32;

/** A compiled glob: the matcher and how deep a walk needs to go for it. */
export interface Glob {
  readonly test: (path: string) => boolean;
  /** Path components a match can have at most; Infinity with `**`. */
  readonly maxDepth: number;
}

/** A `**` component: any number of whole components. */
const GLOBSTAR = 'globstar';
/** Any one component (what a trailing `**` needs at least). */
const ANY_NAME = 'any';
type Part = RE2JS | typeof GLOBSTAR | typeof ANY_NAME;

/**
 * Compiles a glob over `/`-separated relative paths: `*` any characters but `/`, `?` one
 * character but `/`, `**` as a whole component any number of components (including none),
 * `[abc]`/`[!a-z]` character classes, `{a,b}` alternatives (nestable). Dot files match like any
 * other name. The pattern is matched against the whole path, as in a shell: `*.ts` matches only
 * at the top level, `**\/*.ts` at any depth. A `]` first in a class is a member (`[]a]` is `]` or
 * `a`, `[!]a]` neither), as in POSIX shells.
 *
 * An agent chooses the pattern, and a backtracking matcher on the event loop can take
 * exponential time on patterns like `*a*a*a*a*a*b`. So each component of the glob becomes an
 * RE2 expression run by a linear-time engine against one name (at most 255 bytes), and `**` is
 * matched over whole components without any regex. Matching is by character (code point), so
 * `?` matches one emoji. Globs of more than 32 components or 32 `*` are refused.
 */
export function compileGlob(pattern: string): Glob {
  if (typeof pattern !== 'string' || pattern.length === 0) throw new ToolError('the glob pattern is empty', 'INVALID_PATTERN');
  if (pattern.length > MAX_GLOB_LENGTH) throw new ToolError(`the glob pattern is longer than ${MAX_GLOB_LENGTH} characters`, 'INVALID_PATTERN');
  if (pattern.includes('\0')) throw new ToolError('the glob pattern contains a NUL byte', 'INVALID_PATTERN');
  if (pattern.startsWith('/')) throw new ToolError('the glob pattern must be relative to the search directory', 'INVALID_PATTERN');
  const segments = pattern.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new ToolError("the glob pattern must not contain '..'", 'INVALID_PATTERN');
  if (segments.length > MAX_GLOB_SEGMENTS) throw new ToolError(`the glob pattern has more than ${MAX_GLOB_SEGMENTS} path components`, 'INVALID_PATTERN');
  const stars = segments.filter((s) => s !== '**').reduce((n, s) => n + (s.match(/\*+/g)?.length ?? 0), 0);
  if (stars > MAX_GLOB_STARS) throw new ToolError(`the glob pattern has more than ${MAX_GLOB_STARS} '*' wildcards`, 'INVALID_PATTERN');

  const parts: Part[] = segments.map((segment) => {
    if (segment === '**') return GLOBSTAR;
    try {
      return RE2JS.compile(translateSegment(segment, pattern));
    } catch (error) {
      if (error instanceof ToolError) throw error;
      // What is left to fail is a class range written backwards, like `[z-a]`.
      throw new ToolError(`the glob pattern '${pattern}' has an invalid character class`, 'INVALID_PATTERN');
    }
  });
  // A trailing `**` stands for everything below: at least one more component (`src/**` does not
  // match `src` itself).
  if (parts[parts.length - 1] === GLOBSTAR) parts.splice(parts.length - 1, 0, ANY_NAME);
  return {
    test: (path) => matchParts(parts, path.split('/')),
    maxDepth: segments.includes('**') ? Number.POSITIVE_INFINITY : segments.length,
  };
}

/**
 * Whether the names match the parts one for one, each `**` taking any number of names. The
 * classic wildcard walk: on a mismatch, go back to the last `**` and let it take one more name.
 * At most parts × names name tests, each linear in one name.
 */
function matchParts(parts: readonly Part[], names: readonly string[]): boolean {
  let p = 0;
  let n = 0;
  let starPart = -1;
  let starName = 0;
  while (n < names.length) {
    const part = parts[p];
    if (part === GLOBSTAR) {
      starPart = p++;
      starName = n;
    } else if (part !== undefined && (part === ANY_NAME || part.testExact(names[n] ?? ''))) {
      p++;
      n++;
    } else if (starPart !== -1) {
      p = starPart + 1;
      n = ++starName;
    } else {
      return false;
    }
  }
  while (parts[p] === GLOBSTAR) p++;
  return p === parts.length;
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
