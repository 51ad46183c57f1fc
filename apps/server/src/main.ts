import { ConfigError, loadConfig } from './config.js';
import { closeInheritedDescriptors } from './inherited-descriptors.js';
import { createStderrLog } from './logger.js';
import { startServer } from './server.js';
import { StartupError } from './startup-error.js';

const log = createStderrLog();

async function main(): Promise<void> {
  // Before any child process exists: a descriptor the launcher left open would reach every sandbox.
  const inherited = closeInheritedDescriptors();
  if (inherited.length > 0) log('info', `closed ${inherited.length} descriptor(s) inherited from the launcher (${inherited.join(', ')}) so no tool process inherits them`);
  const config = loadConfig(process.env);
  const server = await startServer(config, log);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('info', `${signal}: shutting down`);
    server.close().then(
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

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof StartupError) {
    log('error', error.message);
  } else {
    log('error', `failed to start: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
});
