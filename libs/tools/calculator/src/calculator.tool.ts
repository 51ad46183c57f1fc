import { ToolError, type JsonObject, type ToolDefinition, type ToolHandler, type ToolManifest } from '@toolgate/contracts';
import { evaluate } from './expression-evaluator.js';
import { parse } from './expression-parser.js';

/** Longest expression accepted, in UTF-16 code units (the schema's `maxLength` counts code points; both bound the work). */
export const MAX_EXPRESSION_LENGTH = 1000;

/**
 * Evaluates an arithmetic expression: numbers (`12`, `3.5`, `.5`, `1e-3`), `+ - * / % **`, unary
 * signs and parentheses. No names, no calls, no property access: the input is parsed by a real
 * grammar into a tree and only that tree is evaluated. Throws `ToolError` with the position of
 * the problem (0-based) for syntax errors, division by zero and non-finite results.
 */
export function calculate(expression: string): number {
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    throw new ToolError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`, 'TOO_LONG');
  }
  const result = evaluate(parse(expression));
  // -0 is not JSON: it would arrive as 0 anyway, so say 0.
  return Object.is(result, -0) ? 0 : result;
}

/** The calculator's manifest: low risk, no permissions, in-process, one-second deadline. */
export const calculatorManifest: ToolManifest = {
  name: 'calculator',
  version: '1.0.0',
  description:
    'Evaluates an arithmetic expression exactly as written: numbers, + - * / % ** (power, right-associative; -2**2 = -4), unary signs and parentheses.',
  provenance: 'first-party',
  risk: 'low',
  permissions: [],
  input: {
    type: 'object',
    properties: {
      expression: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_EXPRESSION_LENGTH,
        description: "An arithmetic expression such as '2 + 3 * 4' or '(1.5e3 - 20) % 7'.",
      },
    },
    required: ['expression'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: { result: { type: 'number' } },
    required: ['result'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 1000,
};

const calculatorHandler: ToolHandler = {
  async invoke(args: JsonObject) {
    const expression = args['expression'];
    if (typeof expression !== 'string') throw new ToolError("'expression' must be a string", 'INVALID_ARGUMENT');
    return { result: calculate(expression) };
  },
};

/** The calculator tool, ready to register. */
export const calculatorTool: ToolDefinition = { manifest: calculatorManifest, handler: calculatorHandler };
