// What a transport learns of a JSON-RPC message it will not hold: the message is read past once,
// byte by byte, in whatever pieces it arrives, keeping only its top-level `id`, whether it is a
// response or a request, and its method name (ADR 0059).

/**
 * JSON-RPC error code the transport answers a request with when the server's response to it
 * was larger than one message may be (implementation-defined: outside the SDKs' own codes).
 */
export const MCP_RESULT_TOO_LARGE = -32_080;

/** What kind of JSON-RPC message a skipped line was, as far as its top-level keys tell. */
export type SkippedMessageKind = 'response' | 'request' | 'notification' | 'unknown';

/** What the scan of one skipped line found. */
export interface SkippedMessage {
  /** Bytes of the line, without its newline. */
  readonly bytes: number;
  /** `response`: a top-level `result` or `error`; `request`: a `method` and an `id`; `notification`: a `method` and no `id`. */
  readonly kind: SkippedMessageKind;
  /** The top-level `id`: a string or an integer, as `JSON.parse` would have read it (the last one, if repeated). */
  readonly id?: string | number;
  /** The top-level `method`, when it is a string of at most {@link MAX_METHOD_BYTES} bytes as written. */
  readonly method?: string;
}

/** Longest top-level `id` kept, as written (escapes included); a longer one counts as none. */
export const MAX_ID_BYTES = 1024;
/** Longest top-level `method` kept, as written. */
export const MAX_METHOD_BYTES = 256;
/** Escaped quotes closer together than this make the string scan read bytes one by one for a while. */
const DENSE_GAP = 64;
/** How far the string scan reads byte by byte once quotes came close together. */
const DENSE_WINDOW = 4096;
/** Longest key compared with the few names looked for; longer keys are none of them. */
const MAX_KEY_BYTES = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

/** Where the scan is inside the top-level object (depth 1); deeper levels only count brackets. */
const enum Slot {
  /** Nothing read yet but whitespace. */
  Start,
  /** After `{` or `,`: a key (or, after `{`, the closing `}`). */
  Key,
  /** After a key: its colon. */
  Colon,
  /** After the colon: the value. */
  Value,
  /** After a value: `,` or `}`. */
  After,
  /** The top-level object has closed: only whitespace may follow. */
  Closed,
  /** Not a JSON object as far as the scan can tell: nothing is reported. */
  Broken,
}

/** Which top-level member is being read. */
const enum Member {
  Other,
  Id,
  Method,
  Result,
  Error,
}

/**
 * Reads past one oversized JSON-RPC line, fed in pieces split anywhere (also inside a string,
 * an escape or a UTF-8 sequence: every byte JSON treats specially is ASCII, and no byte of a
 * multi-byte UTF-8 sequence is). Linear in the line, constant in memory: it keeps a bracket
 * depth, a few flags and at most {@link MAX_ID_BYTES} + {@link MAX_METHOD_BYTES} bytes of text.
 *
 * Keys are compared as `JSON.parse` decodes them (`"\u0069d"` is `id`), only at the top level
 * (an `id` inside `result` is not the message's), never inside strings. A line that is not one
 * well-formed JSON object as far as this can tell (brackets, top-level keys, colons and commas
 * are checked; the contents of deeper values are not) reports kind `unknown` and no id.
 */
export class OversizedMessageScanner {
  private bytes = 0;
  private slot = Slot.Start;
  /** Bracket depth: 1 inside the top-level object. */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The member whose key or value is being read at depth 1. */
  private member = Member.Other;
  /** Raw bytes of what is being captured (a key, an id or a method), or undefined when nothing is. */
  private capture: number[] | undefined;
  private captureLimit = 0;
  private captureOverflow = false;
  /** Set while an unquoted top-level value (number, literal) is being read. */
  private inScalar = false;
  private seenResult = false;
  private seenError = false;
  private seenMethod = false;
  /** The last top-level id: a value, `invalid` (null, an object, a fraction, too long), or undefined (none yet). */
  private id: string | number | 'invalid' | undefined;
  private method: string | undefined;
  /** Set after a top-level comma, where JSON allows no `}`. */
  private afterComma = false;
  /** Where the next quote and backslash of the current piece are (-1: none left; -2: not searched yet). */
  private nextQuote = -2;
  private nextBackslash = -2;

