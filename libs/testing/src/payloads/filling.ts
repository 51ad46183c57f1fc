import type { JsonValue } from '@toolgate/contracts';

/** The longest argument array the API accepts (its 64 KiB body bound), less room for the envelope. */
export const MAX_ARGS_ARRAY_BYTES = 64 * 1024 - 64;

/**
 * As many values from `make(0)`, `make(1)`, … as fit, serialized, in one JSON array of at most
 * `maxBytes` (and at most `limit` values): the largest input an agent could send, for tests that
 * time validation at the size bound.
 */
export function filling(make: (i: number) => JsonValue, limit = Number.POSITIVE_INFINITY, maxBytes = MAX_ARGS_ARRAY_BYTES): JsonValue[] {
  const out: JsonValue[] = [];
  let bytes = 2;
  for (let i = 0; i < limit; i++) {
    const value = make(i);
    const size = JSON.stringify(value).length + 1;
    if (bytes + size > maxBytes) break;
    bytes += size;
    out.push(value);
  }
  return out;
}
