import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { workspaceRoot } from '@nx/devkit';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `@nx/enforce-module-boundaries` silently skips every file when Nx has no cached project graph,
 * which is the state of a clean clone. These tests run the real `npm run lint` script with an
 * empty Nx workspace-data directory (as on a clean clone) and feed it one file through stdin, so
 * they fail if the script ever stops computing the graph before eslint runs.
 */
const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function lintAsOnCleanClone(filename: string, source: string): { status: number | null; output: string } {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'toolgate-nx-data-'));
  dataDirs.push(dataDir);
  const run = spawnSync('npm', ['run', '-s', 'lint', '--', '--stdin', '--stdin-filename', filename], {
    cwd: workspaceRoot,
    input: source,
    encoding: 'utf8',
    env: { ...process.env, NX_WORKSPACE_DATA_DIRECTORY: dataDir, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
    timeout: 90_000,
  });
  return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
}

describe('npm run lint on a clean clone', () => {
  it('enforces the dependency rule: an adapter importing the gateway fails', () => {
    const { status, output } = lintAsOnCleanClone(
      'libs/adapters/net-guard/src/lint-probe.ts',
      "import { Gateway } from '@toolgate/gateway';\nexport const probe = Gateway;\n",
    );
    expect(output).not.toContain('rule will be skipped');
    expect(output).toContain('@nx/enforce-module-boundaries');
    expect(output).toContain('scope:adapter');
    expect(status).toBe(1);
  }, 120_000);

  it('enforces the dependency rule: a tool importing an adapter fails', () => {
    const { status, output } = lintAsOnCleanClone(
      'libs/tools/calculator/src/lint-probe.ts',
      "import { GuardedHttpClient } from '@toolgate/adapter-net-guard';\nexport const probe = GuardedHttpClient;\n",
    );
    expect(output).not.toContain('rule will be skipped');
    expect(output).toContain('@nx/enforce-module-boundaries');
    expect(status).toBe(1);
  }, 120_000);

  it('passes an import the rule allows, without skipping the rule', () => {
    const { status, output } = lintAsOnCleanClone(
      'libs/adapters/net-guard/src/lint-probe.ts',
      "import { ToolError } from '@toolgate/contracts';\nexport const probe = ToolError;\n",
    );
    expect(output).not.toContain('rule will be skipped');
    expect(status).toBe(0);
  }, 120_000);
});
