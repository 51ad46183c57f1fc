export { SubprocessExecutor } from './subprocess-executor.js';
export { SubprocessRunner, type SubprocessRunnerOptions } from './subprocess-runner.js';
