import type { JsonObject, JsonValue } from '@toolgate/contracts';
import { canonicalJson } from '../audit/canonical-json.js';

/** How many characters of a description each side of a change shows. */
export const EXCERPT_CHARS = 160;
/** The longest an excerpt gets once characters that do not show are written as `\u{XXXX}`. */
const MAX_EXCERPT_LENGTH = 320;
/** How many property names each list names at most. */
export const MAX_NAMED_PROPERTIES = 16;
/** How many characters of one property name are shown. */
const MAX_PROPERTY_CHARS = 64;

/** The members of a definition a change is reported by, in this order (MCP's and the manifest's names). */
export const MEMBERS = ['name', 'title', 'description', 'inputSchema', 'input', 'outputSchema', 'output', 'annotations', 'execution'] as const;

/**
 * What differs between a pinned definition and the one a source declares now, for an operator
 * deciding whether to accept it. Everything here is bounded and shown as one visible line: the
 * new text is the untrusted party's, and an operator's terminal must not be steered by it.
 */
export interface DefinitionChange {
  /** The top-level members that differ (`description`, `inputSchema`, …), in a fixed order, then any others. */
  readonly changed: readonly string[];
  /** The old and new description around their first difference, when the description changed. */
  readonly description?: { readonly before: string; readonly after: string };
  /** Input-schema properties added, removed, or changed, by name (each list bounded, with a count when cut). */
  readonly properties?: { readonly added: readonly string[]; readonly removed: readonly string[]; readonly changed: readonly string[] };
}

/** The change from `before` (the pin's canonical JSON) to `after` (what is declared now). */
export function changeOf(before: JsonObject | undefined, after: JsonObject): DefinitionChange {
  if (before === undefined) return { changed: [] };
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const differs = (key: string) => !sameJson(before[key], after[key]);
  const known: readonly string[] = MEMBERS;
  const changed = [...MEMBERS.filter((m) => keys.has(m) && differs(m)), ...named([...keys].filter((k) => !known.includes(k) && differs(k)).sort())];
  const description =
    changed.includes('description') ? excerpts(textOf(before['description']), textOf(after['description'])) : undefined;
  const schemaKey = 'inputSchema' in after || 'inputSchema' in before ? 'inputSchema' : 'input';
  const properties = changed.includes(schemaKey) ? propertyChanges(before[schemaKey], after[schemaKey]) : undefined;
  return { changed, ...(description ? { description } : {}), ...(properties ? { properties } : {}) };
}

/** The pinned definition back as an object, or undefined if it is not one (a store that returned garbage). */
export function parsePinned(canonical: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(canonical);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

function sameJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return canonicalJson(a) === canonicalJson(b);
}

function textOf(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : value === undefined ? '' : canonicalJson(value);
}

/**
 * Both descriptions from a little before their first difference, each at most `EXCERPT_CHARS`,
 * with every character that would not show as itself written as `\u{XXXX}`: a change of one
 * zero-width character must be visible, and neither text may break the line it is shown on.
 */
export function excerpts(before: string, after: string): { before: string; after: string } {
  const a = [...before];
  const b = [...after];
  let first = 0;
  while (first < a.length && first < b.length && a[first] === b[first]) first++;
  const start = Math.max(0, first - 40);
  const cut = (chars: string[]) => {
    // Written character by character, so a run of escaped characters cannot make the line long.
    let shown = '';
    let end = start;
    while (end < chars.length && end < start + EXCERPT_CHARS && shown.length < MAX_EXCERPT_LENGTH) shown += visible(chars[end++]!);
    return `${start > 0 ? '…' : ''}${shown}${end < chars.length ? '…' : ''}`;
  };
  return { before: cut(a), after: cut(b) };
}

// Controls, line breaks, format and default-ignorable characters, lone surrogates, the braille blank.
const UNSHOWN = /[\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}\u2028\u2029\u2800]/gu;

/** `text` with each character that does not show as itself written as its code point. */
function visible(text: string): string {
  return text.replace(UNSHOWN, (ch) => `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase()}}`);
}

function propertyChanges(before: JsonValue | undefined, after: JsonValue | undefined): DefinitionChange['properties'] {
  const old = propertiesOf(before);
  const now = propertiesOf(after);
  const added = Object.keys(now).filter((k) => !(k in old)).sort();
  const removed = Object.keys(old).filter((k) => !(k in now)).sort();
  const changed = Object.keys(now).filter((k) => k in old && !sameJson(old[k], now[k])).sort();
  return { added: named(added), removed: named(removed), changed: named(changed) };
}

function propertiesOf(schema: JsonValue | undefined): Record<string, JsonValue> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return {};
  const properties = schema['properties'];
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return {};
  return Object.fromEntries(Object.entries(properties).filter(([, v]) => v !== undefined)) as Record<string, JsonValue>;
}

/** A bounded list of names as they may be shown, with the rest counted. */
function named(names: readonly string[]): string[] {
  const shown = names.slice(0, MAX_NAMED_PROPERTIES).map((n) => {
    const chars = [...n];
    const text = visible(chars.slice(0, MAX_PROPERTY_CHARS).join(''));
    return chars.length > MAX_PROPERTY_CHARS ? `${text}…` : text;
  });
  if (names.length > MAX_NAMED_PROPERTIES) shown.push(`(${names.length - MAX_NAMED_PROPERTIES} more)`);
  return shown;
}
