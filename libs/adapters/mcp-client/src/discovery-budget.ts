/**
 * Bounds on what discovering one server's tools may cost. The per-tool size limits
 * (`MCP_TOOL_LIMITS`) alone let a server list 256 tools of 64 KiB, each with 834 patterned
 * properties: compiling that catalogue (ajv's compile grows faster than linearly with a schema's
 * properties, and every pattern is compiled by the linear-time engine) held the event loop for
 * minutes at every restart. Compiling costs about 0.2–0.5 ms per property and per pattern on this
 * project's 2-core CI machine, so one schema within the per-tool bounds compiles in a few tens of
 * milliseconds, one tool per turn of the event loop, and a whole server within the totals in a
 * few seconds spread over many turns (measured in the "discovery that costs too much" specs).
 */
export const MCP_DISCOVERY_BUDGET = {
  /**
   * Bytes of declared tool definitions (each tool's whole entry as JSON: input and output schemas,
   * annotations, description) across all of a server's tools: what the gateway pins (ADR 0069).
   */
  schemaBytes: 1024 * 1024,
  /** Pattern weight (`patternWeight`) across all of a server's tools. */
  patterns: 1000,
  /** Pattern weight in one tool's input schema. */
  patternsPerSchema: 32,
  /** Entries of `properties` maps across all of a server's tools. */
  properties: 4000,
  /** Entries of `properties` maps in one tool's input schema, at every depth. */
  propertiesPerSchema: 64,
} as const;

/** Bounds of the same shape as `MCP_DISCOVERY_BUDGET`, for tests and operators that need tighter ones. */
export type DiscoveryBounds = { readonly [K in keyof typeof MCP_DISCOVERY_BUDGET]: number };

/**
 * What compiling a pattern costs, in patterns: 1, plus 1 per 100 of its length and of its repeat
 * counts (`{1,1000}` is compiled as a thousand copies of what it repeats, about ten times the
 * cost of a short pattern).
 */
export function patternWeight(pattern: string): number {
  let repeats = 0;
  for (const match of pattern.matchAll(/\{(\d{1,7})(?:,(\d{0,7}))?\}/g)) repeats += Math.max(Number(match[1]), Number(match[2] || 0));
  return 1 + Math.floor((pattern.length + repeats) / 100);
}

/** What one tool would cost, counted before its input schema is compiled. */
export interface SchemaCount {
  /** Bytes of its declared definition as JSON (its input schema's and the rest of its entry). */
  readonly bytes: number;
  readonly patterns: number;
  readonly properties: number;
}

/**
 * Counts the patterns (weighted by `patternWeight`) and properties of a schema without compiling
 * it: every string `pattern` and every key of a `patternProperties` map, wherever they are (a `pattern` inside data such as
 * `enum` is counted too: over-counting only refuses sooner). Iterative, so depth cannot exhaust
 * the stack; `bytes` is the caller's (it already serialised the schema).
 */
export function countSchema(schema: unknown, bytes: number): SchemaCount {
  let patterns = 0;
  let properties = 0;
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      if (key === 'pattern' && typeof child === 'string') patterns += patternWeight(child);
      if (child !== null && typeof child === 'object' && !Array.isArray(child)) {
        if (key === 'patternProperties') for (const name of Object.keys(child)) patterns += patternWeight(name);
        if (key === 'properties') properties += Object.keys(child).length;
      }
      stack.push(child);
    }
  }
  return { bytes, patterns, properties };
}

/**
 * One discovery's running total. A tool whose schema would take the total past a bound is refused
 * (and not charged), so the tools listed first within the budget are registered and the rest are
 * not; a tool over the per-schema bound is refused on its own.
 */
export class DiscoveryBudget {
  private bytes = 0;
  private patterns = 0;
  private properties = 0;

  constructor(private readonly bounds: DiscoveryBounds = MCP_DISCOVERY_BUDGET) {}

  /** Why this schema does not fit (an operator-readable bound), or undefined after charging it. */
  charge(count: SchemaCount): string | undefined {
    const b = this.bounds;
    if (count.patterns > b.patternsPerSchema) {
      return `its input schema has patterns of weight ${count.patterns}, more than the ${b.patternsPerSchema} allowed per tool`;
    }
    if (count.properties > b.propertiesPerSchema) {
      return `its input schema has ${count.properties} properties, more than the ${b.propertiesPerSchema} allowed per tool`;
    }
    if (this.bytes + count.bytes > b.schemaBytes) {
      return `the server's tool definitions would exceed the discovery budget of ${b.schemaBytes} bytes in total`;
    }
    if (this.patterns + count.patterns > b.patterns) {
      return `the server's input schemas would exceed the discovery budget of pattern weight ${b.patterns} in total`;
    }
    if (this.properties + count.properties > b.properties) {
      return `the server's input schemas would exceed the discovery budget of ${b.properties} properties in total`;
    }
    this.bytes += count.bytes;
    this.patterns += count.patterns;
    this.properties += count.properties;
    return undefined;
  }
}
