// What text from an untrusted party (an MCP server's schema, a failing call's arguments) may look
// like once other agents and people read it: one visible line. Pure string functions, so
// contracts still imports nothing; the MCP adapter and the shared memory both use them.

// Terminal escape sequences, removed whole so no `[31m` residue is left: CSI (`ESC [ … final`),
// OSC (`ESC ] … BEL` or `ESC ] … ESC \`, possibly unterminated) and two-byte `ESC x` forms.
// eslint-disable-next-line no-control-regex
const ANSI_ESCAPES = /\u001b(?:\[[0-?]*[ -/]*[@-~]?|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[ -~]?)/g;

/**
 * Characters that show nothing yet change what a reader sees or hide text from them: format
 * characters (zero-width, bidi controls, soft hyphen, Unicode tags: \p{Cf}), every default-ignorable
 * code point (variation selectors, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the combining
 * grapheme joiner, Khmer inherent vowels) and the blank braille pattern U+2800, which renders as
 * an empty cell. One class, so the description filter and the name check cannot drift apart.
 */
const INVISIBLE_CLASS = '\\p{Cf}\\p{Default_Ignorable_Code_Point}\\u2800';
const INVISIBLE = new RegExp(`[${INVISIBLE_CLASS}]+`, 'gu');
/** Every line or paragraph break (\n, \r, \v, \f, U+0085, U+2028, U+2029) and other control. */
const BREAKS_AND_CONTROLS = /[\p{Cc}\u2028\u2029]+/gu;
/** Anything `flattenText` would remove or replace: a text holding one cannot be shown as it is. */
const UNSHOWABLE = new RegExp(`[${INVISIBLE_CLASS}\\p{Cc}\\p{Cs}\\u2028\\u2029]`, 'u');

/**
 * `text` as one visible line of at most `max` characters: terminal escapes, invisible and
 * filler characters removed, line breaks and other controls turned into spaces, broken UTF-16
 * replaced, runs of white space collapsed. Agents read such text as instructions, so it must not
 * be able to start what looks like a new message or section (`\n\nSYSTEM: …`), recolour a
 * terminal, or hide text a human reviewer cannot see. Linear in the length of `text`.
 */
export function flattenText(text: string, max: number): string {
  const flat = text
    .replace(ANSI_ESCAPES, '')
    .replace(INVISIBLE, '')
    .replace(BREAKS_AND_CONTROLS, ' ')
    .replace(/\p{Cs}/gu, '\uFFFD')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Whether `text` holds a line break, control, invisible, filler or broken-UTF-16 character: for
 * text that must be kept exactly (a property name, an enum value), so it is refused instead.
 */
export function hasUnshowable(text: string): boolean {
  return UNSHOWABLE.test(text);
}
