import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ContainerExecutor } from '../src/index.js';

/** The local image the container tier's tests run in; built from Debian's busybox-static, never pulled. */
export const SANDBOX_IMAGE = 'localhost/toolgate-test-sandbox:1';

const BUILDER = fileURLToPath(new URL('./build-sandbox-image.sh', import.meta.url));

/**
 * Why the container tier cannot be tested here, or undefined when it can: builds the sandbox
 * image (or finds it built), starts it once confined, then asks the executor's own `check()`.
 * Each step's reason is the engine's or the executor's own words, so a skip or a CI failure says
 * what to fix.
 */
export async function sandboxUnavailable(): Promise<string | undefined> {
  const built = await new Promise<string | undefined>((resolve) => {
    execFile(BUILDER, [], { timeout: 120_000, env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: process.env['HOME'] ?? '/root' } }, (error, _stdout, stderr) => {
      if (!error) resolve(undefined);
      else resolve(stderr.trim().split('\n').at(-1) || `the image builder failed (${error.message})`);
    });
  });
  if (built !== undefined) return built;
  return new ContainerExecutor({ image: SANDBOX_IMAGE }).check().then(
    () => undefined,
    (error: unknown) => (error as Error).message,
  );
}
