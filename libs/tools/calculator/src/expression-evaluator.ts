import { ToolError } from '@toolgate/contracts';
import type { Expression } from './expression-parser.js';

/**
 * Evaluates a parsed expression in plain IEEE-754 arithmetic. Every intermediate result must be
 * a finite real number: overflow, division by zero and non-real powers are refused with the
 * position of the operator, instead of surfacing as `Infinity` or `NaN` (which JSON cannot carry).
 * Recursion depth is bounded by the number of operators, which the length limit of
 * `calculate` bounds (a chain `1+1+…+1` is a left-leaning tree as deep as it is long).
 */
export function evaluate(expression: Expression): number {
  switch (expression.kind) {
    case 'number':
      return expression.value;
    case 'unary': {
      const operand = evaluate(expression.operand);
      // `0 - x` would turn -0 into 0 differently from negation; negation is what a sign means.
      return expression.op === '-' ? -operand : operand;
    }
    case 'binary': {
      const left = evaluate(expression.left);
      const right = evaluate(expression.right);
      return checked(apply(expression.op, left, right, expression.position), expression.op, expression.position);
    }
  }
}

function apply(op: string, left: number, right: number, position: number): number {
  switch (op) {
    case '+':
      return left + right;
    case '-':
      return left - right;
    case '*':
      return left * right;
    case '/':
      if (right === 0) throw new ToolError(`division by zero at position ${position}`, 'DIVISION_BY_ZERO');
      return left / right;
    case '%':
      if (right === 0) throw new ToolError(`modulo by zero at position ${position}`, 'DIVISION_BY_ZERO');
      return left % right;
    case '**':
      if (left === 0 && right < 0) throw new ToolError(`zero raised to a negative power at position ${position}`, 'DIVISION_BY_ZERO');
      return left ** right;
    default:
      throw new ToolError(`unknown operator '${op}' at position ${position}`, 'SYNTAX_ERROR');
  }
}

function checked(value: number, op: string, position: number): number {
  if (Number.isNaN(value)) {
    throw new ToolError(`the result of '${op}' at position ${position} is not a real number`, 'NOT_A_NUMBER');
  }
  if (!Number.isFinite(value)) {
    throw new ToolError(`the result of '${op}' at position ${position} is too large (overflow)`, 'OVERFLOW');
  }
  return value;
}
