/** A value that survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object, the shape of every tool's arguments. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * A JSON Schema (draft 2020-12 subset understood by ajv). Kept structural so contracts needs no
 * schema library.
 */
export type JsonSchema = { [keyword: string]: JsonValue | undefined };
