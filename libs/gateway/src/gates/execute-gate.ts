import {
  ToolAbortedError,
  ToolError,
  type Denial,
  type JsonValue,
  type ToolContext,
  type ToolExecutor,
} from '@toolgate/contracts';
import { deny, toolOf, type Call, type Runtime } from '../call.js';
import { sanitizeToolMessage } from '../error-sanitizer.js';
import { ScopedHttpClient } from '../scoped-http-client.js';

/**
 * How long after the deadline the gateway still waits for an executor to report back (a process
 * tier may need a moment to kill its sandbox) before it answers TIMEOUT on its own.
 */
const DEADLINE_GRACE_MS = 2000;

export type Execution = { readonly ok: true; readonly output: JsonValue } | { readonly ok: false; readonly denial: Denial; readonly failed: boolean };

/** The executor of the tool's tier, or the refusal when this gateway has none. */
export function executorFor(call: Call, runtime: Runtime): ToolExecutor | Denial {
  const tier = toolOf(call).manifest.tier;
  return (
    runtime.executors.get(tier) ??
    deny('execute', 'EXECUTION_FAILED', `'${toolOf(call).manifest.name}' cannot run: tier '${tier}' is not available on this gateway.`, 'An operator must configure an executor for this tier.')
  );
}

/**
 * Gate 10: runs the handler through its executor with the manifest's deadline and a signal that
 * fires at the deadline or when the caller goes away. The gateway keeps its own deadline rather
 * than trusting the executor's error text, and answers at deadline + grace even if the executor
 * never does. Only `ToolError` messages reach the caller (sanitized); anything else is generic.
 */
export async function execute(call: Call, runtime: Runtime, executor: ToolExecutor, callerSignal?: AbortSignal): Promise<Execution> {
  call.gate = 'execute';
  const { manifest, handler } = toolOf(call);
  const { timeoutMs } = manifest;
  if (callerSignal?.aborted) return cancelled();

  let workspaceRoot: string;
  try {
    workspaceRoot = await runtime.workspaces.prepare(call.principal.tenant);
  } catch {
    return { ok: false, failed: false, denial: deny('execute', 'EXECUTION_FAILED', 'The tenant workspace could not be prepared, so the tool was not run.', 'An operator should check the workspace root directory.') };
  }

  const controller = new AbortController();
  const onCallerAbort = (): void => controller.abort(new ToolAbortedError('the caller went away'));
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  let deadlinePassed = false;
  let grace: ReturnType<typeof setTimeout> | undefined;
  let giveUp: (() => void) | undefined;
  const gaveUp = new Promise<'gave-up'>((resolve) => (giveUp = () => resolve('gave-up')));
  const deadline = setTimeout(() => {
    deadlinePassed = true;
    controller.abort(new ToolAbortedError(`timed out after ${timeoutMs} ms`));
    grace = setTimeout(() => giveUp?.(), DEADLINE_GRACE_MS);
  }, timeoutMs);

  const ctx: ToolContext = {
    signal: controller.signal,
    principal: call.principal,
    workspaceRoot,
    callId: call.callId,
    ...(runtime.deps.http && call.egress && manifest.permissions.some((p) => p.type === 'network')
      ? { http: new ScopedHttpClient(runtime.deps.http, call.egress.hosts, call.egress.allowAny, controller.signal) }
      : {}),
    ...(executor.processes ? { process: executor.processes } : {}),
  };

  try {
    const outcome = await Promise.race([executor.execute(handler, call.args, ctx, timeoutMs), gaveUp]);
    if (outcome === 'gave-up') return timedOut(timeoutMs);
    // A result that arrives after the deadline is not trusted to be complete.
    if (deadlinePassed) return timedOut(timeoutMs);
    return { ok: true, output: outcome };
  } catch (error) {
    if (deadlinePassed) return timedOut(timeoutMs);
    if (callerSignal?.aborted) return cancelled();
    const message =
      error instanceof ToolError
        ? sanitizeToolMessage(error.message, { workspaceRoot, argsJson: JSON.stringify(call.args) })
        : 'the tool failed';
    const reason = error instanceof ToolError ? error.reason : 'UNEXPECTED';
    return {
      ok: false,
      failed: true,
      denial: deny(
        'execute',
        'EXECUTION_FAILED',
        message,
        error instanceof ToolError ? undefined : 'The tool hit an unexpected error; details are withheld from callers. An operator can find the call by its callId.',
        { reason },
      ),
    };
  } finally {
    clearTimeout(deadline);
    clearTimeout(grace);
    callerSignal?.removeEventListener('abort', onCallerAbort);
  }
}

function timedOut(timeoutMs: number): Execution {
  return {
    ok: false,
    failed: true,
    denial: deny('execute', 'TIMEOUT', `The tool did not finish within its ${timeoutMs} ms deadline.`, 'Try a smaller request; the deadline is part of the tool manifest.', { timeoutMs }),
  };
}

function cancelled(): Execution {
  return { ok: false, failed: false, denial: deny('execute', 'EXECUTION_FAILED', 'The call was cancelled by the caller before the tool finished.') };
}
