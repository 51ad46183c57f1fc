import { ConfigError, loadConfig } from './config.js';
import { closeInheritedDescriptors } from './inherited-descriptors.js';
import { createStderrLog } from './logger.js';
import { startServer, type RunningServer } from './server.js';
import { StartupError } from './startup-error.js';

const log = createStderrLog();

/**
 * Starts the server and installs its signal handlers. `hupWhileLoading` says whether a SIGHUP
 * came while main.ts was still loading this module.
 */
async function main(hupWhileLoading: boolean): Promise<void> {
  // Before any child process exists: a descriptor the launcher left open would reach every sandbox.
  const inherited = closeInheritedDescriptors();
  if (inherited.length > 0) log('info', `closed ${inherited.length} descriptor(s) inherited from the launcher (${inherited.join(', ')}) so no tool process inherits them`);
  const config = loadConfig(process.env);
  const state: { server?: RunningServer } = {};
  let stopping = false;
  // Node's default for SIGHUP is to exit; here it re-reads the principals file (ADR 0073).
  // A SIGHUP while starting is held, and served by one re-read once the server is up: the file
  // may have changed after the start read it.
  let hupWhileStarting = hupWhileLoading;
  process.on('SIGHUP', () => {
    if (!state.server) hupWhileStarting = true;
    else if (!stopping) void state.server.reload('SIGHUP');
  });
  const running = await startServer(config, log);
  state.server = running;
  if (hupWhileStarting) void running.reload('SIGHUP while starting');

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('info', `${signal}: shutting down`);
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log('error', `shutdown failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** Runs the server as the process's whole life: a start that fails is logged and exits 1. */
export function run(hupWhileLoading: boolean): void {
  main(hupWhileLoading).catch((error: unknown) => {
    if (error instanceof ConfigError || error instanceof StartupError) {
      log('error', error.message);
    } else {
      log('error', `failed to start: ${error instanceof Error ? error.message : String(error)}`);
    }
    process.exit(1);
  });
}
