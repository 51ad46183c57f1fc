import { load } from 'cheerio';

/**
 * Elements whose content a reader never sees as text: code and styling, inert templates, and the
 * raw-text elements whose content would otherwise come through as markup-looking text.
 */
const HIDDEN = 'script, style, template, noscript, iframe, noembed, noframes, xmp, plaintext';

/** Elements that end a line or a block, so `a<br>b` reads "a b", not "ab". */
const SEPARATING =
  'br, hr, p, div, li, dt, dd, tr, td, th, h1, h2, h3, h4, h5, h6, ul, ol, dl, table, blockquote, pre, section, article, header, footer, aside, nav, figure, figcaption, address, main';

/** Text without `<` or `&` holds no markup and no entity: parsing it would change nothing. */
const MAY_HOLD_MARKUP = /[<&]/;

const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The text a reader would see in an HTML fragment that a search service sent as a title or a
 * snippet, as one line of at most `max` UTF-16 code units: tags removed (the content of
 * `<script>`, `<style>` and other hidden elements with them), entities decoded exactly once
 * (named, decimal and hex, by a real HTML parser), block boundaries turned into spaces, then
 * {@link clipText}. `&lt;b&gt;` becomes the literal text `<b>`: the result is text, never markup,
 * and whoever shows it as HTML must escape it.
 *
 * @throws RangeError when `max` is not a positive integer (a programming error).
 */
export function plainText(html: string, max: number): string {
  return clipText(MAY_HOLD_MARKUP.test(html) ? visibleText(html) : html, max);
}

/**
 * Text that is already plain (an engine's error reason, an API's error detail) as one line of at
 * most `max` UTF-16 code units: control characters and runs of white space become one space, a
 * lone surrogate becomes U+FFFD, and a longer text is cut at a character boundary with `…`, so a
 * cut never splits a surrogate pair (or, where possible, an emoji sequence or an accent from its
 * letter).
 *
 * @throws RangeError when `max` is not a positive integer (a programming error).
 */
export function clipText(text: string, max: number): string {
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, not ${max}`);
  const line = text
    .replace(/\p{Cs}/gu, '\uFFFD')
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > max ? `${line.slice(0, cutPoint(line, max - 1)).trimEnd()}…` : line;
}

function visibleText(html: string): string {
  // A fragment (isDocument false): no <html>/<body> wrapper is invented around the text.
  const $ = load(html, null, false);
  $(HIDDEN).remove();
  $(SEPARATING).before(' ').after(' ');
  return $.root().text();
}

/** The largest grapheme boundary at or below `budget`, or the largest code-point one if none is above 0. */
function cutPoint(text: string, budget: number): number {
  let cut = 0;
  // A boundary at or below the budget is the same in this prefix as in the whole text: the rules
  // look at the characters before it and at the one code point after it, which the prefix holds.
  for (const { index } of GRAPHEMES.segment(text.slice(0, budget + 2))) {
    if (index > budget) break;
    cut = index;
  }
  if (cut > 0) return cut;
  // One cluster longer than the budget (e.g. a letter under hundreds of combining marks).
  const code = text.charCodeAt(budget - 1);
  return code >= 0xd800 && code <= 0xdbff ? budget - 1 : budget;
}
