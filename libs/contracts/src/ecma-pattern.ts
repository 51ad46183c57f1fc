// One reading of JSON Schema `pattern`s for every schema compiler in Toolgate (the gateway's
// validators and the MCP client's): an ECMA-262 pattern rewritten into the syntax of a
// linear-time engine (RE2), with the same meaning, or refused with a reason. Pure string code, so
// contracts still imports nothing; each compiler brings the engine itself.

/** Why a pattern cannot be run by a linear-time engine. The message names the construct. */
export class PatternRefused extends Error {
  override readonly name = 'PatternRefused';
}

/** Longest pattern accepted: compiling one costs the event loop time in proportion to its length. */
export const MAX_PATTERN_SOURCE = 2048;

// ECMA-262 WhiteSpace and LineTerminator, what `\s` means there (RE2's `\s` is ASCII only).
const SPACE_POINTS: readonly (readonly [number, number])[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const MAX_CODE_POINT = 0x10ffff;

const hex = (n: number): string => `\\x{${n.toString(16).toUpperCase()}}`;
const range = ([from, to]: readonly [number, number]): string => (from === to ? hex(from) : `${hex(from)}-${hex(to)}`);

function complement(ranges: readonly (readonly [number, number])[]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [from, to] of ranges) {
    if (from > next) out.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** Class members (no brackets) equal to ECMA-262 `\s` and `\S`. */
const SPACE_MEMBERS = SPACE_POINTS.map(range).join('');
const NOT_SPACE_MEMBERS = complement(SPACE_POINTS).map(range).join('');
/** ECMA-262 `.` without the `s` flag: anything but a line terminator. */
const DOT = `[^${hex(0x0a)}${hex(0x0d)}${hex(0x2028)}${hex(0x2029)}]`;
const NOTHING = `[^${hex(0)}-${hex(MAX_CODE_POINT)}]`;
const ANYTHING = `[${hex(0)}-${hex(MAX_CODE_POINT)}]`;

const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

/**
 * Rewrites an ECMA-262 pattern, read as `new RegExp(source, 'u')` reads it (the JSON Schema
 * dialect), into RE2 syntax that matches exactly the same strings: `\s`, `\S` and `.` are spelt
 * out (RE2's are narrower), `\u` escapes become `\x{…}`, named groups become plain groups (a
 * `test` needs no captures). Throws `PatternRefused` for what a linear-time engine cannot do
 * (backreferences, lookahead, lookbehind), for inline modifiers, and for a pattern that is not
 * valid ECMA-262 at all. Construction of the native RegExp only parses; nothing is matched.
 */
export function ecmaToLinearPattern(source: string): string {
  if (typeof source !== 'string') throw new PatternRefused('the pattern is not a string');
  if (source.length > MAX_PATTERN_SOURCE) throw new PatternRefused(`the pattern is longer than ${MAX_PATTERN_SOURCE} characters`);
  try {
    new RegExp(source, 'u');
  } catch {
    throw new PatternRefused('the pattern is not a valid ECMA-262 regular expression');
  }
  return new Translator(source).run();
}

class Translator {
  private i = 0;
  private out = '';

  constructor(private readonly src: string) {}

  run(): string {
    const src = this.src;
    if (src.length === 0) return '(?:)';
    while (this.i < src.length) {
      const c = src[this.i] ?? '';
      if (c === '\\') {
        this.out += this.escape(false);
      } else if (c === '[') {
        this.klass();
      } else if (c === '.') {
        this.out += DOT;
        this.i++;
      } else if (c === '(') {
        this.group();
      } else {
        // Everything else (literals, `^ $ | ) * + ? {n,m}`) means the same in both dialects:
        // the native parse above has already refused lone `]`, `{` and `}`.
        const cp = src.codePointAt(this.i) ?? 0;
        const text = String.fromCodePoint(cp);
        this.out += text;
        this.i += text.length;
      }
    }
    return this.out;
  }

  private group(): void {
    const src = this.src;
    this.i++;
    if (src[this.i] !== '?') {
      this.out += '(';
      return;
    }
    const next = src[this.i + 1];
    if (next === ':') {
      this.out += '(?:';
      this.i += 2;
    } else if (next === '=' || next === '!') {
      throw new PatternRefused('the pattern uses a lookahead ((?= or (?!), which a linear-time engine cannot run');
    } else if (next === '<' && (src[this.i + 2] === '=' || src[this.i + 2] === '!')) {
      throw new PatternRefused('the pattern uses a lookbehind ((?<= or (?<!), which a linear-time engine cannot run');
    } else if (next === '<') {
      // A named group: its name only matters to captures and backreferences, which are refused.
      const close = src.indexOf('>', this.i);
      this.out += '(?:';
      this.i = close + 1;
    } else {
      throw new PatternRefused('the pattern uses inline modifiers ((?i: and the like), which are not supported');
    }
  }

  private klass(): void {
    const src = this.src;
    this.i++;
    const negated = src[this.i] === '^';
    if (negated) this.i++;
    if (src[this.i] === ']') {
      // `[]` matches nothing and `[^]` anything; RE2 would read `]` as a member.
      this.out += negated ? ANYTHING : NOTHING;
      this.i++;
      return;
    }
    let body = '';
    while (this.i < src.length && src[this.i] !== ']') {
      const c = src[this.i] ?? '';
      if (c === '\\') {
        body += this.escape(true);
      } else if (c === '-') {
        body += '-';
        this.i++;
      } else {
        const cp = src.codePointAt(this.i) ?? 0;
        const text = String.fromCodePoint(cp);
        // `[`, `^`, `&`, `~` and `:` are plain members here; escaped, RE2 cannot take them for syntax.
        body += /^[[^&~:]$/.test(text) ? `\\${text}` : text;
        this.i += text.length;
      }
    }
    this.i++;
    this.out += `[${negated ? '^' : ''}${body}]`;
  }

  /** One escape at `this.i` (a backslash), as RE2 text: a class member when `inClass`. */
  private escape(inClass: boolean): string {
    const src = this.src;
    const c = src[this.i + 1] ?? '';
    this.i += 2;
    switch (c) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 't':
      case 'n':
      case 'v':
      case 'f':
      case 'r':
        return `\\${c}`;
      case 's':
        return inClass ? SPACE_MEMBERS : `[${SPACE_MEMBERS}]`;
      case 'S':
        return inClass ? NOT_SPACE_MEMBERS : `[${NOT_SPACE_MEMBERS}]`;
      case 'b':
        return inClass ? hex(0x08) : '\\b';
      case 'B':
        return '\\B';
      case '0':
        return hex(0);
      case 'c': {
        const letter = src.charCodeAt(this.i);
        this.i++;
        return hex(letter % 32);
      }
      case 'x': {
        const value = parseInt(src.slice(this.i, this.i + 2), 16);
        this.i += 2;
        return hex(value);
      }
      case 'u':
        return hex(this.unicodeEscape());
      case 'p':
      case 'P':
        return this.property(c);
      case 'k':
        throw new PatternRefused('the pattern uses a named backreference (\\k<…>), which a linear-time engine cannot run');
      default:
        if (c >= '1' && c <= '9') throw new PatternRefused('the pattern uses a backreference (\\1 and the like), which a linear-time engine cannot run');
        // An identity escape of a syntax character, `/` or (in a class) `-`: punctuation, which
        // RE2 also reads as itself when escaped.
        return `\\${c}`;
    }
  }

  /** The code point of a `\u` escape whose `\u` is already consumed: `{…}`, or 4 digits, or a surrogate pair. */
  private unicodeEscape(): number {
    const src = this.src;
    if (src[this.i] === '{') {
      const close = src.indexOf('}', this.i);
      const value = parseInt(src.slice(this.i + 1, close), 16);
      this.i = close + 1;
      return value;
    }
    const unit = parseInt(src.slice(this.i, this.i + 4), 16);
    this.i += 4;
    if (unit >= 0xd800 && unit <= 0xdbff && src[this.i] === '\\' && src[this.i + 1] === 'u' && [2, 3, 4, 5].every((k) => isHex(src[this.i + k]))) {
      const low = parseInt(src.slice(this.i + 2, this.i + 6), 16);
      if (low >= 0xdc00 && low <= 0xdfff) {
        this.i += 6;
        return (unit - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
      }
    }
    if (unit >= 0xd800 && unit <= 0xdfff) throw new PatternRefused('the pattern names a lone surrogate (\\uD800 to \\uDFFF), which cannot be matched by code point');
    return unit;
  }

  /** `\p{…}` / `\P{…}` with `General_Category=` and `Script=` prefixes dropped, as RE2 names them. */
  private property(kind: 'p' | 'P'): string {
    const src = this.src;
    const close = src.indexOf('}', this.i);
    const spec = src.slice(this.i + 1, close);
    this.i = close + 1;
    const eq = spec.indexOf('=');
    const key = eq === -1 ? '' : spec.slice(0, eq);
    const value = eq === -1 ? spec : spec.slice(eq + 1);
    if (key !== '' && key !== 'General_Category' && key !== 'gc' && key !== 'Script' && key !== 'sc') {
      throw new PatternRefused(`the pattern uses the Unicode property ${key}, which is not supported`);
    }
    // The engine knows short category names and script names; anything else fails its compile.
    return `\\${kind}{${value}}`;
  }
}
