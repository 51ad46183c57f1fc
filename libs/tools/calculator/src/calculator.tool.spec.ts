import { ToolError } from '@toolgate/contracts';
import { testToolContext } from '@toolgate/testing';
import { describe, expect, it } from 'vitest';
import { calculate, calculatorManifest, calculatorTool } from './calculator.tool.js';

function refusal(expression: string): ToolError {
  try {
    calculate(expression);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error(`'${expression}' was accepted`);
}

describe('calculate', () => {
  it.each([
    ['2 + 3 * 4', 14],
    ['(2 + 3) * 4', 20],
    ['10 - 4 - 3', 3],
    ['100 / 10 / 5', 2],
    ['7 % 3', 1],
    ['-7 % 3', -1],
    ['2 ** 10', 1024],
    ['2 ** 3 ** 2', 512],
    ['-2 ** 2', -4],
    ['(-2) ** 2', 4],
    ['2 ** -1', 0.5],
    ['--3', 3],
    ['+-+3', -3],
    ['3.5 * 2', 7],
    ['.5 + 1.', 1.5],
    ['1e3 + 2.5E-1', 1000.25],
    ['1e+2', 100],
    ['  42\n', 42],
    ['2*(3+(4-1))**2', 72],
    ['0.1 + 0.2', 0.1 + 0.2],
    ['-0', 0],
  ])('%s = %d', (expression, expected) => {
    expect(calculate(expression)).toBe(expected);
  });

  it('returns 0, not -0 (JSON cannot carry -0)', () => {
    expect(Object.is(calculate('-0 * 1'), 0)).toBe(true);
  });

  it.each([
    ['(1 + 2))', "unexpected ')' at position 7"],
    ['(1 + 2', "missing ')' for the '(' at position 0"],
    ['2 +', 'unexpected end of expression at position 3'],
    ['* 2', "unexpected '*' at position 0"],
    ['2 3', "unexpected number '3' at position 2"],
    ['1.2.3', "unexpected number '.3' at position 3"],
    ['()', "unexpected ')' at position 1"],
    ['2 *** 3', "unexpected '*' at position 4"],
  ])('refuses %j with a positioned syntax error', (expression, message) => {
    const error = refusal(expression);
    expect(error.message).toBe(message);
    expect(error.reason).toBe('SYNTAX_ERROR');
  });

  it.each(['', '   ', '\t\n'])('refuses the empty expression %j', (expression) => {
    expect(refusal(expression).message).toBe('the expression is empty');
  });

  it.each([
    ['constructor', "unexpected name 'constructor' at position 0"],
    ['__proto__', "unexpected name '__proto__' at position 0"],
    ['1 + Math.PI', "unexpected name 'Math' at position 4"],
    ['this', "unexpected name 'this' at position 0"],
    ['process.exit(1)', "unexpected name 'process' at position 0"],
    ['[1]', "unexpected character '[' at position 0"],
    ['"1"', `unexpected character '"' at position 0`],
    ['1;2', "unexpected character ';' at position 1"],
    ['2 ^ 3', "unexpected character '^' at position 2"],
    ['1\u00002', "unexpected character 'U+0000' at position 1"],
  ])('refuses names and foreign syntax: %j', (expression, message) => {
    expect(refusal(expression).message).toContain(message);
  });

  it.each([
    ['\u0663', 0], // ARABIC-INDIC DIGIT THREE
    ['1\uFF12', 1], // FULLWIDTH DIGIT TWO
    ['\u0967 + 1', 0], // DEVANAGARI DIGIT ONE
    ['1\u00A0+ 1', 1], // NO-BREAK SPACE is not whitespace here
  ])('refuses non-ASCII digits and spaces in %j', (expression, position) => {
    expect(refusal(expression).message).toMatch(new RegExp(`^unexpected character '.' at position ${position}$`, 'u'));
  });

  it('refuses numbers that do not fit a double', () => {
    const error = refusal('1e309');
    expect(error.message).toBe("number '1e309' at position 0 is too large");
  });

  it('refuses overflow in an operation, naming the operator', () => {
    expect(refusal('1e308 * 10').message).toBe("the result of '*' at position 6 is too large (overflow)");
    expect(refusal('2**2**2**2**2').message).toBe("the result of '**' at position 1 is too large (overflow)");
    expect(refusal('10 ** 400').message).toContain('overflow');
  });

  it('refuses division and modulo by zero', () => {
    expect(refusal('1 / 0').message).toBe('division by zero at position 2');
    expect(refusal('1 / (2 - 2)').message).toBe('division by zero at position 2');
    expect(refusal('5 % 0').message).toBe('modulo by zero at position 2');
    expect(refusal('0 ** -1').message).toBe('zero raised to a negative power at position 2');
  });

  it('refuses results that are not real numbers', () => {
    expect(refusal('(-8) ** 0.5').message).toBe("the result of '**' at position 5 is not a real number");
  });

  it('bounds nesting depth instead of overflowing the stack', () => {
    const deep = '('.repeat(10_000) + '1' + ')'.repeat(10_000);
    // Direct calls hit the length bound first; the parser's own depth bound is checked below.
    expect(refusal(deep).message).toBe('the expression is longer than 1000 characters');
    const nested = '('.repeat(65) + '1' + ')'.repeat(65);
    expect(refusal(nested).message).toBe('the expression nests deeper than 64 levels at position 64');
    expect(calculate('('.repeat(64) + '1' + ')'.repeat(64))).toBe(1);
    expect(refusal('-'.repeat(100) + '1').message).toContain('nests deeper than 64 levels');
  });

  it('evaluates a long flat chain within the length bound', () => {
    expect(calculate(Array.from({ length: 500 }, () => '1').join('+'))).toBe(500);
  });
});

describe('calculatorTool', () => {
  const ctx = testToolContext();

  it('returns { result }', async () => {
    await expect(calculatorTool.handler.invoke({ expression: '2 + 3 * 4' }, ctx)).resolves.toEqual({ result: 14 });
  });

  it('refuses a missing expression with a ToolError', async () => {
    await expect(calculatorTool.handler.invoke({}, ctx)).rejects.toThrow(ToolError);
  });

  it('declares a closed, low-risk, permission-free manifest', () => {
    expect(calculatorManifest).toMatchObject({
      name: 'calculator',
      version: '1.0.0',
      risk: 'low',
      permissions: [],
      tier: 'inprocess',
      timeoutMs: 1000,
      input: { additionalProperties: false, required: ['expression'] },
    });
  });
});
