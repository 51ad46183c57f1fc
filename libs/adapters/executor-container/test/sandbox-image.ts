import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ContainerExecutor } from '../src/index.js';

/** The local image the container tier's tests run in; built from Debian's busybox-static, never pulled. */
export const SANDBOX_IMAGE = 'localhost/toolgate-test-sandbox:1';

/**
 * Where the tests look for an engine CLI: the test run's own PATH, so a run with a PATH that
 * lacks podman and docker shows the skip (outside CI) or the failure (CI=true) for real.
 */
export const ENGINE_PATH = process.env['PATH'] || '/usr/local/bin:/usr/bin:/bin';

const BUILDER = fileURLToPath(new URL('./build-sandbox-image.sh', import.meta.url));

/**
 * Why the container tier cannot be tested here, or undefined when it can: builds the sandbox
 * image (or finds it built), starts it once confined, then asks the executor's own `check()`.
 * Each step's reason is the engine's or the executor's own words, so a skip or a CI failure says
 * what to fix.
 */
export async function sandboxUnavailable(): Promise<string | undefined> {
  const check = () =>
    new ContainerExecutor({ image: SANDBOX_IMAGE, hostPath: ENGINE_PATH }).check().then(
      () => undefined,
      (error: unknown) => (error as Error).message,
    );
  const built = await new Promise<{ code: number; reason: string } | undefined>((resolve) => {
    execFile('/bin/sh', [BUILDER], { timeout: 120_000, env: { PATH: ENGINE_PATH, HOME: process.env['HOME'] ?? '/root' } }, (error, _stdout, stderr) => {
      if (!error) resolve(undefined);
      else resolve({ code: typeof error.code === 'number' ? error.code : -1, reason: stderr.trim().split('\n').at(-1) || `the image builder failed (${error.message})` });
    });
  });
  // No engine answers (exit 3): the executor's own message names what each engine lacks.
  if (built?.code === 3) return (await check()) ?? built.reason;
  if (built !== undefined) return built.reason;
  return check();
}
