// JSON request bodies parsed with their nesting bounded first (ADR 0076). V8's JSON.parse builds
// every level of a 200,000-deep body in one turn of the event loop (40-60 ms for a 400 KB body on
// this kind of machine, plus its garbage collection), and no call may nest its arguments deeper
// than 32 levels anyway. One linear scan measures the depth; a text deeper than the bound is
// checked to be JSON without building it, and the text that is parsed holds `null` in place of
// what lies deeper.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * How deep a request body may nest before what lies deeper is cut. Every depth bound behind the
 * HTTP faces is lower (the arguments' 32 levels, any REST input's 34, a relayed answer's 64), so
 * a value cut here was already past each of them and its check refuses the body with the same words.
 */
export const MAX_BODY_DEPTH = 256;

/**
 * How many containers at the bound may hold a deeper value before the body is refused instead of
 * cut: each cut is a piece of the new text, and a body of 210,000 such containers would cost more
 * than the parse it replaces. No request an agent means to send is deep in more than a few places.
 */
export const MAX_BODY_CUTS = 64;

/** A body nested past the bound in more than {@link MAX_BODY_CUTS} places: refused, not cut. */
export class TooDeepJsonError extends Error {
  constructor(maxDepth: number) {
    super(`the request nests deeper than ${maxDepth} levels in more than ${MAX_BODY_CUTS} places`);
    this.name = 'TooDeepJsonError';
  }
}

/** A body's text with what nests deeper than the bound cut (see {@link boundJsonDepth}), and whether anything was. */
export interface BoundedJsonText {
  readonly text: string;
  readonly cut: boolean;
}

/**
 * From index `i`, where the text is `depth` levels deep, the index of the next array or object
 * that opens past `maxDepth` levels (the text is then `maxDepth` deep there), or the text's length.
 * Strings are jumped over; no check of anything else.
 */
function nextDeepOpening(text: string, i: number, depth: number, maxDepth: number): number {
  const length = text.length;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = endOfString(text, i);
      continue;
    }
    if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (depth === maxDepth) return i;
      depth++;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth = Math.max(0, depth - 1);
    }
    i++;
  }
  return length;
}

/** In a valid text, from the array or object opening at `open`, the index of the close of the container that holds it. */
function closeOfEnclosing(text: string, open: number): number {
  const length = text.length;
  let inner = 0;
  let i = open;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = endOfString(text, i);
      continue;
    }
    if (code === OPEN_OBJECT || code === OPEN_ARRAY) inner++;
    else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      if (inner === 0) return i;
      inner--;
    }
    i++;
  }
  return length;
}

/** The index just past the string whose opening quote is at `open`, or the text's length when it never closes (no check of its contents). */
function endOfString(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let slashes = 0;
    while (quote - slashes - 1 >= from && text.charCodeAt(quote - slashes - 1) === BACKSLASH) slashes++;
    from = quote + 1;
    if (slashes % 2 === 0) return from;
  }
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function isHexDigit(code: number): boolean {
  return (code >= ZERO && code <= NINE) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

/** Just past the JSON string opening at `open`, or `~index` of its first fault (a control character, a bad escape, no close). */
function validString(text: string, open: number): number {
  const length = text.length;
  let i = open + 1;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) return i + 1;
    if (code < 0x20) return ~i;
    if (code === BACKSLASH) {
      const escaped = text.charCodeAt(i + 1);
      if (escaped === 0x75) {
        for (let k = 2; k < 6; k++) if (!isHexDigit(text.charCodeAt(i + k))) return ~(i + k);
        i += 6;
        continue;
      }
      // " \ / b f n r t
      if (escaped === QUOTE || escaped === BACKSLASH || escaped === 0x2f || escaped === 0x62 || escaped === 0x66 || escaped === 0x6e || escaped === 0x72 || escaped === 0x74) {
        i += 2;
        continue;
      }
      return ~(i + 1);
    }
    i++;
  }
  return ~length;
}

function digitsFrom(text: string, i: number): number {
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code < ZERO || code > NINE) break;
    i++;
  }
  return i;
}

/** Just past the JSON number starting at `start`, or `~index` of its first fault. */
function validNumber(text: string, start: number): number {
  let i = start;
  if (text.charCodeAt(i) === MINUS) i++;
  const first = text.charCodeAt(i);
  if (first === ZERO) i++;
  else if (first > ZERO && first <= NINE) i = digitsFrom(text, i + 1);
  else return ~i;
  if (text.charCodeAt(i) === DOT) {
    const end = digitsFrom(text, i + 1);
    if (end === i + 1) return ~end;
    i = end;
  }
  const exponent = text.charCodeAt(i);
  if (exponent === 0x65 || exponent === 0x45) {
    i++;
    const sign = text.charCodeAt(i);
    if (sign === PLUS || sign === MINUS) i++;
    const end = digitsFrom(text, i);
    if (end === i) return ~end;
    i = end;
  }
  return i;
}