  /** Reads the next piece of the line (no newline in it: the line ends where the caller found one). */
  feed(piece: Uint8Array): void {
    this.bytes += piece.length;
    // Not searched yet in this piece (below any position).
    this.nextQuote = -2;
    this.nextBackslash = -2;
    const length = piece.length;
    let i = 0;
    while (i < length) {
      if (this.slot === Slot.Broken) return;
      if (this.inString) {
        i = this.capture === undefined ? this.skipString(piece, i) : this.readString(piece, i);
        continue;
      }
      if (this.depth > 1) {
        i = this.skipNested(piece, i);
        continue;
      }
      const byte = piece[i] as number;
      if (this.inScalar) {
        if (isScalarByte(byte)) {
          this.keep(byte);
          i++;
          continue;
        }
        this.endScalar();
      }
      this.structural(byte);
      i++;
    }
  }

  /** What was found, once the line has ended. */
  finish(): SkippedMessage {
    if (this.inScalar) this.endScalar();
    const complete = this.slot === Slot.Closed && !this.inString;
    if (!complete) return { bytes: this.bytes, kind: 'unknown' };
    const id = this.id === undefined || this.id === 'invalid' ? undefined : this.id;
    const kind: SkippedMessageKind =
      this.seenResult || this.seenError ? 'response' : this.seenMethod ? (this.id === undefined ? 'notification' : 'request') : 'unknown';
    return {
      bytes: this.bytes,
      kind,
      ...(id === undefined ? {} : { id }),
      ...(this.method === undefined ? {} : { method: this.method }),
    };
  }

  /** Reads string bytes from `i`; returns where to continue. Jumps over runs with no quote or backslash. */
  private readString(piece: Uint8Array, i: number): number {
    if (this.escaped) {
      this.escaped = false;
      this.keep(piece[i] as number);
      return i + 1;
    }
    // Each position is searched for once per piece, so a string dense in escapes stays linear.
    if (this.nextQuote !== -1 && this.nextQuote < i) this.nextQuote = piece.indexOf(QUOTE, i);
    if (this.nextBackslash !== -1 && this.nextBackslash < i) this.nextBackslash = piece.indexOf(BACKSLASH, i);
    const quote = this.nextQuote;
    const backslash = this.nextBackslash;
    const stop = quote === -1 ? backslash : backslash === -1 ? quote : Math.min(quote, backslash);
    const end = stop === -1 ? piece.length : stop;
    if (this.capture !== undefined) this.keepRun(piece, i, end);
    if (stop === -1) return end;
    if (stop === backslash) {
      this.escaped = true;
      this.keep(BACKSLASH);
      return stop + 1;
    }
    this.inString = false;
    this.endString();
    return stop + 1;
  }

