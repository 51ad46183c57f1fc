export { createAppRouter, type AppRouter, type AppRouterDeps, type HealthReport } from './app-router.js';
export { createContextInner, type ApiContext } from './context.js';
export { createCallerFactory } from './trpc.js';
export { createRestHandler, restMethodHasBody, type RestRequest, type RestResponse } from './rest.js';
export { MAX_INPUT_DEPTH, MAX_INPUT_VALUES } from './input-bounds.js';
