import { ToolError } from '@toolgate/contracts';
import { tokenize, type Operator, type Token } from './expression-lexer.js';

/** The syntax tree of an arithmetic expression. Positions point back into the source for errors. */
export type Expression =
  | { readonly kind: 'number'; readonly value: number; readonly position: number }
  | { readonly kind: 'unary'; readonly op: '+' | '-'; readonly operand: Expression; readonly position: number }
  | {
      readonly kind: 'binary';
      readonly op: Operator;
      readonly left: Expression;
      readonly right: Expression;
      readonly position: number;
    };

/** Deepest nesting of parentheses and unary signs accepted; bounds the parser's recursion. */
export const MAX_DEPTH = 64;

/**
 * Parses an expression with recursive descent. Precedence, lowest first:
 *
 *   additive        := multiplicative (('+' | '-') multiplicative)*
 *   multiplicative  := unary (('*' | '/' | '%') unary)*
 *   unary           := ('+' | '-') unary | power
 *   power           := primary ('**' unary)?        right-associative
 *   primary         := number | '(' additive ')'
 *
 * `**` binds tighter than a unary sign on its left, as in Python and mathematics: `-2**2` is
 * `-(2**2)` = -4. (JavaScript refuses that expression as ambiguous; we choose the convention a
 * person writing `-x²` means.) A sign on its right belongs to the exponent: `2**-1` = 0.5.
 */
export function parse(source: string): Expression {
  return new Parser(tokenize(source)).parseAll();
}

class Parser {
  #at = 0;
  #depth = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  parseAll(): Expression {
    if (this.#peek().kind === 'end') throw new ToolError('the expression is empty', 'SYNTAX_ERROR');
    const expression = this.#additive();
    const next = this.#peek();
    if (next.kind !== 'end') throw unexpected(next);
    return expression;
  }

  #additive(): Expression {
    let left = this.#multiplicative();
    for (let token = this.#peek(); isOperator(token, '+', '-'); token = this.#peek()) {
      this.#at += 1;
      left = { kind: 'binary', op: token.op, left, right: this.#multiplicative(), position: token.position };
    }
    return left;
  }

  #multiplicative(): Expression {
    let left = this.#unary();
    for (let token = this.#peek(); isOperator(token, '*', '/', '%'); token = this.#peek()) {
      this.#at += 1;
      left = { kind: 'binary', op: token.op, left, right: this.#unary(), position: token.position };
    }
    return left;
  }

  #unary(): Expression {
    const token = this.#peek();
    if (token.kind === 'operator' && (token.op === '-' || token.op === '+')) {
      this.#at += 1;
      const operand = this.#nested(token, () => this.#unary());
      return { kind: 'unary', op: token.op, operand, position: token.position };
    }
    return this.#power();
  }

  #power(): Expression {
    const base = this.#primary();
    const token = this.#peek();
    if (!isOperator(token, '**')) return base;
    this.#at += 1;
    // Recursing into unary (not power) makes `**` right-associative and lets the exponent carry a sign.
    const exponent = this.#nested(token, () => this.#unary());
    return { kind: 'binary', op: '**', left: base, right: exponent, position: token.position };
  }

  #primary(): Expression {
    const token = this.#next();
    if (token.kind === 'number') return { kind: 'number', value: token.value, position: token.position };
    if (token.kind === 'paren' && token.open) {
      const inner = this.#nested(token, () => this.#additive());
      const close = this.#next();
      if (close.kind !== 'paren' || close.open) {
        if (close.kind === 'end') {
          throw new ToolError(`missing ')' for the '(' at position ${token.position}`, 'SYNTAX_ERROR');
        }
        throw unexpected(close);
      }
      return inner;
    }
    throw unexpected(token);
  }

  /** Runs one level of nesting, refusing to go deeper than MAX_DEPTH (no stack overflow on hostile input). */
  #nested(at: Token, parse: () => Expression): Expression {
    if (this.#depth >= MAX_DEPTH) {
      throw new ToolError(`the expression nests deeper than ${MAX_DEPTH} levels at position ${at.position}`, 'TOO_DEEP');
    }
    this.#depth += 1;
    try {
      return parse();
    } finally {
      this.#depth -= 1;
    }
  }

  #peek(): Token {
    return this.tokens[this.#at] as Token;
  }

  #next(): Token {
    const token = this.#peek();
    if (token.kind !== 'end') this.#at += 1;
    return token;
  }
}

function isOperator<O extends Operator>(token: Token, ...ops: O[]): token is Extract<Token, { kind: 'operator' }> & { op: O } {
  return token.kind === 'operator' && (ops as Operator[]).includes(token.op);
}

function unexpected(token: Token): ToolError {
  switch (token.kind) {
    case 'end':
      return new ToolError(`unexpected end of expression at position ${token.position}`, 'SYNTAX_ERROR');
    case 'number':
      return new ToolError(`unexpected number '${token.text}' at position ${token.position}`, 'SYNTAX_ERROR');
    case 'operator':
      return new ToolError(`unexpected '${token.op}' at position ${token.position}`, 'SYNTAX_ERROR');
    case 'paren':
      return new ToolError(`unexpected '${token.open ? '(' : ')'}' at position ${token.position}`, 'SYNTAX_ERROR');
  }
}
