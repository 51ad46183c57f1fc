import type { Gateway } from '@toolgate/gateway';
import { createApprovalsRouter } from './routers/approvals.router.js';
import { createAuditRouter } from './routers/audit.router.js';
import { createSettingsRouter } from './routers/settings.router.js';
import { createToolsRouter } from './routers/tools.router.js';
import { publicProcedure, router } from './trpc.js';

/** What `health` reports; `ok: false` means calls are being refused and `reasons` says why. */
export interface HealthReport {
  readonly ok: boolean;
  readonly version: string;
  readonly reasons: readonly string[];
}

export interface AppRouterDeps {
  readonly gateway: Gateway;
  readonly health: () => HealthReport;
}

/** Builds the API from its dependencies; nothing here reaches into a container. */
export function createAppRouter(deps: AppRouterDeps) {
  return router({
    health: publicProcedure.query(() => deps.health()),
    tools: createToolsRouter(deps.gateway),
    approvals: createApprovalsRouter(deps.gateway),
    settings: createSettingsRouter(deps.gateway),
    audit: createAuditRouter(deps.gateway),
  });
}

/** The API's type, for the CLI and console (type-only import; no server code travels). */
export type AppRouter = ReturnType<typeof createAppRouter>;
