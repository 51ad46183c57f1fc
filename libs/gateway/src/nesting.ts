/** Deepest nesting accepted in tool arguments (API and gateway alike); deeper input could exhaust recursive validators. */
export const MAX_ARGS_DEPTH = 32;

/**
 * Whether `value` nests at most `limit` objects or arrays deep. Iterative on purpose: a
 * recursive walk (zod's `z.json()`, `JSON.stringify`, canonical JSON, redaction) is exactly what
 * hostile nesting attacks, so this runs before any of them and stops at the first level too deep.
 */
export function nestedWithin(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth >= limit) return false;
    for (const child of Object.values(item.value as object)) stack.push({ value: child, depth: item.depth + 1 });
  }
  return true;
}