  /**
   * Skips string bytes nobody keeps from `i` (the hot path: the bulk of a large result is strings);
   * returns where to continue. Sparse quotes are searched for natively, and a quote after an odd
   * run of backslashes is escaped, so a text dense in other escapes (a file's `\n`s) costs one
   * search; where quotes come close together (`\"\"\"…`) a byte loop is cheaper than a search
   * per quote, so the next {@link DENSE_WINDOW} bytes are read one by one.
   */
  private skipString(piece: Uint8Array, i: number): number {
    const length = piece.length;
    if (this.escaped) {
      // The piece before ended in a backslash: the first byte here is the escaped one.
      this.escaped = false;
      i++;
    }
    let dense = false;
    while (i < length) {
      if (dense) {
        dense = false;
        const stop = Math.min(length, i + DENSE_WINDOW);
        for (; i < stop; i++) {
          const byte = piece[i];
          if (byte === BACKSLASH) {
            if (i + 1 >= length) {
              this.escaped = true;
              return length;
            }
            i++;
          } else if (byte === QUOTE) {
            this.inString = false;
            this.endString();
            return i + 1;
          }
        }
        continue;
      }
      const quote = piece.indexOf(QUOTE, i);
      if (quote === -1) {
        this.escaped = backslashesBefore(piece, length, i) % 2 === 1;
        return length;
      }
      if (backslashesBefore(piece, quote, i) % 2 === 1) {
        dense = quote - i < DENSE_GAP;
        i = quote + 1;
        continue;
      }
      this.inString = false;
      this.endString();
      return quote + 1;
    }
    return i;
  }

