import type { Principal, ToolContext } from '@toolgate/contracts';

/** The principal a test context carries unless the test names another. */
export const TEST_PRINCIPAL: Principal = { id: 'worker-1', tenant: 'tenant-a', roles: ['worker'] };

/**
 * The context a handler receives, built for a test: a fresh signal that never fires, the
 * {@link TEST_PRINCIPAL}, call id `call-1` and a workspace path that does not exist (so a tool that
 * touches the file system without being given a real workspace fails loudly). Anything the test
 * cares about (the workspace, the signal, an HTTP client, a process runner) it passes in.
 */
export function testToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    signal: new AbortController().signal,
    principal: TEST_PRINCIPAL,
    workspaceRoot: '/nonexistent/workspace',
    callId: 'call-1',
    ...overrides,
  };
}
