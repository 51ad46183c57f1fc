import type { ExecutorTier } from './executor-tiers.js';
import type { JsonSchema } from './json.js';

/** How much harm a tool can do. `high` and `critical` need a human approval per payload. */
export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';
export const RISK_LEVELS: readonly RiskLevel[] = ['low', 'medium', 'high', 'critical'];

/** The kinds of authority a tool can ask for. */
export type PermissionType = 'filesystem' | 'network' | 'exec' | 'env' | 'messaging' | 'memory';
export const PERMISSION_TYPES: readonly PermissionType[] = [
  'filesystem',
  'network',
  'exec',
  'env',
  'messaging',
  'memory',
];

/** One permission a tool needs; a call runs only if every one is granted. */
export interface Permission {
  readonly type: PermissionType;
  /** What the permission covers, e.g. `workspace`, `*`, `read`. Matched exactly, or by a `*` grant. */
  readonly scope: string;
}

/** Where a tool comes from. Anything but first-party is unverified and defaults to `high` risk. */
export type Provenance = 'first-party' | `mcp:${string}`;

/** Hosts a call will reach: fixed ones, and/or the host of a URL argument. */
export interface EgressSpec {
  /** Bare lowercase host names the tool always contacts. */
  readonly hosts?: readonly string[];
  /** Name of the top-level argument that holds the target URL. */
  readonly urlArg?: string;
}

/** Everything the gateway needs to know about a tool before it lets a call through. */
export interface ToolManifest {
  /** `snake_case` name, unique in the registry (MCP tools: `<server>__<tool>`). */
  readonly name: string;
  /** Exact pinned version; a call naming another version is refused. */
  readonly version: string;
  readonly description: string;
  readonly provenance: Provenance;
  readonly risk: RiskLevel;
  readonly permissions: readonly Permission[];
  /** Closed JSON Schema of the arguments (`additionalProperties: false`, unless `ignoreUnknownArgs`). */
  readonly input: JsonSchema;
  /** JSON Schema every output must satisfy. */
  readonly output: JsonSchema;
  /** Drop (never pass on) arguments the schema does not name, instead of refusing them. */
  readonly ignoreUnknownArgs?: boolean;
  readonly egress?: EgressSpec;
  /** The sandbox the tool runs in; what it isolates is its executor's `isolation`. */
  readonly tier: ExecutorTier;
  /** Upper bound of one call; the executor aborts the call at this deadline. */
  readonly timeoutMs: number;
  /** Largest serialized output accepted, in bytes (gateway default when absent). */
  readonly maxOutputBytes?: number;
  /** `sha256:<hex>` of the handler package, for pinning. */
  readonly integrity?: string;
}
