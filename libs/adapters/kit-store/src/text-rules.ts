/** A surrogate code unit without its pair (with the `u` flag a paired one is one code point). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Every state store refuses the same strings, so an input accepted by the in-memory store in a
 * test is also accepted by SQLite and PostgreSQL in production. PostgreSQL cannot store NUL in
 * text and every driver turns a lone surrogate into U+FFFD, which would make a stored id differ
 * from the one the caller holds.
 */
export function requireText(field: string, value: unknown): string {
  if (!isStorableText(value)) throw new TypeError(textProblem(field, value));
  return value;
}

/** Whether `value` could have been stored at all; lookups with anything else find nothing. */
export function isStorableText(value: unknown): value is string {
  return typeof value === 'string' && !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

function textProblem(field: string, value: unknown): string {
  return typeof value === 'string' ? `${field} must be well-formed Unicode text without NUL characters` : `${field} must be a string`;
}

/** Storable text that is not empty: the names a message bus routes by (tenant, channel, reader …). */
export function requireName(field: string, value: unknown): string {
  const text = requireText(field, value);
  if (text.length === 0) throw new TypeError(`${field} must not be empty`);
  return text;
}

/** Epoch milliseconds and counters are stored as 64-bit integers by the SQL stores. */
export function requireInteger(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new TypeError(`${field} must be an integer (epoch milliseconds or a count)`);
  }
  return value;
}

/** The JSON text stored for a JSON object. `JSON.stringify` escapes NUL and lone surrogates. */
export function jsonObjectText(field: string, value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`${field} must be a JSON object`);
  return JSON.stringify(value);
}
