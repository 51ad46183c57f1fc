import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAppRouter, type HealthReport } from '@toolgate/api';
import { createMcpFace } from '@toolgate/mcp-face';
import { AuditSinkToken, PrincipalDirectoryToken } from '@toolgate/contracts';
import type { ServerConfig } from '../config.js';
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

/**
 * Where an approver opens one approval request: under TOOLGATE_PUBLIC_URL when set, else the
 * address the server listens on (read when asked, so a port chosen at listen time is right).
 */
export function approvalUrlOf(config: Pick<ServerConfig, 'publicUrl' | 'host' | 'port'>, server: () => Server | undefined): (approvalId: string) => string {
  return (approvalId) => {
    let base: string;
    if (config.publicUrl) {
      base = config.publicUrl.replace(/\/+$/, '');
    } else {
      const bound = server()?.address() as AddressInfo | null | undefined;
      const port = bound?.port ?? config.port;
      // A wildcard bind answers on loopback too; that is the one address sure to reach it from this host.
      const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' || config.host === '[::]' ? '[::1]' : config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host;
      base = `http://${host}:${port}`;
    }
    return `${base}/approvals/${encodeURIComponent(approvalId)}`;
  };
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
 * The HTTP face: health, the tRPC/REST router and the MCP face over the gateway, the Host/Origin guard and the
 * server that carries them. The server is made last, so it is closed first: open requests end
 * before any adapter they use closes.
 */
export function bindHttpFace(binder: Binder): void {
  binder.resolved(HealthToken, { audit: AuditSinkToken }, ({ audit }) => (): HealthReport => {
    const reasons: string[] = [];
    const auditHealth = audit.health();
    if (!auditHealth.ok) reasons.push(`audit: ${auditHealth.reason ?? 'unavailable'}`);
    return { ok: reasons.length === 0, version: VERSION, reasons };
  });
  binder.resolved(AppRouterToken, { gateway: GatewayToken, health: HealthToken }, ({ gateway, health }) => createAppRouter({ gateway, health }));
  binder.resolved(HostGuardToken, { config: ConfigToken }, ({ config }) =>
    createHostGuard({ bindHost: config.host, allowedHosts: config.allowedHosts, publicUrl: config.publicUrl, allowedOrigins: config.allowedOrigins }),
  );
  binder
    .resolved(
      HttpServerToken,
      { router: AppRouterToken, directory: PrincipalDirectoryToken, health: HealthToken, guard: HostGuardToken, gateway: GatewayToken, config: ConfigToken, log: LogToken },
      ({ config, gateway, ...deps }) => {
        // Read only once a request asks, by which time the server exists.
        const server: Server = createHttpServer({
          ...deps,
          maxBodyBytes: config.maxBodyBytes,
          // The MCP face lists and calls through the same gateway as tRPC and REST (ADR 0049), and
          // points a call that needs an approval at the approval page (ADR 0050).
          mcp: createMcpFace({
            gateway,
            version: VERSION,
            maxBodyBytes: config.maxBodyBytes,
            onError: (error) => deps.log('warn', `MCP: ${oneLine(error.message)}`),
            approvalUrl: approvalUrlOf(config, () => server),
            approvalWaitMs: config.mcpApprovalWaitMs,
            ...(config.mcpStateKey ? { stateKey: config.mcpStateKey } : {}),
          }),
        });
        return server;
      },
    )
    .onDeactivation(closeHttpServer);
}
