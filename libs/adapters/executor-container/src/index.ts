export { ContainerExecutor } from './container-executor.js';
export { ContainerRunner, type ContainerRunnerOptions, type ContainerEngine } from './container-runner.js';
export { containerRunArgs, CONTAINER_WORKSPACE, type ContainerPlan } from './container-argv.js';
