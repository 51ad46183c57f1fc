import type { Server } from 'node:http';
import { createAppRouter, sourceHealthOf, type HealthReport } from '@toolgate/api';
import { createMcpFace } from '@toolgate/mcp-face';
import { AuditSinkToken, ClockToken, PrincipalDirectoryToken, TOOLGATE_SCOPES } from '@toolgate/contracts';
import { approvalUrlOf } from '../http/approval-page.js';
import { createHostGuard } from '../http/host-guard.js';
import { createHttpServer } from '../http/http-server.js';
import { AppRouterToken, ConfigToken, GatewayToken, HealthToken, HostGuardToken, HttpServerToken, LogToken } from '../tokens.js';
import type { Binder } from './binder.js';

export const VERSION = '0.1.0';

/** An SDK message on one bounded log line: it may quote what a client sent, newlines included. */
function oneLine(message: string): string {
  let line = '';
  for (const char of message.slice(0, 200)) line += char < ' ' || char === '\u007f' ? ' ' : char;
  return line;
}

/** Stops accepting requests and waits for open ones; idle keep-alive connections are closed at once. */
function closeHttpServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    // A server that never listened answers with an error, which is as closed as it gets.
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/**
 * The HTTP face: health and readiness, the tRPC/REST router and the MCP face over the gateway, the Host/Origin guard and the
 * server that carries them. The server is made last, so it is closed first: open requests end
 * before any adapter they use closes.
 */
export function bindHttpFace(binder: Binder): void {
  binder.resolved(HealthToken, { audit: AuditSinkToken, gateway: GatewayToken }, ({ audit, gateway }) => (): HealthReport => {
    const reasons: string[] = [];
    const auditHealth = audit.health();
    if (!auditHealth.ok) reasons.push(`audit: ${auditHealth.reason ?? 'unavailable'}`);
    let sources: HealthReport['sources'] = [];
    try {
      // Each source's state and counts only (sourceHealthOf copies nothing else): anyone can read /healthz.
      sources = gateway.toolSources().map(sourceHealthOf);
    } catch {
      // A source whose status cannot be read is not known to be serving: say so rather than answer 500.
      reasons.push('tool sources: their status cannot be read');
    }
    return { ok: reasons.length === 0, version: VERSION, reasons, sources };
  });
  binder.resolved(AppRouterToken, { gateway: GatewayToken, health: HealthToken }, ({ gateway, health }) => createAppRouter({ gateway, health }));
  binder.resolved(HostGuardToken, { config: ConfigToken }, ({ config }) =>
    createHostGuard({ bindHost: config.host, allowedHosts: config.allowedHosts, publicUrl: config.publicUrl, allowedOrigins: config.allowedOrigins }),
  );
  binder
    .resolved(
      HttpServerToken,
      { router: AppRouterToken, directory: PrincipalDirectoryToken, health: HealthToken, guard: HostGuardToken, gateway: GatewayToken, config: ConfigToken, log: LogToken, clock: ClockToken },
      ({ config, gateway, clock, ...deps }) => {
        // Read only once a request asks, by which time the server exists.
        const server: Server = createHttpServer({
          ...deps,
          maxBodyBytes: config.maxBodyBytes,
          // RFC 9728: where a client learns whose tokens this server takes (ADR 0074).
          resource: {
            ...(config.publicUrl ? { publicOrigin: new URL(config.publicUrl).origin } : {}),
            authorizationServers: config.oidc ? [config.oidc.issuer] : [],
            scopes: config.oidc?.scopes ? [...TOOLGATE_SCOPES] : [],
          },
          // The MCP face lists and calls through the same gateway as tRPC and REST (ADR 0049), and
          // points a call that needs an approval at the approval page (ADR 0050).
          mcp: createMcpFace({
            gateway,
            version: VERSION,
            maxBodyBytes: config.maxBodyBytes,
            onError: (error) => deps.log('warn', `MCP: ${oneLine(error.message)}`),
            // The approval page's URL: TOOLGATE_PUBLIC_URL when set, else the listen address (ADR 0052).
            approvalUrl: approvalUrlOf(config, () => server),
            approvalWaitMs: config.mcpApprovalWaitMs,
            ...(config.mcpStateKey ? { stateKey: config.mcpStateKey } : {}),
            // An approval's expiresAt is the gateway's time; the face compares it with the same clock.
            clock,
          }),
        });
        return server;
      },
    )
    .onDeactivation(closeHttpServer);
}
