/**
 * The sandbox tiers, defined once. Every other tier list (the manifest check, the shell tier of
 * the configuration, the composition root's executor table, the tiers an MCP server may name)
 * is derived from this file, so adding a tier is one line here, one trait row and one executor
 * adapter.
 *
 * From least to most isolated: tier 0 `inprocess` (the handler in the gateway's own process, no
 * process runner), tier 1 `unisolated` (host processes as the server's user; the name says it is
 * not a sandbox), tier 2 `bwrap` (bubblewrap namespaces) and `container` (a podman/docker
 * container per process). What each tier does and does not isolate is stated by its executor
 * (`ToolExecutor.isolation`), not here.
 */
export const EXECUTOR_TIERS = Object.freeze(['inprocess', 'unisolated', 'bwrap', 'container'] as const);

/** The sandbox a tool runs in (a manifest's `tier`): one of {@link EXECUTOR_TIERS}. */
export type ExecutorTier = (typeof EXECUTOR_TIERS)[number];

/** What code outside an executor may rely on a tier for, before any executor exists. */
export interface ExecutorTierTraits {
  /**
   * The tier's executor has a `ProcessRunner` and hands it to handlers in `ctx.process`, so
   * tools that start processes (the shell tools) and MCP servers can run there.
   */
  readonly runsProcesses: boolean;
  /**
   * A command from the runner's `prepare()` may be spawned as a long-lived direct child of the
   * gateway (an MCP server over stdio) and stopped by killing its process group: nothing the
   * tier started keeps running inside the tier after that. The container tier does not have it:
   * its prepared command is the engine CLI, and killing the CLI leaves the container running.
   */
  readonly hostsLongLived: boolean;
}

/**
 * The traits of every tier; a new tier must state them (the `satisfies` makes a missing one a
 * type error). Frozen, like every list here, because they decide what configuration is accepted.
 */
export const EXECUTOR_TIER_TRAITS = Object.freeze({
  inprocess: Object.freeze({ runsProcesses: false, hostsLongLived: false }),
  unisolated: Object.freeze({ runsProcesses: true, hostsLongLived: true }),
  bwrap: Object.freeze({ runsProcesses: true, hostsLongLived: true }),
  container: Object.freeze({ runsProcesses: true, hostsLongLived: false }),
} as const) satisfies Readonly<Record<ExecutorTier, ExecutorTierTraits>>;

type TraitsOf<T extends ExecutorTier> = (typeof EXECUTOR_TIER_TRAITS)[T];

/** The tiers that run processes (every tier but `inprocess`): the ones a shell tool can use. */
export type ProcessTier = { [T in ExecutorTier]: TraitsOf<T>['runsProcesses'] extends true ? T : never }[ExecutorTier];

/** {@link ProcessTier} as a list, in the order of {@link EXECUTOR_TIERS}. */
export const PROCESS_TIERS: readonly ProcessTier[] = Object.freeze(
  EXECUTOR_TIERS.filter((tier): tier is ProcessTier => EXECUTOR_TIER_TRAITS[tier].runsProcesses),
);

/** True if `value` names a tier that runs processes; false for `inprocess` and unknown names. */
export function isProcessTier(value: string): value is ProcessTier {
  return (PROCESS_TIERS as readonly string[]).includes(value);
}

/** The tiers that can host a long-lived process (see {@link ExecutorTierTraits.hostsLongLived}). */
export type LongLivedTier = {
  [T in ExecutorTier]: TraitsOf<T>['hostsLongLived'] extends true ? T : never;
}[ExecutorTier];

/** {@link LongLivedTier} as a list, in the order of {@link EXECUTOR_TIERS}. */
export const LONG_LIVED_TIERS: readonly LongLivedTier[] = Object.freeze(
  EXECUTOR_TIERS.filter((tier): tier is LongLivedTier => EXECUTOR_TIER_TRAITS[tier].hostsLongLived),
);

/** True if `value` names a tier that can host a long-lived process. */
export function isLongLivedTier(value: string): value is LongLivedTier {
  return (LONG_LIVED_TIERS as readonly string[]).includes(value);
}