// What the validator expects next.
const VALUE = 0;
const VALUE_OR_CLOSE = 1;
const KEY = 2;
const KEY_OR_CLOSE = 3;
const COLON_NEXT = 4;
const AFTER_VALUE = 5;

/**
 * The index of the first character at which `text` stops being JSON as `JSON.parse` reads it
 * (RFC 8259: whitespace is space, tab, LF and CR; no byte-order mark), or -1 when it is JSON.
 * Linear, and it builds nothing: its only allocation is one byte per open container.
 */
export function jsonFaultAt(text: string): number {
  const length = text.length;
  const open = new Uint8Array(length);
  let depth = 0;
  let state = VALUE;
  let i = 0;
  for (;;) {
    while (i < length && isWhitespace(text.charCodeAt(i))) i++;
    if (i >= length) return state === AFTER_VALUE && depth === 0 ? -1 : length;
    const code = text.charCodeAt(i);
    switch (state) {
      case VALUE:
      case VALUE_OR_CLOSE: {
        if (code === CLOSE_ARRAY && state === VALUE_OR_CLOSE) {
          depth--;
          i++;
          state = AFTER_VALUE;
          break;
        }
        if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
          open[depth++] = code;
          i++;
          state = code === OPEN_ARRAY ? VALUE_OR_CLOSE : KEY_OR_CLOSE;
          break;
        }
        let end: number;
        if (code === QUOTE) end = validString(text, i);
        else if (code === MINUS || (code >= ZERO && code <= NINE)) end = validNumber(text, i);
        else if (text.startsWith('true', i) || text.startsWith('null', i)) end = i + 4;
        else if (text.startsWith('false', i)) end = i + 5;
        else return i;
        if (end < 0) return ~end;
        i = end;
        state = AFTER_VALUE;
        break;
      }
      case KEY:
      case KEY_OR_CLOSE: {
        if (code === CLOSE_OBJECT && state === KEY_OR_CLOSE) {
          depth--;
          i++;
          state = AFTER_VALUE;
          break;
        }
        if (code !== QUOTE) return i;
        const end = validString(text, i);
        if (end < 0) return ~end;
        i = end;
        state = COLON_NEXT;
        break;
      }
      case COLON_NEXT:
        if (code !== COLON) return i;
        i++;
        state = VALUE;
        break;
      default: {
        // AFTER_VALUE
        if (depth === 0) return i;
        const container = open[depth - 1];
        if (code === COMMA) {
          i++;
          state = container === OPEN_ARRAY ? VALUE : KEY;
        } else if ((code === CLOSE_ARRAY && container === OPEN_ARRAY) || (code === CLOSE_OBJECT && container === OPEN_OBJECT)) {
          depth--;
          i++;
        } else {
          return i;
        }
      }
    }
  }
}

/**
 * `text` when it nests at most `maxDepth` levels (no copy, and no check: `JSON.parse` does that).
 * Otherwise the text must be JSON, checked without building it (a `SyntaxError` naming the
 * position when it is not, so a malformed deep body stays malformed). Then, in each container at
 * `maxDepth`, the first array or object is replaced by `null` and whatever follows it up to the
 * container's close is dropped, so a container costs one cut however many deep values it holds.
 * More than {@link MAX_BODY_CUTS} such containers throw {@link TooDeepJsonError}. What lies that deep is past every depth check behind the faces; where nothing checks depth (an
 * MCP request's `_meta`), a value that deep arrives as `null`. Linear; strings are jumped over
 * with native searches.
 */
export function boundJsonDepth(text: string, maxDepth = MAX_BODY_DEPTH): BoundedJsonText {
  const length = text.length;
  let deep = nextDeepOpening(text, 0, 0, maxDepth);
  if (deep === length) return { text, cut: false };
  const fault = jsonFaultAt(text);
  if (fault !== -1) throw new SyntaxError(`the JSON text is malformed at position ${fault} (it nests deeper than ${maxDepth} levels)`);
  const parts: string[] = [];
  let kept = 0;
  while (deep < length) {
    if (parts.length >= 2 * MAX_BODY_CUTS) throw new TooDeepJsonError(maxDepth);
    // The first deep value of the container at maxDepth becomes null; the rest of that container
    // is dropped, and its close is kept (the text is valid, so the close is there).
    parts.push(text.slice(kept, deep), 'null');
    kept = closeOfEnclosing(text, deep);
    deep = nextDeepOpening(text, kept, maxDepth, maxDepth);
  }
  parts.push(text.slice(kept));
  return { text: parts.join(''), cut: true };
}

/** `JSON.parse` of `text` with its nesting bounded first (see {@link boundJsonDepth}); throws a `SyntaxError` as `JSON.parse` does. */
export function parseBoundedJson(text: string, maxDepth = MAX_BODY_DEPTH): unknown {
  return JSON.parse(boundJsonDepth(text, maxDepth).text) as unknown;
}
