import type { CallGate } from '../call.js';
import { deny } from '../denials/deny.js';
import { MAX_ARGS_DEPTH, nestedWithin } from '../schema/nesting.js';

/**
 * Gate 4, first half: the arguments nest at most `MAX_ARGS_DEPTH` levels. It runs before the size
 * check because `JSON.stringify`, the input repair, canonical JSON and the audit all recurse once
 * per level: a caller that bypasses the API's own check still gets a clear refusal, not a stack
 * overflow deep in one of them. It needs nothing but the call.
 */
export function depthGate(): CallGate {
  return {
    name: 'size',
    check(call) {
      if (nestedWithin(call.args, MAX_ARGS_DEPTH)) return undefined;
      return deny(
        'size',
        'INVALID_INPUT',
        `The arguments are nested deeper than ${MAX_ARGS_DEPTH} levels.`,
        'Flatten the data, or pass a large structure as a string or a workspace file.',
        { maxDepth: MAX_ARGS_DEPTH },
      );
    },
  };
}
