import { accessSync, constants, statSync } from 'node:fs';

/** Where Debian's `chromium` package (installed by `.ci/run`) and its relatives put the browser. */
export const CHROMIUM_CANDIDATES: readonly string[] = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium', '/snap/bin/chromium'];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The chromium executable a browser test launches through playwright-core's `executablePath`:
 * `TOOLGATE_CHROMIUM` when it names an executable file, else the first candidate that is one,
 * else undefined. playwright-core downloads no browser of its own; the system's is the one tested.
 */
export function chromiumPath(env: Readonly<Record<string, string | undefined>> = process.env, candidates: readonly string[] = CHROMIUM_CANDIDATES): string | undefined {
  const chosen = env['TOOLGATE_CHROMIUM'];
  if (chosen !== undefined && chosen !== '') return executable(chosen) ? chosen : undefined;
  return candidates.find(executable);
}

/**
 * The chromium for a browser suite, or undefined when there is none: the suite then skips, and
 * says why on stderr once. Under `CI=true` a missing browser fails the suite instead, since
 * `.ci/run` installs it and a browser test silently skipped in CI holds nothing.
 */
export function chromiumForSuite(suite: string, env: Readonly<Record<string, string | undefined>> = process.env, candidates: readonly string[] = CHROMIUM_CANDIDATES): string | undefined {
  const found = chromiumPath(env, candidates);
  if (found !== undefined) return found;
  const where = env['TOOLGATE_CHROMIUM'] ? `TOOLGATE_CHROMIUM=${env['TOOLGATE_CHROMIUM']} is not an executable file` : `no chromium at ${candidates.join(', ')}`;
  if (env['CI'] === 'true') throw new Error(`CI=true but ${suite} has no browser: ${where} (.ci/run installs Debian's chromium)`);
  process.stderr.write(`${suite}: ${where}; its browser tests are skipped (install chromium or set TOOLGATE_CHROMIUM)\n`);
  return undefined;
}
