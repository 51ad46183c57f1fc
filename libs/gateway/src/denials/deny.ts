import type { Denial, DenialCode, Gate, JsonValue } from '@toolgate/contracts';

/** Builds a denial, leaving out the optional parts that are absent. */
export function deny(
  gate: Gate,
  code: DenialCode,
  message: string,
  hint?: string,
  data?: Readonly<Record<string, JsonValue>>,
): Denial {
  return { gate, code, message, ...(hint === undefined ? {} : { hint }), ...(data === undefined ? {} : { data }) };
}
