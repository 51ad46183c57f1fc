import { setMaxListeners } from 'node:events';
import {
  ToolAbortedError,
  ToolError,
  type Denial,
  type ExecutionOutcome,
  type HttpClient,
  type InvokeOptions,
  type TenantWorkspaces,
  type ToolContext,
  type ToolExecutor,
} from '@toolgate/contracts';
import { toolOf, type Call, type Execution } from '../call.js';
import { deny } from '../denials/deny.js';
import { sanitizeToolMessage } from '../denials/error-sanitizer.js';
import { ScopedHttpClient } from '../egress/scoped-http-client.js';
import { CallRelay } from './call-relay.js';

/** What the execute step uses: the tenant's workspace, and the guarded client networked tools get. */
export interface ExecuteNeeds {
  readonly workspaces: TenantWorkspaces;
  readonly http?: HttpClient;
}

/**
 * Handed to handlers when nothing but the executor's deadline can stop the call. Shared by
 * every such call, so executors' (removed-again) listeners must not trip the leak warning.
 */
const NEVER_ABORTED = new AbortController().signal;
setMaxListeners(0, NEVER_ABORTED);

/** The executor of the tool's tier, or the refusal when this gateway has none. */
export function executorFor(call: Call, executors: ReadonlyMap<string, ToolExecutor>): ToolExecutor | Denial {
  const tier = toolOf(call).manifest.tier;
  return (
    executors.get(tier) ??
    deny('execute', 'EXECUTION_FAILED', `'${toolOf(call).manifest.name}' cannot run: tier '${tier}' is not available on this gateway.`, 'An operator must configure an executor for this tier.')
  );
}

/**
 * Gate 10: runs the handler through its executor with the manifest's deadline and a signal that
 * fires when the caller goes away. The executor owns the deadline (ADR 0033): it settles at the
 * deadline whatever the handler does and says so in its outcome, which no handler can forge, so
 * the gateway keeps no clock of its own. Caller cancellation stays here. Only `ToolError`
 * messages reach the caller (sanitized); anything else is generic.
 */
export async function execute(call: Call, needs: ExecuteNeeds, executor: ToolExecutor, options: InvokeOptions = {}): Promise<Execution> {
  call.gate = 'execute';
  const { manifest, handler } = toolOf(call);
  const { timeoutMs } = manifest;
  const callerSignal = options.signal;
  if (callerSignal?.aborted) return cancelled();

  let workspaceRoot = needs.workspaces.created(call.principal.tenant);
  if (workspaceRoot === undefined) {
    try {
      workspaceRoot = await needs.workspaces.prepare(call.principal.tenant);
    } catch {
      return { ok: false, failed: false, denial: deny('execute', 'EXECUTION_FAILED', 'The tenant workspace could not be prepared, so the tool was not run.', 'An operator should check the workspace root directory.') };
    }
  }

  // The executor aborts the handler's signal at the deadline (its contract). The gateway adds a
  // signal of its own only where something else must stop with the call: the caller going away,
  // and the scoped HTTP client of a networked tool, whose requests stop when the call is over.
  // An AbortController is the single largest cost of a fast call, so a tool with neither gets a
  // signal that never fires.
  const networked = needs.http !== undefined && call.egress !== undefined && manifest.permissions.some((p) => p.type === 'network');
  const controller = callerSignal || networked ? new AbortController() : undefined;
  const onCallerAbort = callerSignal ? (): void => controller?.abort(new ToolAbortedError('the caller went away')) : undefined;
  if (callerSignal && onCallerAbort) callerSignal.addEventListener('abort', onCallerAbort, { once: true });
  const signal = controller?.signal ?? NEVER_ABORTED;
  // A relay exists only where something can use it: a caller that takes progress or answers
  // requests, or an MCP source's tool, whose upstream may ask and must then be refused (and audited).
  const relay =
    options.progress || options.caller || manifest.provenance !== 'first-party' ? new CallRelay(options) : undefined;
  if (relay) call.relay = relay;

  const ctx: ToolContext = {
    signal,
    principal: call.principal,
    workspaceRoot,
    callId: call.callId,
    ...(networked && call.egress ? { http: new ScopedHttpClient(needs.http as HttpClient, call.egress.hosts, call.egress.allowAny, signal) } : {}),
    ...(executor.processes ? { process: executor.processes } : {}),
    ...(relay?.progress ? { progress: relay.progress } : {}),
    ...(relay ? { caller: relay.caller } : {}),
  };

  try {
    // An executor that rejects broke its contract (or refused its arguments): a failure, never a run.
    const outcome = await executor.execute(handler, call.args, ctx, timeoutMs).catch(
      (error: unknown): ExecutionOutcome => ({ status: 'threw', error }),
    );
    if (outcome.status === 'returned') return { ok: true, output: outcome.output };
    if (outcome.status === 'deadline') return timedOut(timeoutMs);
    // A handler that gives up because the caller went away is a cancellation, not a failure.
    if (outcome.status === 'aborted' || callerSignal?.aborted) return cancelled();
    return failed(outcome.error, workspaceRoot, call);
  } finally {
    // The call is over: whatever still runs with its signal (an HTTP request of a handler that
    // stopped waiting for it) stops now.
    controller?.abort(new ToolAbortedError('the call is over'));
    relay?.end();
    if (callerSignal && onCallerAbort) callerSignal.removeEventListener('abort', onCallerAbort);
  }
}

/** Only `ToolError` text reaches the caller, sanitized; anything else is a generic failure. */
function failed(error: unknown, workspaceRoot: string, call: Call): Execution {
  if (error instanceof ToolError) {
    const message = sanitizeToolMessage(error.message, { workspaceRoot, argsJson: JSON.stringify(call.args) });
    return { ok: false, failed: true, denial: deny('execute', 'EXECUTION_FAILED', message, undefined, { reason: error.reason }) };
  }
  return {
    ok: false,
    failed: true,
    denial: deny(
      'execute',
      'EXECUTION_FAILED',
      'the tool failed',
      'The tool hit an unexpected error; details are withheld from callers. An operator can find the call by its callId.',
      { reason: 'UNEXPECTED' },
    ),
  };
}

function timedOut(timeoutMs: number): Execution {
  return {
    ok: false,
    failed: true,
    denial: deny('execute', 'TIMEOUT', `The tool did not finish within its ${timeoutMs} ms deadline.`, 'Try a smaller request; the deadline is part of the tool manifest.', { timeoutMs }),
  };
}

/** The audit `detail` of a call its caller cancelled (its code stays `EXECUTION_FAILED`). */
export const CANCELLED_DETAIL = 'cancelled by the caller';

function cancelled(): Execution {
  return {
    ok: false,
    failed: false,
    cancelled: true,
    denial: deny('execute', 'EXECUTION_FAILED', 'The call was cancelled by the caller before the tool finished.', undefined, { reason: 'CANCELLED' }),
  };
}
