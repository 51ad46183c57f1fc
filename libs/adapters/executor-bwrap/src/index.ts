export { BwrapExecutor, capWarning } from './bwrap-executor.js';
export { BwrapRunner, type BwrapRunnerOptions, type ResourceCapReport } from './bwrap-runner.js';
export type { CapMechanism, ResourceLimits } from './call-cgroup.js';
export { bwrapArgs, SANDBOX_WORKSPACE, type SandboxPlan, type TopLevelEntry } from './bwrap-argv.js';
export { checkReadOnlyPaths, isAtOrUnder, KERNEL_FILE_SYSTEMS, MAX_READ_ONLY_PATHS, MAX_READ_ONLY_PATH_CHARS } from './read-only-paths.js';
