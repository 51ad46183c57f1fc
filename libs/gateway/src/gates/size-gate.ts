import { Buffer } from 'node:buffer';
import type { CallGate } from '../call.js';
import { deny } from '../denials/deny.js';
import type { GatewayLimits } from '../limits.js';

/** What the size gate reads: the argument limit. */
export type SizeNeeds = Pick<GatewayLimits, 'maxArgsBytes'>;

/** Gate 4: the serialized arguments fit the limit (checked before any schema work on them). */
export function sizeGate({ maxArgsBytes }: SizeNeeds): CallGate {
  return {
    name: 'size',
    check(call) {
      const args: unknown = call.args;
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        return deny('size', 'INVALID_INPUT', 'The arguments must be a JSON object.', 'Send args as an object of named parameters, e.g. {"expression": "1 + 1"}.');
      }
      let json: string | undefined;
      try {
        json = JSON.stringify(args);
      } catch {
        json = undefined;
      }
      if (json === undefined) return deny('size', 'INVALID_INPUT', 'The arguments are not serializable as JSON.');
      // Every UTF-16 unit is at most 3 UTF-8 bytes, so short arguments skip the exact count.
      const bytes = json.length * 3 <= maxArgsBytes ? 0 : Buffer.byteLength(json, 'utf8');
      if (bytes > maxArgsBytes) {
        return deny(
          'size',
          'INPUT_TOO_LARGE',
          `The arguments are ${bytes} bytes of JSON; the limit is ${maxArgsBytes}.`,
          'Send less data per call, e.g. split it or pass a reference to a workspace file.',
          { bytes, limit: maxArgsBytes },
        );
      }
      return undefined;
    },
  };
}
