import { inputRequired, inputResponse, ProtocolError, ProtocolErrorCode, type InputRequiredResult, type JSONRPCMessage } from '@modelcontextprotocol/server';
import type { ApprovalRecord, Clock, Denial, InvokeOptions, InvokeRequest, InvokeResult, JsonObject, JsonValue, Principal } from '@toolgate/contracts';
import { randomKey, SERVER_REQUEST_ID_PREFIX, type CallerClient } from './client-session.js';
import { denialResult, denialText, type ToolCallResult } from './denial-result.js';
import type { McpFaceGateway } from './face-gateway.js';
import { tokenProblemText, type SignedTokens } from './signed-token.js';

/** The `_meta` key a client names an approval with on `tools/call`. */
export const APPROVAL_META_KEY = 'toolgate/approvalId';

/** The `inputRequests` key of the approval elicitation (2026-07-28). */
export const APPROVAL_INPUT_KEY = 'toolgate/approval';

/** The longest approval id accepted in `_meta`; ids this server issues are UUIDs. */
export const MAX_APPROVAL_ID_LENGTH = 128;

/** At most this many calls of one principal are held at once; beyond, the call answers at once. */
export const MAX_HELD_PER_PRINCIPAL = 8;

/** The default bound on holding one call while a human decides (5 minutes). */
export const DEFAULT_APPROVAL_WAIT_MS = 300_000;

/** How long a `requestState` is honoured: the gateway's default approval lifetime. */
const STATE_TTL_MS = 15 * 60_000;

/** The purpose a `requestState` is signed for. */
const STATE_PURPOSE = 'toolgate/approval-state';

/** Polling the store while a call is held: first after this, doubling up to `POLL_MAX_MS`. */
const POLL_FIRST_MS = 250;
const POLL_MAX_MS = 1000;

/** The approval id a `tools/call` names in `_meta`, or undefined; anything else is InvalidParams. */
export function approvalIdOf(meta: unknown): string | undefined {
  if (meta === undefined || meta === null || typeof meta !== 'object') return undefined;
  const id = (meta as Record<string, unknown>)[APPROVAL_META_KEY];
  if (id === undefined) return undefined;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_APPROVAL_ID_LENGTH) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `_meta["${APPROVAL_META_KEY}"] must be a non-empty string of at most ${MAX_APPROVAL_ID_LENGTH} characters`);
  }
  return id;
}

/** A client's answer to an `elicitation/create` the face pushed on a 2025-era stream. */
export type ElicitationAnswer = { readonly action: 'accept' | 'decline' | 'cancel' } | { readonly action: 'error' };

/**
 * Answers to the `elicitation/create` requests the face pushed to 2025-era clients. In stateless
 * serving the client POSTs its answer as a new request that no SDK instance expects (ADR 0051);
 * `McpFace.handle` hands it here by (session, request id), and a held call waiting on it learns
 * of a decline at once. An answer that reaches another process is lost; the call still ends
 * when the approval is decided or the wait is over.
 */
export class PendingElicitations {
  readonly #waiting = new Map<string, (answer: ElicitationAnswer) => void>();

