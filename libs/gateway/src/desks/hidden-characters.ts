import type { JsonObject, JsonValue } from '@toolgate/contracts';

/**
 * Characters that make text read differently from what it is: controls (a carriage return
 * redraws a line), bidirectional and other format characters (zero-width, joiners, tags),
 * line and paragraph separators, spaces other than U+0020, invisible combining marks and
 * variation selectors (Unicode's default-ignorable set, which holds the Hangul fillers U+115F,
 * U+1160, U+3164 and U+FFA0), surrogates, private-use and unassigned code points, and the braille
 * blank U+2800, all of which render as nothing or as blank space.
 */
const HIDDEN =
  /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000\u2800]/gu;

/** The same set, one character at a time (no `g` flag, so no state between tests). */
const ONE = new RegExp(HIDDEN.source, 'u');

/** Warnings listed per approval at most; the rest are counted in one last entry. */
export const MAX_HIDDEN_WARNINGS = 32;

/** What an approver is told about characters in the arguments that do not show as themselves. */
export interface HiddenCharacters {
  /** `U+2067 at args.command:18` (code-point index), at most `MAX_HIDDEN_WARNINGS` and a count. */
  readonly hidden: readonly string[];
  /** The arguments with every such character written as `\u{XXXX}`; the exact ones are `args`. */
  readonly argsDisplay: JsonObject;
}

const codeOf = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
const escape = (text: string) => text.replace(HIDDEN, (ch) => `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase()}}`);
const step = (key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${escape(JSON.stringify(key))}]`);

/**
 * Finds hidden characters in the arguments' strings and keys, so what an approver reads is what
 * runs: undefined when there are none. The arguments passed the gates' depth bound, so the walk's
 * recursion is bounded.
 */
export function hiddenCharacters(args: JsonObject): HiddenCharacters | undefined {
  const hidden: string[] = [];
  let total = 0;
  const scan = (text: string, at: string) => {
    HIDDEN.lastIndex = 0;
    if (!HIDDEN.test(text)) return false;
    let index = 0;
    for (const ch of text) {
      if (ONE.test(ch)) {
        total++;
        if (hidden.length < MAX_HIDDEN_WARNINGS) hidden.push(`${codeOf(ch)} at ${at}:${index}`);
      }
      index++;
    }
    return true;
  };
  const walk = (value: JsonValue, at: string): JsonValue => {
    if (typeof value === 'string') return scan(value, at) ? escape(value) : value;
    if (Array.isArray(value)) return value.map((item, i) => walk(item, `${at}[${i}]`));
    if (value !== null && typeof value === 'object') {
      // fromEntries defines own properties, so a `__proto__` key stays a key.
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [scan(key, `${at}${step(key)} (key)`) ? escape(key) : key, walk(item, `${at}${step(key)}`)]),
      );
    }
    return value;
  };
  const argsDisplay = walk(args, 'args') as JsonObject;
  if (total === 0) return undefined;
  if (total > hidden.length) hidden.push(`… and ${total - hidden.length} more`);
  return { hidden, argsDisplay };
}