  /** Skips the inside of a nested value from `i` up to a string or its end at depth 1; returns where to continue. */
  private skipNested(piece: Uint8Array, i: number): number {
    const length = piece.length;
    let depth = this.depth;
    for (; i < length; i++) {
      const byte = piece[i] as number;
      if (byte === QUOTE) {
        this.depth = depth;
        this.inString = true;
        return i + 1;
      }
      if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) depth++;
      else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        depth--;
        if (depth === 1) {
          this.depth = 1;
          this.slot = Slot.After;
          return i + 1;
        }
      }
    }
    this.depth = depth;
    return i;
  }

  /** One byte outside any string and any top-level scalar. */
  private structural(byte: number): void {
    if (isWhitespace(byte)) return;
    if (this.slot === Slot.Closed) {
      this.slot = Slot.Broken;
      return;
    }
    if (this.depth > 1) {
      // Inside a nested value only brackets and strings matter.
      if (byte === QUOTE) this.inString = true;
      else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) this.depth++;
      else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        this.depth--;
        if (this.depth === 1) this.slot = Slot.After;
      }
      return;
    }
    switch (this.slot) {
      case Slot.Start:
        if (byte === OPEN_OBJECT) {
          this.depth = 1;
          this.slot = Slot.Key;
        } else this.slot = Slot.Broken;
        return;
      case Slot.Key:
        if (byte === QUOTE) {
          this.inString = true;
          this.startCapture(MAX_KEY_BYTES);
        } else if (byte === CLOSE_OBJECT && !this.afterComma) {
          this.close();
        } else this.slot = Slot.Broken;
        return;
      case Slot.Colon:
        this.slot = byte === COLON ? Slot.Value : Slot.Broken;
        return;
      case Slot.Value:
        this.startValue(byte);
        return;
      case Slot.After:
        if (byte === COMMA) {
          this.slot = Slot.Key;
          this.afterComma = true;
        } else if (byte === CLOSE_OBJECT) this.close();
        else this.slot = Slot.Broken;
        return;
      default:
        this.slot = Slot.Broken;
    }
  }

  private close(): void {
    this.depth = 0;
    this.slot = Slot.Closed;
  }

  /** The first byte of a top-level member's value. */
  private startValue(byte: number): void {
    if (this.member === Member.Result) this.seenResult = true;
    if (this.member === Member.Error) this.seenError = true;
    if (this.member === Member.Method) this.seenMethod = true;
    if (byte === QUOTE) {
      this.inString = true;
      if (this.member === Member.Id) this.startCapture(MAX_ID_BYTES);
      else if (this.member === Member.Method) this.startCapture(MAX_METHOD_BYTES);
      this.slot = Slot.After;
      return;
    }
    if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      this.depth = 2;
      if (this.member === Member.Id) this.id = 'invalid';
      if (this.member === Member.Method) this.method = undefined;
      // The slot becomes After when the depth falls back to 1.
      this.slot = Slot.After;
      return;
    }
    if (!isScalarByte(byte)) {
      this.slot = Slot.Broken;
      return;
    }
    this.inScalar = true;
    this.slot = Slot.After;
    if (this.member === Member.Id) this.startCapture(MAX_ID_BYTES);
    else this.capture = undefined;
    this.keep(byte);
  }

  /** A top-level number or literal has ended (the byte after it is read as structure). */
  private endScalar(): void {
    this.inScalar = false;
    if (this.member === Member.Method) this.method = undefined;
    if (this.member !== Member.Id) return;
    const raw = this.takeCapture();
    if (raw === undefined) {
      this.id = 'invalid';
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      this.slot = Slot.Broken;
      return;
    }
    this.id = typeof value === 'number' && Number.isInteger(value) ? value : 'invalid';
  }

  /** A string has ended: a key (the member it names) or a top-level value. */
  private endString(): void {
    if (this.slot === Slot.Key) {
      const raw = this.takeCapture();
      const key = raw === undefined ? undefined : decode(raw);
      if (raw !== undefined && key === undefined) {
        this.slot = Slot.Broken;
        return;
      }
      this.member = memberOf(key);
      this.afterComma = false;
      this.slot = Slot.Colon;
      return;
    }
    if (this.depth !== 1) return;
    // A string value of the top-level object.
    if (this.member === Member.Id) {
      const raw = this.takeCapture();
      const value = raw === undefined ? undefined : decode(raw);
      if (raw !== undefined && value === undefined) this.slot = Slot.Broken;
      this.id = value ?? 'invalid';
    } else if (this.member === Member.Method) {
      const raw = this.takeCapture();
      this.method = raw === undefined ? undefined : decode(raw);
      if (raw !== undefined && this.method === undefined) this.slot = Slot.Broken;
    }
  }

  private startCapture(limit: number): void {
    this.capture = [];
    this.captureLimit = limit;
    this.captureOverflow = false;
  }

  /** The captured text, or undefined when it overflowed (or nothing was captured). */
  private takeCapture(): string | undefined {
    const capture = this.capture;
    this.capture = undefined;
    if (capture === undefined || this.captureOverflow) return undefined;
    return Buffer.from(capture).toString('utf8');
  }

  private keep(byte: number): void {
    const capture = this.capture;
    if (capture === undefined || this.captureOverflow) return;
    if (capture.length >= this.captureLimit) {
      this.captureOverflow = true;
      return;
    }
    capture.push(byte);
  }

  private keepRun(piece: Uint8Array, from: number, to: number): void {
    const capture = this.capture;
    if (capture === undefined || this.captureOverflow) return;
    if (capture.length + (to - from) > this.captureLimit) {
      this.captureOverflow = true;
      return;
    }
    for (let j = from; j < to; j++) capture.push(piece[j] as number);
  }
}

/** How many backslashes come right before `end`, looking no further back than `from`. */
function backslashesBefore(piece: Uint8Array, end: number, from: number): number {
  let j = end;
  while (j > from && piece[j - 1] === BACKSLASH) j--;
  return end - j;
}

/** Bytes a JSON number or literal (`true`, `false`, `null`) is made of. */
function isScalarByte(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) || // 0-9
    byte === 0x2d || // -
    byte === 0x2b || // +
    byte === 0x2e || // .
    (byte >= 0x61 && byte <= 0x7a) || // a-z: e, true, false, null (anything else fails JSON.parse)
    byte === 0x45 // E
  );
}

/** The string a JSON string body (between its quotes, escapes as written) stands for, or undefined if it is not valid. */
function decode(raw: string): string | undefined {
  try {
    const value: unknown = JSON.parse(`"${raw}"`);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

function memberOf(key: string | undefined): Member {
  switch (key) {
    case 'id':
      return Member.Id;
    case 'method':
      return Member.Method;
    case 'result':
      return Member.Result;
    case 'error':
      return Member.Error;
    default:
      return Member.Other;
  }
}
