import { hash } from 'node:crypto';
import type { ToolPin } from '@toolgate/contracts';

/** Largest pinned definition, in UTF-8 bytes: generous for a tool's schemas and description. */
export const MAX_PIN_DEFINITION_BYTES = 256 * 1024;
/** Deepest nesting of a pinned definition (the outermost object is level 1). */
export const MAX_PIN_DEFINITION_DEPTH = 128;
/** Longest tool name a pin can hold: MCP's own cap on a tool name, which the registry also uses. */
export const MAX_PIN_TOOL_LENGTH = 128;
/** Longest `pinnedBy`: `first-seen` or a principal id. */
export const MAX_PIN_BY_LENGTH = 256;

// ASCII only, so a store's byte order (SQLite BINARY, PostgreSQL COLLATE "C") is JavaScript's
// code-unit order and every store lists pins alike; every registry name fits.
const TOOL_NAME = /^[A-Za-z0-9_.-]+$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const PROVENANCE = /^(?:first-party|mcp:[a-z][a-z0-9_-]{0,63})$/;
// Controls, invisible format characters (bidi overrides, zero-width) and line separators: they
// would let a pinnedBy shown to an operator read as something else.
const UNSHOWABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** Whether a pin could be stored under `tool`; a lookup of anything else finds nothing. */
export function isPinnableToolName(tool: unknown): tool is string {
  return typeof tool === 'string' && tool.length <= MAX_PIN_TOOL_LENGTH && TOOL_NAME.test(tool);
}

/**
 * A copy of `pin` holding only the port's fields, after checking every rule of `ToolPin` (the
 * digest included: it must be the SHA-256 of the definition's UTF-8 bytes), so a pin one store
 * accepts every store accepts. Throws a `TypeError` naming the first field that breaks a rule;
 * the message never repeats the value, which may be long or hostile.
 */
export function checkToolPin(pin: unknown): ToolPin {
  if (typeof pin !== 'object' || pin === null || Array.isArray(pin)) throw new TypeError('pin must be an object');
  const { tool, provenance, digest, definition, pinnedAt, pinnedBy } = pin as Record<string, unknown>;
  if (!isPinnableToolName(tool)) {
    throw new TypeError(`pin.tool must be 1 to ${MAX_PIN_TOOL_LENGTH} ASCII letters, digits, '_', '-' or '.'`);
  }
  if (typeof provenance !== 'string' || !PROVENANCE.test(provenance)) {
    throw new TypeError("pin.provenance must be 'first-party' or 'mcp:<server>' (lowercase server name, at most 64 characters)");
  }
  requirePinDigest('pin.digest', digest);
  const problem = definitionProblem(definition);
  if (problem) throw new TypeError(`pin.definition ${problem}`);
  if (sha256Digest(definition as string) !== digest) throw new TypeError('pin.digest is not the SHA-256 of pin.definition');
  if (typeof pinnedAt !== 'number' || !Number.isSafeInteger(pinnedAt) || pinnedAt < 0) {
    throw new TypeError('pin.pinnedAt must be a non-negative integer (epoch milliseconds)');
  }
  if (typeof pinnedBy !== 'string' || pinnedBy.length === 0 || pinnedBy.length > MAX_PIN_BY_LENGTH || UNSHOWABLE.test(pinnedBy)) {
    throw new TypeError(`pin.pinnedBy must be 1 to ${MAX_PIN_BY_LENGTH} characters without control or invisible characters`);
  }
  return { tool, provenance, digest: digest as string, definition: definition as string, pinnedAt, pinnedBy };
}

/** `value` if it is `sha256:` and 64 lowercase hex digits; else a `TypeError` naming `field`. */
export function requirePinDigest(field: string, value: unknown): string {
  if (typeof value !== 'string' || !DIGEST.test(value)) throw new TypeError(`${field} must be 'sha256:' followed by 64 lowercase hex digits`);
  return value;
}

/** `sha256:<hex>` of a string's UTF-8 bytes, as the gateway digests a definition. */
export function sha256Digest(text: string): string {
  return `sha256:${hash('sha256', text, 'hex')}`;
}

/** Why `definition` is not a pinnable definition (said after the field name), or undefined. */
function definitionProblem(definition: unknown): string | undefined {
  if (typeof definition !== 'string') return 'must be a string of canonical JSON';
  // Length first: a string longer than the bound in UTF-16 units is longer in UTF-8 bytes too,
  // and is refused without being encoded or parsed.
  if (definition.length > MAX_PIN_DEFINITION_BYTES || Buffer.byteLength(definition, 'utf8') > MAX_PIN_DEFINITION_BYTES) {
    return `must be at most ${MAX_PIN_DEFINITION_BYTES / 1024} KiB of UTF-8`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(definition);
  } catch {
    return 'is not JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'must be a JSON object';
  // Canonical means one spelling per value: re-serialising what was parsed must give the text
  // back, which refuses whitespace, unsorted or duplicate keys, and alternative number or escape
  // spellings, any of which would let two texts of one definition have two digests.
  const rewritten = canonicalJson(parsed, 1);
  if (rewritten === undefined) return `nests deeper than ${MAX_PIN_DEFINITION_DEPTH} levels`;
  if (rewritten !== definition) return 'is not canonical JSON (keys sorted, no whitespace, one spelling per value)';
  return undefined;
}

/**
 * Parsed JSON written with keys sorted by UTF-16 code units and no whitespace: the same text the
 * gateway's `canonicalJson` writes (an adapter cannot import the gateway), so a definition the
 * gateway pins is accepted here and one written any other way is not. Undefined when an object
 * or array sits deeper than {@link MAX_PIN_DEFINITION_DEPTH} (`depth` is the level of `value`),
 * which also bounds the recursion. Loops and concatenation rather than `map`/`join`: a
 * definition can hold 80,000 values, and this runs on the event loop.
 */
function canonicalJson(value: unknown, depth: number): string | undefined {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (depth > MAX_PIN_DEFINITION_DEPTH) return undefined;
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const part = canonicalJson(value[i], depth + 1);
      if (part === undefined) return undefined;
      out += i === 0 ? part : `,${part}`;
    }
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const part = canonicalJson(object[key], depth + 1);
    if (part === undefined) return undefined;
    out += `${i === 0 ? '' : ','}${JSON.stringify(key)}:${part}`;
  }
  return `${out}}`;
}
