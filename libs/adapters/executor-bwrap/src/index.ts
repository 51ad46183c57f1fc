export { BwrapExecutor } from './bwrap-executor.js';
export { BwrapRunner, type BwrapRunnerOptions } from './bwrap-runner.js';
export { bwrapArgs, SANDBOX_WORKSPACE, type SandboxPlan, type TopLevelEntry } from './bwrap-argv.js';
