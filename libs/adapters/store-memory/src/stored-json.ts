import type { JsonObject } from '@toolgate/contracts';
import { jsonObjectText } from '@toolgate/adapter-kit-store';

/**
 * A copy of `value` after a JSON round trip, which is what the SQL stores keep (they store
 * `jsonObjectText`), so the memory store returns exactly what they would. Only this store needs the
 * copy; the SQL stores get it from their driver.
 */
export function requireJsonObject(field: string, value: unknown): JsonObject {
  return JSON.parse(jsonObjectText(field, value)) as JsonObject;
}
