import type { Gateway } from '@toolgate/gateway';
import { createApprovalsRouter } from './routers/approvals.router.js';
import { createAuditRouter } from './routers/audit.router.js';
import { createSettingsRouter } from './routers/settings.router.js';
import { createToolsRouter } from './routers/tools.router.js';
import type { SourceHealth } from './source-health.js';
import { mapGatewayErrors } from './errors.js';
import { scopedProcedure, publicProcedure, router } from './trpc.js';

/**
 * What `health` (and `/healthz`) reports; `ok: false` means calls are being refused and `reasons`
 * says why. A tool source that is down does not make it false: its own tools are refused, every
 * other tool still runs, and `sources` says where each source is.
 */
export interface HealthReport {
  readonly ok: boolean;
  readonly version: string;
  readonly reasons: readonly string[];
  /** Every configured tool source, in the order they were added, without reason texts, paths or commands. */
  readonly sources: readonly SourceHealth[];
}

/**
 * What `/readyz` reports: whether this gateway should be given traffic. It is not ready while
 * calls are being refused (`health.ok` is false: the audit is down) or while a configured source
 * has not finished its first start (`starting`). A source that is restarting or failed later is
 * reported but does not make it unready: one flaky upstream must not take every other tool out of
 * rotation, and its own tools are refused with `SOURCE_UNAVAILABLE` meanwhile.
 */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly reasons: readonly string[];
  readonly sources: readonly SourceHealth[];
}

/** Readiness as {@link ReadinessReport} defines it, from one health report. */
export function readinessOf(health: HealthReport): ReadinessReport {
  const starting = health.sources.filter((s) => s.state === 'starting').map((s) => `source '${s.name}' has not finished its first start`);
  const reasons = [...health.reasons, ...starting];
  return { ready: reasons.length === 0, reasons, sources: health.sources };
}

export interface AppRouterDeps {
  readonly gateway: Gateway;
  readonly health: () => HealthReport;
}

/** Builds the API from its dependencies; nothing here reaches into a container. */
export function createAppRouter(deps: AppRouterDeps) {
  return router({
    health: publicProcedure.query(() => deps.health()),
    /** Who the caller is: principal, standing grants, visible tools, and budget with its reset time. */
    whoami: scopedProcedure('tools:read').query(({ ctx }) => mapGatewayErrors(() => deps.gateway.whoami(ctx.principal))),
    tools: createToolsRouter(deps.gateway),
    approvals: createApprovalsRouter(deps.gateway),
    settings: createSettingsRouter(deps.gateway),
    audit: createAuditRouter(deps.gateway),
  });
}

/** The API's type, for the CLI and console (type-only import; no server code travels). */
export type AppRouter = ReturnType<typeof createAppRouter>;
