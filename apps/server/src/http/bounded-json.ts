// JSON request bodies parsed with their nesting bounded first (ADR 0076). V8's JSON.parse builds
// every level of a 200,000-deep body in one turn of the event loop (40-60 ms for a 400 KB body on
// this kind of machine, plus its garbage collection), and no call may nest its arguments deeper
// than 32 levels anyway. One linear scan finds values deeper than the bound and the text that is
// parsed holds `null` in their place.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/**
 * How deep a request body may nest before its deeper values are cut. Every depth bound behind the
 * HTTP faces is lower (the arguments' 32 levels, a relayed answer's 64), so a value cut here was
 * already past each of them and its check refuses the same body with the same words.
 */
export const MAX_BODY_DEPTH = 256;

/** A body's text with every value nested deeper than the bound replaced by `null`, and whether any was. */
export interface BoundedJsonText {
  readonly text: string;
  readonly cut: boolean;
}

/** The index just past the string whose opening quote is at `open`, or the text's length when it never closes. */
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

/**
 * `text` with each array or object that opens past `maxDepth` levels replaced, through its
 * matching close, by `null`; the text itself when nothing nests that deep. Linear in the text and
 * no parse: strings are jumped over with native searches. The cut values are not checked for
 * well-formedness, since whatever they held was too deep to be accepted: a body that is malformed
 * only inside a cut value parses, and the depth check behind the face refuses it. A value that
 * never closes is cut to the end, so the text stays malformed and its parse fails as before.
 */
export function boundJsonDepth(text: string, maxDepth = MAX_BODY_DEPTH): BoundedJsonText {
  let parts: string[] | undefined;
  let kept = 0;
  let depth = 0;
  let i = 0;
  const length = text.length;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      i = endOfString(text, i);
      continue;
    }
    if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (depth < maxDepth) {
        depth++;
        i++;
        continue;
      }
      // Past the bound: skip this value to its matching close, counting its own levels.
      const start = i;
      let inner = 0;
      while (i < length) {
        const c = text.charCodeAt(i);
        if (c === QUOTE) {
          i = endOfString(text, i);
          continue;
        }
        if (c === OPEN_OBJECT || c === OPEN_ARRAY) inner++;
        else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) inner--;
        i++;
        if (inner === 0) break;
      }
      (parts ??= []).push(text.slice(kept, start), 'null');
      kept = i;
      continue;
    }
    if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) depth = Math.max(0, depth - 1);
    i++;
  }
  if (parts === undefined) return { text, cut: false };
  parts.push(text.slice(kept));
  return { text: parts.join(''), cut: true };
}

/** `JSON.parse` of `text` with its nesting bounded first (see {@link boundJsonDepth}); throws as `JSON.parse` does. */
export function parseBoundedJson(text: string, maxDepth = MAX_BODY_DEPTH): unknown {
  return JSON.parse(boundJsonDepth(text, maxDepth).text) as unknown;
}