  static #key(sessionKey: string, id: string): string {
    return `${sessionKey}\u0000${id}`;
  }

  /** Waits for the answer to request `id` of this session; `cancel` stops waiting. */
  register(sessionKey: string, id: string): { readonly answer: Promise<ElicitationAnswer>; cancel(): void } {
    const key = PendingElicitations.#key(sessionKey, id);
    const answer = new Promise<ElicitationAnswer>((resolve) => this.#waiting.set(key, resolve));
    return { answer, cancel: () => void this.#waiting.delete(key) };
  }

  /** Delivers an answer; only the session that was asked can answer, and only once. */
  settle(sessionKey: string, id: string, message: { result?: unknown; error?: unknown }): boolean {
    const key = PendingElicitations.#key(sessionKey, id);
    const resolve = this.#waiting.get(key);
    if (!resolve) return false;
    this.#waiting.delete(key);
    const action = (message.result as { action?: unknown } | undefined)?.action;
    resolve(action === 'accept' || action === 'decline' || action === 'cancel' ? { action } : { action: 'error' });
    return true;
  }
}

/**
 * The gateway's result with a hint an MCP client can follow: its request hint names the tRPC
 * `approvals.request`, which an MCP client has no way to call; calling the tool again does the same.
 */
function overMcp(result: InvokeResult): InvokeResult {
  if (result.ok || result.denial.gate !== 'approval' || !result.denial.hint?.includes('approvals.request')) return result;
  return {
    ...result,
    denial: {
      ...result.denial,
      hint:
        `Call this tool again with the same arguments and without _meta "${APPROVAL_META_KEY}": Toolgate asks for a new approval of exactly ` +
        'these arguments and says where an approver decides it.',
    },
  };
}

/**
 * A refusal the flow answers itself. With the call id of the gateway's audited denial when
 * there is one; a 2026-07-28 retry refused before any call has none to name.
 */
function refusalResult(denial: Denial, callId: string | undefined): ToolCallResult {
  if (callId !== undefined) return denialResult(callId, denial);
  const text = denialText(denial, '-').replace(/\nCall id: -\.$/, '');
  return { content: [{ type: 'text', text }], structuredContent: { ok: false, denial: denial as unknown as Record<string, JsonValue> }, isError: true };
}

export interface ApprovalFlowOptions {
  readonly gateway: McpFaceGateway;
  readonly tokens: SignedTokens;
  readonly approvalUrl: (approvalId: string) => string;
  /** 0 never holds a call. */
  readonly waitMs: number;
  readonly elicitations: PendingElicitations;
  /** What an approval's `expiresAt` is compared with: the gateway's clock (the wall clock by default). */
  readonly clock?: Clock;
}

/** What a `tools/call` carries into the flow besides its arguments. */
export interface CallIo {
  readonly signal: AbortSignal;
  /** The `requestState` a 2026-07-28 retry echoed, unverified. */
  readonly requestState?: unknown;
  /** The `inputResponses` of a 2026-07-28 retry, unverified. */
  readonly inputResponses?: Record<string, unknown>;
  /** Sends a message on this call's own stream (2025 era), for `elicitation/create` and its completion. */
  readonly push?: (message: JSONRPCMessage) => Promise<void>;
  /** Progress and caller requests the call's tool may use (the caller relay's; ADR 0054). */
  readonly invoke?: Pick<InvokeOptions, 'progress' | 'caller'>;
}

/** The flow's answer: a gateway result for the face to project, or a finished MCP result. */
export type FlowAnswer = { readonly kind: 'invoked'; readonly result: InvokeResult } | { readonly kind: 'answer'; readonly result: ToolCallResult | InputRequiredResult };

/** The approval a refused call is waiting for. */
interface Waiting {
  readonly approvalId: string;
  readonly digest: string;
}

/** Why a hold ended. */
type HoldEnd = 'decided' | 'pending' | 'busy' | 'expired' | 'missing' | 'aborted' | 'unavailable' | 'declined' | 'dismissed' | 'unshown';

const WALL_CLOCK: Clock = { now: () => Date.now() };

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Approvals that reach the human over MCP (ADR 0050). A high-risk call without an approval
 * gets a pending request bound to its exact payload, and then, by what the client declared:
 * a 2026-07-28 `input_required` URL elicitation, a 2025-11-25 `elicitation/create` in URL mode
 * on the call's own stream with the call held, or a tool error naming the request for a retry.
 * Nothing a client sends approves anything: an `accept` only means the user opened the page,
 * and the call runs only if the gateway, reading the store, finds the approval decided by an approver.
 */
export class ApprovalFlow {
  readonly #held = new Map<string, number>();
  readonly #clock: Clock;

  constructor(private readonly options: ApprovalFlowOptions) {
    if (!Number.isInteger(options.waitMs) || options.waitMs < 0) throw new RangeError(`approvalWaitMs must be a non-negative integer (got ${options.waitMs})`);
    this.#clock = options.clock ?? WALL_CLOCK;
  }

  /** One `tools/call`: the gateway's result, or the approval exchange that stands in for it. */
  async call(principal: Principal, caller: CallerClient, request: InvokeRequest, io: CallIo): Promise<FlowAnswer> {
    if (io.requestState !== undefined) return this.#resume(principal, request, io);
    const result = await this.options.gateway.invoke(principal, request, { signal: io.signal, ...io.invoke });
    // A caller that named an approval gets the gateway's own verdict on it, with a hint it can act on over MCP.
    if (result.ok || result.denial.code !== 'APPROVAL_REQUIRED' || request.approvalId !== undefined) return { kind: 'invoked', result: overMcp(result) };
    const waiting = await this.#waitingFor(principal, request, result.denial);
    if ('denial' in waiting) return { kind: 'answer', result: refusalResult(waiting.denial, waiting.callId ?? result.callId) };
    if (caller.era === 'modern' && caller.capabilities.elicitation?.url) return { kind: 'answer', result: this.#inputRequired(principal, request, waiting) };
    if (caller.era === 'legacy' && caller.capabilities.elicitation?.url && io.push && this.options.waitMs > 0) {
      const release = this.#take(principal);
      if (release) {
        try {
          return await this.#elicitAndHold(principal, caller, request, waiting, result.callId, io);
        } finally {
          release();
        }
      }
    }
    return { kind: 'answer', result: this.#retryLater(result.callId, request.tool, waiting, 'none') };
  }

  /** The pending, unexpired request the denial names, or a new one for the same payload. */
  async #waitingFor(principal: Principal, request: InvokeRequest, denial: Denial): Promise<Waiting | { denial: Denial; callId?: string }> {
    const named = denial.data?.['approvalId'];
    const digest = denial.data?.['payloadDigest'];
    if (typeof named === 'string' && typeof digest === 'string') {
      // Pointing a client at a request that expired (or went) meanwhile would have it wait on what nobody can
      // decide; one decided meanwhile, or a store that cannot be read, is left to the hold to find.
      const seen = await this.#peek(principal, named);
      if (seen !== 'expired' && seen !== 'missing') return { approvalId: named, digest };
    }
    const version = request.version ?? this.options.gateway.listTools(principal).find((t) => t.name === request.tool)?.version;
    const asked = await this.options.gateway.requestApproval(principal, { tool: request.tool, ...(version === undefined ? {} : { version }), args: request.args });
    if (!asked.ok) return asked.callId === undefined ? { denial: asked.denial } : { denial: asked.denial, callId: asked.callId };
    return { approvalId: asked.approval.id, digest: asked.approval.payloadDigest };
  }

  #inputRequired(principal: Principal, request: InvokeRequest, waiting: Waiting): InputRequiredResult {
    const state = this.options.tokens.sign(
      STATE_PURPOSE,
      { t: principal.tenant, p: principal.id, a: waiting.approvalId, d: waiting.digest, n: request.tool },
      STATE_TTL_MS,
    );
    return inputRequired({
      inputRequests: { [APPROVAL_INPUT_KEY]: inputRequired.elicitUrl({ message: this.#elicitMessage(request.tool, waiting), url: this.options.approvalUrl(waiting.approvalId) }) },
      requestState: state,
    });
  }

  /** A 2026-07-28 retry: verify the state, read the answer, hold until decided, then run or refuse. */
  async #resume(principal: Principal, request: InvokeRequest, io: CallIo): Promise<FlowAnswer> {
    const check = this.options.tokens.verify(STATE_PURPOSE, io.requestState);
    if (!check.ok) {
      if (check.problem === 'expired') {
        return { kind: 'answer', result: this.#stateExpired(request.tool) };
      }
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `requestState refused: ${tokenProblemText(check.problem)}; call the tool again without it`);
    }
    const { t, p, a, d, n } = check.payload as Record<string, unknown>;
    if (typeof t !== 'string' || typeof p !== 'string' || typeof a !== 'string' || typeof d !== 'string' || typeof n !== 'string') {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'requestState refused: it is not a state this server issued; call the tool again without it');
    }
    if (t !== principal.tenant || p !== principal.id) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'requestState refused: it was issued to another principal; call the tool again without it');
    }
    if (n !== request.tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `requestState refused: it was issued for another tool, not '${request.tool.slice(0, 64)}'`);
    if (request.approvalId !== undefined && request.approvalId !== a) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `requestState refused: it names another approval than _meta["${APPROVAL_META_KEY}"]`);
    }
    // The digest the gateway computes for these arguments now, after its repairs, without running or auditing anything.
    const explained = await this.options.gateway.explain(principal, { tool: request.tool, ...(request.version === undefined ? {} : { version: request.version }), args: request.args });
    if (explained.payloadDigest !== d) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'requestState refused: the arguments (or the tool version) differ from those the approval request covers; call the tool again without it',
      );
    }
    const waiting: Waiting = { approvalId: a, digest: d };
    const answer = inputResponse(io.inputResponses, APPROVAL_INPUT_KEY);
    if (answer.kind !== 'elicit') return { kind: 'answer', result: this.#retryLater(undefined, request.tool, waiting, 'none') };
    if (answer.action !== 'accept') return { kind: 'answer', result: this.#retryLater(undefined, request.tool, waiting, answer.action) };
    let end: HoldEnd = 'pending';
    const release = this.options.waitMs > 0 ? this.#take(principal) : undefined;
    if (release) {
      try {
        end = await this.#hold(principal, waiting.approvalId, io.signal);
      } finally {
        release();
      }
    } else {
      end = await this.#peek(principal, waiting.approvalId);
      // Not held because this principal's other held calls fill the cap, not because nobody decided in time.
      if (end === 'pending' && this.options.waitMs > 0) end = 'busy';
    }
    return this.#after(principal, request, waiting, end, io);
  }

  /** A 2025-11-25 client: `elicitation/create` (URL mode) on the call's stream, then hold. */
  async #elicitAndHold(principal: Principal, caller: CallerClient, request: InvokeRequest, waiting: Waiting, callId: string, io: CallIo): Promise<FlowAnswer> {
    const push = io.push as NonNullable<CallIo['push']>;
    const id = `${SERVER_REQUEST_ID_PREFIX}${randomKey()}`;
    const pending = this.options.elicitations.register(caller.sessionKey, id);
    try {
      try {
        await push({
          jsonrpc: '2.0',
          id,
          method: 'elicitation/create',
          params: { mode: 'url', elicitationId: waiting.approvalId, url: this.options.approvalUrl(waiting.approvalId), message: this.#elicitMessage(request.tool, waiting) },
        });
      } catch {
        // The stream is gone or cannot carry a request: the client still gets what it needs to retry.
        return { kind: 'answer', result: this.#retryLater(callId, request.tool, waiting, 'none') };
      }
      const end = await this.#hold(principal, waiting.approvalId, io.signal, pending.answer);
      if (end === 'decided') {
        // The client may close its page or notice; best effort, the result follows either way.
        await push({ jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId: waiting.approvalId } }).catch(() => undefined);
      }
      return await this.#after(principal, request, waiting, end, io);
    } finally {
      pending.cancel();
    }
  }

  /** Runs or refuses the call once a hold ended. */
  async #after(principal: Principal, request: InvokeRequest, waiting: Waiting, end: HoldEnd, io: CallIo): Promise<FlowAnswer> {
    switch (end) {
      case 'decided':
        // The gateway decides, from the store: approved runs (consuming it atomically), denied is APPROVAL_DENIED.
        return { kind: 'invoked', result: await this.options.gateway.invoke(principal, { ...request, approvalId: waiting.approvalId }, { signal: io.signal, ...io.invoke }) };
      case 'declined':
        return { kind: 'answer', result: this.#retryLater(undefined, request.tool, waiting, 'decline') };
      case 'dismissed':
        return { kind: 'answer', result: this.#retryLater(undefined, request.tool, waiting, 'cancel') };
      case 'unshown':
        return { kind: 'answer', result: this.#retryLater(undefined, request.tool, waiting, 'unshown') };
      case 'pending':
        return { kind: 'answer', result: this.#retryLater(undefined, request.tool, waiting, 'timeout') };
      case 'busy':
        return { kind: 'answer', result: this.#retryLater(undefined, request.tool, waiting, 'busy') };
      case 'expired':
        return {
          kind: 'answer',
          result: this.#refusal('APPROVAL_EXPIRED', `Approval request '${waiting.approvalId}' expired without a decision.`, 'Call the tool again to ask for a new approval.', waiting),
        };
      case 'missing':
        return {
          kind: 'answer',
          result: this.#refusal('APPROVAL_REQUIRED', `There is no approval request '${waiting.approvalId}' of yours any more.`, 'Call the tool again to ask for a new approval.', waiting),
        };
      case 'aborted':
        return { kind: 'answer', result: this.#refusal('EXECUTION_FAILED', 'The call was cancelled while it waited for an approval; it did not run.', undefined, waiting) };
      case 'unavailable':
        return {
          kind: 'answer',
          result: this.#refusal('STATE_UNAVAILABLE', 'The approval store could not be read, so the call did not run.', 'Try again later; the approval request stays as it was.', waiting),
        };
    }
  }

  /** One read of the approval, for a server that never holds. */
  async #peek(principal: Principal, approvalId: string): Promise<HoldEnd> {
    let record: ApprovalRecord | undefined;
    try {
      // Status only: the full view of a bash/git approval reads and hashes its named files, once per poll.
      record = await this.options.gateway.getApproval(principal, approvalId, { namedFiles: false });
    } catch {
      return 'unavailable';
    }
    if (!record) return 'missing';
    if (record.status !== 'pending') return 'decided';
    return this.#clock.now() >= record.expiresAt ? 'expired' : 'pending';
  }

  /**
   * Holds until the approval is decided, the bound is reached, the call is cancelled or the
   * client declines, polling the store with a backoff. Any store failure ends the hold without a run.
   */
  async #hold(principal: Principal, approvalId: string, signal: AbortSignal, answer?: Promise<ElicitationAnswer>): Promise<HoldEnd> {
    const deadline = Date.now() + this.options.waitMs;
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let refused: 'declined' | 'dismissed' | 'unshown' | undefined;
    void answer?.then((a) => {
      // An accept changes nothing (the user opened the page); a refusal, or a client that could not show it, ends the wait.
      if (a.action !== 'accept') {
        refused = a.action === 'error' ? 'unshown' : a.action === 'cancel' ? 'dismissed' : 'declined';
        stop.abort();
      }
    });
    try {
      let delay = POLL_FIRST_MS;
      for (;;) {
        if (refused) return refused;
        if (signal.aborted) return 'aborted';
        const seen = await this.#peek(principal, approvalId);
        if (seen !== 'pending') return seen;
        const left = deadline - Date.now();
        if (left <= 0) return 'pending';
        await sleep(Math.min(delay, left), stop.signal);
        delay = Math.min(delay * 2, POLL_MAX_MS);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Counts a held call against the principal's cap; undefined when the cap is reached. */
  #take(principal: Principal): (() => void) | undefined {
    const key = `${principal.tenant}\u0000${principal.id}`;
    const now = this.#held.get(key) ?? 0;
    if (now >= MAX_HELD_PER_PRINCIPAL) return undefined;
    this.#held.set(key, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(key) ?? 1) - 1;
      if (left <= 0) this.#held.delete(key);
      else this.#held.set(key, left);
    };
  }

  #elicitMessage(tool: string, waiting: Waiting): string {
    return (
      `Toolgate needs a human approval before '${tool}' runs with exactly these arguments. ` +
      `Open the page to see the request; an approver other than the caller decides it there. ` +
      `Approval request ${waiting.approvalId}, payload ${waiting.digest}.`
    );
  }

  /**
   * The tool error for a client that cannot be held (or was not): the approval id, digest and
   * page, and how to retry over MCP. The gateway's own hint names the tRPC call, not MCP's.
   */
  #retryLater(callId: string | undefined, tool: string, waiting: Waiting, why: 'none' | 'decline' | 'cancel' | 'timeout' | 'busy' | 'unshown'): ToolCallResult {
    const url = this.options.approvalUrl(waiting.approvalId);
    const reason = {
      none: `'${tool}' needs a human approval for exactly these arguments.`,
      decline: 'The user declined to open the approval page.',
      cancel: 'The approval page was dismissed.',
      timeout: `No approver decided within ${Math.round(this.options.waitMs / 1000)} s.`,
      busy: `You already have ${MAX_HELD_PER_PRINCIPAL} calls waiting for approvals, the most held at once, so this one was not held.`,
      unshown: 'The client could not show the approval page.',
    }[why];
    const denial: Denial = {
      gate: 'approval',
      code: 'APPROVAL_REQUIRED',
      message: `${reason} Approval request '${waiting.approvalId}' (payload ${waiting.digest}) is pending; an approver decides it at ${url}`,
      hint:
        'Once an approver has approved it, call this tool again with the same arguments; you may add ' +
        `_meta {"${APPROVAL_META_KEY}": "${waiting.approvalId}"}. The approval allows one call.`,
      data: { approvalId: waiting.approvalId, payloadDigest: waiting.digest, approvalUrl: url },
    };
    return refusalResult(denial, callId);
  }

  #stateExpired(tool: string): ToolCallResult {
    return refusalResult({
      gate: 'approval',
      code: 'APPROVAL_EXPIRED',
      message: `The approval exchange for '${tool}' expired before this retry.`,
      hint: 'Call the tool again with the same arguments; a pending approval request for them is found again.',
    }, undefined);
  }

  #refusal(code: Denial['code'], message: string, hint: string | undefined, waiting: Waiting): ToolCallResult {
    const data: Record<string, JsonValue> = { approvalId: waiting.approvalId, payloadDigest: waiting.digest };
    return refusalResult({ gate: 'approval', code, message, ...(hint === undefined ? {} : { hint }), data: data as JsonObject }, undefined);
  }
}
