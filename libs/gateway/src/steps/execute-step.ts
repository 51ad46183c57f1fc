import { setMaxListeners } from 'node:events';
import {
  ToolAbortedError,
  ToolError,
  ToolNotReachedError,
  type Denial,
  type ExecutionOutcome,
  type HttpClient,
  type InvokeOptions,
  type TenantWorkspaces,
  type ToolContext,
  type ToolExecutor,
  type ToolHandler,
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

/**
 * The execute step's answer, and whether the call was handed to its tool (ADR 0062): the handler
 * was invoked and did not end with `ToolNotReachedError`. A call that was not handed over ran
 * nothing, so the approval it used is given back.
 */
export type Ran = Execution & { readonly handed: boolean };

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
export async function execute(call: Call, needs: ExecuteNeeds, executor: ToolExecutor, options: InvokeOptions = {}): Promise<Ran> {
  call.gate = 'execute';
  const { manifest, handler } = toolOf(call);
  const { timeoutMs } = manifest;
  const callerSignal = options.signal;
  if (callerSignal?.aborted) return cancelled(false);

  let workspaceRoot = needs.workspaces.created(call.principal.tenant);
  if (workspaceRoot === undefined) {
    try {
      workspaceRoot = await needs.workspaces.prepare(call.principal.tenant);
    } catch {
      return {
        ok: false,
        failed: false,
        handed: false,
        denial: deny('execute', 'EXECUTION_FAILED', 'The tenant workspace could not be prepared, so the tool was not run.', 'An operator should check the workspace root directory.', { reached: false }),
      };
    }
    // The caller may have gone while the workspace was prepared; its signal would not fire again.
    if (callerSignal?.aborted) return cancelled(false);
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

  // Whether the executor invoked the handler at all: one that refuses to start it (an aborted
  // signal, a bad deadline, a broken executor) handed nothing over, whatever it answers. Once the
  // step has answered, a late invocation (an executor that settled first) never reaches the
  // handler, so an approval given back for a call that was not started stays true.
  const started = { invoked: false, over: false };
  const watched: ToolHandler = {
    invoke(args, handlerCtx) {
      if (started.over) return Promise.reject(new ToolAbortedError('the call is over'));
      started.invoked = true;
      return handler.invoke(args, handlerCtx);
    },
  };

  try {
    // An executor that rejects broke its contract (or refused its arguments): a failure, never a run.
    const outcome = await executor.execute(watched, call.args, ctx, timeoutMs).catch(
      (error: unknown): ExecutionOutcome => ({ status: 'threw', error }),
    );
    if (outcome.status === 'returned') return { ok: true, output: outcome.output, handed: true };
    const handed = started.invoked;
    if (outcome.status === 'deadline') return timedOut(timeoutMs, handed);
    // The handler is sure nothing was handed over (an MCP server restarting, a request its client
    // refused before writing it): even if the caller went away meanwhile, nothing ran.
    if (outcome.status === 'threw' && outcome.error instanceof ToolNotReachedError) return notReached(outcome.error, workspaceRoot, call);
    // A handler that gives up because the caller went away is a cancellation, not a failure.
    if (outcome.status === 'aborted' || callerSignal?.aborted) return cancelled(handed);
    return failed(outcome.error, workspaceRoot, call, handed);
  } finally {
    started.over = true;
    // The call is over: whatever still runs with its signal (an HTTP request of a handler that
    // stopped waiting for it) stops now.
    controller?.abort(new ToolAbortedError('the call is over'));
    relay?.end();
    if (callerSignal && onCallerAbort) callerSignal.removeEventListener('abort', onCallerAbort);
  }
}

/** The handler's own word that the call never reached the tool: its (sanitized) reason, and that nothing ran. */
function notReached(error: ToolNotReachedError, workspaceRoot: string, call: Call): Ran {
  const message = sanitizeToolMessage(error.message, { workspaceRoot, argsJson: JSON.stringify(call.args) });
  return {
    ok: false,
    failed: true,
    handed: false,
    denial: deny('execute', 'EXECUTION_FAILED', `${withStop(message)} The call did not reach the tool.`, 'Nothing ran; the same call can be tried again.', { reason: error.reason, reached: false }),
  };
}

/** The text with a full stop, so a sentence can follow it. */
function withStop(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** Only `ToolError` text reaches the caller, sanitized; anything else is a generic failure. */
function failed(error: unknown, workspaceRoot: string, call: Call, handed: boolean): Ran {
  if (error instanceof ToolError) {
    const message = sanitizeToolMessage(error.message, { workspaceRoot, argsJson: JSON.stringify(call.args) });
    if (error.reason === 'OUTPUT_TOO_LARGE') {
      // An answer too large to carry (an MCP source drops it unread, ADR 0059) is refused as the output gate refuses one too large to pass.
      return { ok: false, failed: true, handed, denial: deny('execute', 'OUTPUT_TOO_LARGE', message, OUTPUT_HINT, { reason: error.reason }) };
    }
    return { ok: false, failed: true, handed, denial: deny('execute', 'EXECUTION_FAILED', message, undefined, { reason: error.reason }) };
  }
  return {
    ok: false,
    failed: true,
    handed,
    denial: deny(
      'execute',
      'EXECUTION_FAILED',
      'the tool failed',
      'The tool hit an unexpected error; details are withheld from callers. An operator can find the call by its callId.',
      { reason: 'UNEXPECTED' },
    ),
  };
}

/** What a caller can do about an answer too large, as the output gate says it. */
const OUTPUT_HINT = 'Ask for less, e.g. a narrower query or a smaller page.';

function timedOut(timeoutMs: number, handed: boolean): Ran {
  return {
    ok: false,
    failed: true,
    handed,
    denial: deny('execute', 'TIMEOUT', `The tool did not finish within its ${timeoutMs} ms deadline.`, 'Try a smaller request; the deadline is part of the tool manifest.', { timeoutMs }),
  };
}

/** The audit `detail` of a call its caller cancelled (its code stays `EXECUTION_FAILED`). */
export const CANCELLED_DETAIL = 'cancelled by the caller';

/** A cancellation; `handed` says whether the handler had started (then the approval stays used). */
function cancelled(handed: boolean): Ran {
  return {
    ok: false,
    failed: false,
    cancelled: true,
    handed,
    denial: handed
      ? deny('execute', 'EXECUTION_FAILED', 'The call was cancelled by the caller before the tool finished.', undefined, { reason: 'CANCELLED' })
      : deny('execute', 'EXECUTION_FAILED', 'The call was cancelled by the caller before the tool started.', undefined, { reason: 'CANCELLED', reached: false }),
  };
}
