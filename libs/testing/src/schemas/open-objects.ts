/**
 * The JSON pointers of every object schema in `schema` an agent could send that is left open: no
 * `additionalProperties: false` and no typed map (an `additionalProperties` schema). It walks
 * properties, pattern properties, definitions, items, tuple items and contains, and `anyOf`/`oneOf`
 * alternatives only where they alone define the object (the parent has no properties of its own).
 */
export function openObjects(schema: unknown, path = '#', out: string[] = []): string[] {
  if (typeof schema !== 'object' || schema === null) return out;
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => openObjects(s, `${path}/${i}`, out));
    return out;
  }
  const s = schema as Record<string, unknown>;
  const isObject = s['type'] === 'object' || (s['type'] === undefined && ('properties' in s || 'patternProperties' in s));
  const extra = s['additionalProperties'];
  if (isObject && extra !== false && (typeof extra !== 'object' || extra === null)) out.push(path);
  for (const key of ['properties', 'patternProperties', '$defs', 'definitions']) {
    const map = s[key];
    if (typeof map === 'object' && map !== null) for (const [k, v] of Object.entries(map)) openObjects(v, `${path}/${key}/${k}`, out);
  }
  for (const key of ['items', 'prefixItems', 'additionalProperties', 'contains']) if (key in s) openObjects(s[key], `${path}/${key}`, out);
  // Alternatives that alone define the object (no properties of the parent's own) are values an agent may send.
  if (!('properties' in s)) for (const key of ['anyOf', 'oneOf']) if (key in s) openObjects(s[key], `${path}/${key}`, out);
  return out;
}
