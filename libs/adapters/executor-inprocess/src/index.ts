export { InProcessExecutor } from './in-process-executor.js';
