import type { AddressInfo } from 'node:net';
import { PrincipalDirectoryToken } from '@toolgate/contracts';
import { isLoopbackHost, type ServerConfig, type ShellTier } from './config.js';
import { buildContainer, resolve, seedRoster } from './container.js';
import { createHostGuard } from './http/host-guard.js';
import { createHttpServer } from './http/http-server.js';
import type { Log } from './logger.js';
import { openResources, StartupError } from './resources.js';
import { AppRouterToken, HealthToken } from './tokens.js';

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8765`. */
  readonly url: string;
  readonly port: number;
  /** The tier bash and git run at, or undefined when they are not offered (the default tier cannot run here). */
  readonly shellTier: ShellTier | undefined;
  /** Stops accepting requests, waits for open ones, closes every adapter. */
  close(): Promise<void>;
}

/** Opens the adapters, builds the container and listens. Refuses unsafe setups before binding. */
export async function startServer(config: ServerConfig, log: Log): Promise<RunningServer> {
  if (!config.principalsFile && !isLoopbackHost(config.host)) {
    throw new StartupError(
      `refusing to listen on ${config.host} without TOOLGATE_PRINCIPALS_FILE: the dev principal 'demo' is for loopback only`,
    );
  }
  const resources = await openResources(config, log);
  try {
    const container = buildContainer(config, log, resources);
    await seedRoster(container, log);
    const directory = resolve(container, PrincipalDirectoryToken);
    const guard = createHostGuard({
      bindHost: config.host,
      allowedHosts: config.allowedHosts,
      publicUrl: config.publicUrl,
      allowedOrigins: config.allowedOrigins,
    });
    const server = createHttpServer({
      router: resolve(container, AppRouterToken),
      directory,
      health: resolve(container, HealthToken),
      maxBodyBytes: config.maxBodyBytes,
      guard,
      log,
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host;
    if (resources.demo) {
      // Read from the directory, not assumed: the line must say which self-approval policy is in force.
      const demo = directory.authenticate('demo');
      const selfApproval = demo !== undefined && directory.tenant(demo.tenant)?.selfApproval === true;
      log(
        'warn',
        `no TOOLGATE_PRINCIPALS_FILE: dev principal 'demo' (token 'demo', roles ${demo?.roles.join(', ') ?? 'none'}), ` +
          `self-approval ${selfApproval ? 'ON' : 'OFF'} (loopback only, Host and Origin guarded; set TOOLGATE_PRINCIPALS_FILE for real principals)`,
      );
    }
    log('info', guard.summary);
    return {
      url: `http://${host}:${port}`,
      port,
      shellTier: resources.shellTier,
      close: async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await resources.close();
      },
    };
  } catch (error) {
    await resources.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new StartupError(`port ${config.port} on ${config.host} is already in use (set TOOLGATE_PORT)`);
    }
    throw error;
  }
}
