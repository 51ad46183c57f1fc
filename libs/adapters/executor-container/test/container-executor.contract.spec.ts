import { testExecutor } from '@toolgate/testing';
import { describe } from 'vitest';
import { ContainerExecutor } from '../src/index.js';
import { ENGINE_PATH, SANDBOX_IMAGE, sandboxUnavailable } from './sandbox-image.js';

// Decided once, as for the bwrap tier: where no engine answers (or it answers but cannot start a
// container) the suite is skipped with its reason, except in CI, where a missing tier must fail
// the build rather than silently test nothing.
const unavailable = await sandboxUnavailable();
if (unavailable && process.env['CI'] === 'true') {
  throw new Error(`CI=true but the container tier cannot run here: ${unavailable} (.ci/run installs podman, runc, catatonit and busybox-static, and test/podman-ci.conf)`);
}
if (unavailable) console.warn(`skipping the container tier contract tests: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('ContainerExecutor (container tier)', () => {
  // No engine named: the executor finds the one that answers, as a server configured for the tier does.
  testExecutor({ tier: 'container', create: () => new ContainerExecutor({ image: SANDBOX_IMAGE, hostPath: ENGINE_PATH }) });
});
