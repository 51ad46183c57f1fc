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

/** What the input repair may do beyond renames and coercions, which it always may (ADR 0063). */
export interface RepairPolicy {
  /**
   * Move a number beyond its schema's `minimum`/`maximum` to the bound. Low- and medium-risk
   * tools are clamped unless this is `false`; `high` and `critical` tools only when it is `true`
   * (a clamp changes what an approved call does, so by default such a call is refused instead).
   */
  readonly clamp?: boolean;
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
  /** How far the gateway may repair arguments that fail the input schema (ADR 0063). */
  readonly repair?: RepairPolicy;
  readonly egress?: EgressSpec;
  /** The sandbox the tool runs in; what it isolates is its executor's `isolation`. */
  readonly tier: ExecutorTier;
  /** Upper bound of one call; the executor aborts the call at this deadline. */
  readonly timeoutMs: number;
  /** Largest serialized output accepted, in bytes (gateway default when absent). */
  readonly maxOutputBytes?: number;
  /**
   * `sha256:<hex>` of this manifest without `integrity`, as canonical JSON (keys sorted, no
   * spaces): when present, the tool is served only while it matches (or an admin accepted the
   * manifest as it is now), so an edited manifest is held rather than served (ADR 0060).
   */
  readonly integrity?: string;
}
