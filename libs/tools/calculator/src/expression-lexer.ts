import { ToolError } from '@toolgate/contracts';

/** The operators the calculator knows. `**` is one token, never two `*`. */
export type Operator = '+' | '-' | '*' | '/' | '%' | '**';

/** One token of an arithmetic expression; `position` is the 0-based index of its first character. */
export type Token =
  | { readonly kind: 'number'; readonly value: number; readonly text: string; readonly position: number }
  | { readonly kind: 'operator'; readonly op: Operator; readonly position: number }
  | { readonly kind: 'paren'; readonly open: boolean; readonly position: number }
  | { readonly kind: 'end'; readonly position: number };

// ASCII only on purpose: `\d` would also accept other scripts' digits under some engines, and
// the calculator promises to read exactly what a person types on a keyboard.
const NUMBER = /(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;
const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * Splits an expression into tokens. Anything that is not a number, an operator, a parenthesis or
 * ASCII whitespace is refused with its position, so names such as `constructor` never get near
 * the evaluator.
 */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i] as string;
    if (WHITESPACE.has(ch)) {
      i += 1;
      continue;
    }
    if (isDigit(ch) || (ch === '.' && isDigit(source[i + 1]))) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(source);
      // The lookahead above guarantees a match; the check keeps the type narrow.
      if (!match) throw new ToolError(`unexpected '${ch}' at position ${i}`, 'SYNTAX_ERROR');
      const text = match[0];
      const value = Number(text);
      if (!Number.isFinite(value)) {
        throw new ToolError(`number '${text}' at position ${i} is too large`, 'NUMBER_TOO_LARGE');
      }
      tokens.push({ kind: 'number', value, text, position: i });
      i += text.length;
      continue;
    }
    if (ch === '*' && source[i + 1] === '*') {
      tokens.push({ kind: 'operator', op: '**', position: i });
      i += 2;
      continue;
    }
    if (ch === '+' || ch === '-' || ch === '*' || ch === '/' || ch === '%') {
      tokens.push({ kind: 'operator', op: ch, position: i });
      i += 1;
      continue;
    }
    if (ch === '(' || ch === ')') {
      tokens.push({ kind: 'paren', open: ch === '(', position: i });
      i += 1;
      continue;
    }
    throw unexpectedCharacter(source, i);
  }
  tokens.push({ kind: 'end', position: source.length });
  return tokens;
}

function isDigit(ch: string | undefined): boolean {
  return ch !== undefined && ch >= '0' && ch <= '9';
}

/** Names get their own message: they are the most likely mistake (and the likely attack). */
function unexpectedCharacter(source: string, at: number): ToolError {
  const name = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(source.slice(at, at + 64));
  if (name) {
    return new ToolError(
      `unexpected name '${name[0]}' at position ${at}: only numbers, + - * / % ** and parentheses are allowed`,
      'SYNTAX_ERROR',
    );
  }
  const codePoint = source.codePointAt(at) as number;
  const shown = codePoint < 0x20 || codePoint === 0x7f ? `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}` : String.fromCodePoint(codePoint);
  return new ToolError(`unexpected character '${shown}' at position ${at}`, 'SYNTAX_ERROR');
}
