import type { JsonObject } from '@toolgate/contracts';

/** A surrogate code unit without its pair (with the `u` flag a paired one is one code point). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Every state store refuses the same strings, so an input accepted by the in-memory store in a
 * test is also accepted by SQLite and PostgreSQL in production. PostgreSQL cannot store NUL in
 * text and every driver turns a lone surrogate into U+FFFD, which would make a stored id differ
 * from the one the caller holds.
 */
export function requireText(field: string, value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`${field} must be a string`);
  if (value.includes('\u0000') || LONE_SURROGATE.test(value)) {
    throw new TypeError(`${field} must be well-formed Unicode text without NUL characters`);
  }
  return value;
}

/** Epoch milliseconds and counters are stored as 64-bit integers by the SQL stores. */
export function requireInteger(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new TypeError(`${field} must be an integer (epoch milliseconds or a count)`);
  }
  return value;
}

/**
 * A copy of `value` after a JSON round trip, which is what the SQL stores keep, so the memory
 * store returns exactly what they would.
 */
export function requireJsonObject(field: string, value: unknown): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`${field} must be a JSON object`);
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}
