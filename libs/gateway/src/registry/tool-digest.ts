import type { JsonObject, ToolDefinition } from '@toolgate/contracts';
import { canonicalJson, sha256Digest } from '../audit/canonical-json.js';

/** The most canonical JSON a pin holds (the pin store's bound): a larger definition cannot be pinned. */
export const MAX_PIN_DEFINITION_BYTES = 256 * 1024;
/** The deepest nesting a pin holds (the pin store's bound, the top level counting as 1). */
export const MAX_PIN_DEFINITION_DEPTH = 128;

/** What a definition is pinned by: its canonical JSON and that text's digest. */
export interface DefinitionDigest {
  readonly canonical: string;
  readonly digest: string;
}

/** A definition that cannot be pinned, and why (for `rejected()` and the operator log). */
export interface Undigestible {
  readonly error: string;
}

// A definition object is digested once: the registry reads its sources on every lookup, and
// sources hand out the same objects until their tool list changes.
const digests = new WeakMap<ToolDefinition, DefinitionDigest | Undigestible>();

/**
 * The digest a tool is pinned by: `sha256:` of the canonical JSON (keys sorted, no spaces) of
 * what its source declared (`definition.declared`) when present, else of its manifest without
 * `integrity` (the field that carries the digest cannot be part of it). Key order never changes
 * it; any other change does. Cached per definition object.
 */
export function digestOf(def: ToolDefinition): DefinitionDigest | Undigestible {
  const known = digests.get(def);
  if (known !== undefined) return known;
  const result = compute(def);
  digests.set(def, result);
  return result;
}

function compute(def: ToolDefinition): DefinitionDigest | Undigestible {
  let canonical: string;
  try {
    const value = digested(def);
    if (deeperThan(value, MAX_PIN_DEFINITION_DEPTH)) return { error: `its definition nests deeper than ${MAX_PIN_DEFINITION_DEPTH} levels, more than a pin holds, so it cannot be pinned` };
    canonical = canonicalJson(value);
  } catch (error) {
    return { error: `its definition is not JSON (${error instanceof Error ? error.message : 'unreadable'}), so it cannot be pinned` };
  }
  const bytes = Buffer.byteLength(canonical, 'utf8');
  if (bytes > MAX_PIN_DEFINITION_BYTES) {
    return { error: `its definition is ${bytes} bytes of canonical JSON, more than the ${MAX_PIN_DEFINITION_BYTES} a pin holds, so it cannot be pinned` };
  }
  return { canonical, digest: sha256Digest(canonical) };
}

/** The object a definition's digest is taken of. */
export function digested(def: ToolDefinition): JsonObject {
  if (def.declared !== undefined) return def.declared;
  const { integrity: _integrity, ...manifest } = def.manifest;
  return manifest as unknown as JsonObject;
}

/** Whether a value nests deeper than `limit` (iterative: it runs before the recursive writer). */
function deeperThan(root: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
