import type { JsonObject, JsonValue } from '@toolgate/contracts';

/**
 * Sets an own, enumerable property. Plain assignment would treat a key named `__proto__` (which
 * `JSON.parse` produces as an ordinary key) as the prototype setter and silently lose it.
 */
export function setOwn(target: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
