export { createAppRouter, readinessOf, type AppRouter, type AppRouterDeps, type HealthReport, type ReadinessReport } from './app-router.js';
export { sourceHealthOf, type SourceHealth, type SourceReportLike } from './source-health.js';
export { createContextInner, type ApiContext } from './context.js';
export { createCallerFactory, InsufficientScopeError } from './trpc.js';
export { createRestHandler, restMethodHasBody, type RestRequest, type RestResponse } from './rest.js';
export { MAX_INPUT_DEPTH, MAX_INPUT_VALUES } from './input-bounds.js';
