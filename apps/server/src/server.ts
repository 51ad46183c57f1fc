import type { ExecutorTier } from '@toolgate/contracts';
import type { ServerConfig } from './config.js';
import { buildContainer } from './container.js';
import type { Log } from './logger.js';
import { runStartSteps, type StartContext } from './start-steps.js';
import { PrincipalsReloadToken, ShellExecutorToken } from './tokens.js';

export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8765`. */
  readonly url: string;
  readonly port: number;
  /** The tier bash and git run at, or undefined when they are not offered (the default tier cannot run here). */
  readonly shellTier: ExecutorTier | undefined;
  /** Re-reads what SIGHUP re-reads (the principals file); resolves whether a new file serves. */
  reload(trigger: string): Promise<boolean>;
  /** Stops accepting requests, waits for open ones, closes every adapter (newest first). */
  close(): Promise<void>;
}

/**
 * Builds the container and runs the start steps (start-steps.ts). A step that fails closes
 * everything opened so far, through the container, before the error reaches the caller.
 */
export async function startServer(config: ServerConfig, log: Log): Promise<RunningServer> {
  const root = buildContainer(config, log);
  const context: StartContext = { config, log, root };
  try {
    await runStartSteps(context);
  } catch (error) {
    await root.close(log);
    throw error;
  }
  const { url, port } = context.listening!;
  const reload = await root.get(PrincipalsReloadToken);
  return { url, port, shellTier: (await root.get(ShellExecutorToken))?.tier, reload, close: () => root.close(log) };
}
