import { DEFAULT_LIMITS, MAX_ARGS_DEPTH, MAX_ARGS_VALUES, jsonBoundsProblem, type JsonBounds, type JsonBoundsProblem } from '@toolgate/gateway';

/**
 * Deepest nesting accepted in any procedure's raw input: the arguments' limit plus the request
 * object and its `args` member, so the arguments' own rule is the one a caller normally meets.
 */
export const MAX_INPUT_DEPTH = MAX_ARGS_DEPTH + 2;

/**
 * Most values in any procedure's raw input: the arguments' bound plus room for every other field
 * (the largest, an egress host list, holds 1,000 strings).
 */
export const MAX_INPUT_VALUES = MAX_ARGS_VALUES + 4096;

/**
 * What the arguments must fit before any per-value work: the depth limit, the most values and
 * the lower bound of the size that the gateway's size gate (default 64 KiB) could ever accept,
 * and JSON itself. Over the limit, zod's per-value validation cost about a second per MiB.
 */
const ARGS_BOUNDS: JsonBounds = { maxDepth: MAX_ARGS_DEPTH, maxValues: MAX_ARGS_VALUES, maxBytes: DEFAULT_LIMITS.maxArgsBytes, requireJson: true };

const INPUT_BOUNDS: JsonBounds = { maxDepth: MAX_INPUT_DEPTH, maxValues: MAX_INPUT_VALUES };

function argsMessage(problem: JsonBoundsProblem): string {
  switch (problem.kind) {
    case 'depth':
      return `arguments are nested deeper than ${problem.limit} levels`;
    case 'values':
      return `arguments hold more than ${problem.limit} values, more than the ${DEFAULT_LIMITS.maxArgsBytes}-byte arguments limit can hold`;
    case 'bytes':
      return `arguments are larger than the limit of ${problem.limit} bytes of JSON`;
    case 'not-json':
      return `arguments must be JSON values (found ${problem.found})`;
  }
}

/** Why the arguments cannot be accepted, in a caller's words, or undefined when they fit. */
export function argsProblem(args: unknown): string | undefined {
  const problem = jsonBoundsProblem(args, ARGS_BOUNDS);
  if (problem) return argsMessage(problem);
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return 'arguments must be a JSON object of named parameters';
  return undefined;
}

/** Why a whole raw input cannot be accepted (too deep, or too many values in any field), or undefined. */
export function inputProblem(input: unknown): string | undefined {
  const problem = jsonBoundsProblem(input, INPUT_BOUNDS);
  if (!problem) return undefined;
  return problem.kind === 'depth'
    ? `the request is nested deeper than ${problem.limit} levels`
    : `the request holds more than ${MAX_INPUT_VALUES} values`;
}
