import { createHash } from 'node:crypto';
import { inputRequired, ProtocolError, ProtocolErrorCode, type InputRequest, type InputRequiredResult, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { ToolAbortedError, ToolError, type CallerRequestKind, type CallerRequests, type InvokeOptions, type JsonObject, type Principal, type ProgressUpdate } from '@toolgate/contracts';
import { jsonBoundsProblem, MAX_ARGS_DEPTH } from '@toolgate/gateway';
import { approvalLookalikeProblem } from './approval-lookalike.js';
import { randomKey, SERVER_REQUEST_ID_PREFIX, type CallerClient } from './client-session.js';
import { tokenProblemText, type SignedTokens } from './signed-token.js';

/** The prefix that marks a `requestState` as the relay's (the approval flow's states have none). */
export const RELAY_STATE_PREFIX = 'relay~';
/** The purpose a relay `requestState` is signed for; no other token verifies as one. */
const RELAY_PURPOSE = 'toolgate/relay-state';
/** The `inputRequests` keys of relayed requests: `toolgate/relay-<n>`. */
const INPUT_KEY_PREFIX = 'toolgate/relay-';

/** How long a suspended 2026-07-28 call waits for its client's retry before it is cancelled. */
export const DEFAULT_SUSPEND_MS = 120_000;
/** Suspended calls one principal may hold at once; a relay beyond is refused. */
export const MAX_SUSPENDED_PER_PRINCIPAL = 8;
/** Requests relayed in one call at most; an upstream that keeps asking is refused past it. */
export const MAX_RELAYS_PER_CALL = 16;
/** Largest answer a client may give to one relayed request, as JSON text. */
export const MAX_ANSWER_BYTES = 256 * 1024;
/** Deepest nesting of a client's answer; `JSON.stringify` recurses once per level, so it is checked first. */
export const MAX_ANSWER_DEPTH = 64;

/** A 2025-era client's answer to a request the relay pushed on its call's stream. */
interface Waiter {
  readonly kind: CallerRequestKind;
  resolve(answer: JsonObject): void;
  reject(error: Error): void;
}

/** What one `tools/call` round brings to the relay. */
export interface RelayRound {
  readonly principal: Principal;
  readonly caller: CallerClient;
  readonly tool: string;
  readonly args: JsonObject;
  /** Fires when this round's request is cancelled or its client goes away. */
  readonly signal: AbortSignal;
  /** The round's `requestState`, unverified (a relay state, the approval flow's, or none). */
  readonly requestState?: unknown;
  readonly inputResponses?: Record<string, unknown>;
  /** Sends progress to this round's client; present when it sent a progress token. */
  readonly progress?: (update: ProgressUpdate) => void;
  /** Sends a message on this call's own stream (2025 era). */
  readonly push?: (message: JSONRPCMessage) => Promise<void>;
}

/** What the relay hands the call it runs: the signal to stop it by, the state not its own, and the relay's invoke options. */
export interface RelayedRun {
  readonly signal: AbortSignal;
  /** The `requestState` for the approval flow (undefined when the round carried the relay's own). */
  readonly requestState?: unknown;
  readonly invoke: Pick<InvokeOptions, 'progress' | 'caller'>;
}

/** A round's answer: the call's own, or the `input_required` result that carries the relayed requests. */
export type RelayAnswer<T> = { readonly kind: 'done'; readonly value: T } | { readonly kind: 'input'; readonly result: InputRequiredResult };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The declared capability for this kind (and elicitation mode), by what the client sent. */
function declares(caller: CallerClient, kind: CallerRequestKind, params?: JsonObject): boolean {
  const caps = caller.capabilities as Record<string, unknown>;
  if (kind === 'sampling') return isObject(caps['sampling']);
  const elicitation = caps['elicitation'];
  if (!isObject(elicitation)) return false;
  if (params === undefined) return true;
  // A bare `elicitation: {}` is form mode (2025-11-25); URL mode must be declared as such.
  if (params['mode'] === 'url') return isObject(elicitation['url']);
  return isObject(elicitation['form']) || Object.keys(elicitation).length === 0;
}

/** The answer as handed back to the tool, or why it is refused (it came from the client: untrusted). */
function checkAnswer(kind: CallerRequestKind, answer: unknown): JsonObject {
  if (!isObject(answer)) throw new ToolError(`the calling client's ${kind} answer is not a JSON object`, 'RELAY_BAD_ANSWER');
  // Bounded before it is serialized: a hostile depth would overflow the stack in JSON.stringify.
  const problem = jsonBoundsProblem(answer, { maxDepth: MAX_ANSWER_DEPTH, maxBytes: MAX_ANSWER_BYTES });
  if (problem?.kind === 'depth') throw new ToolError(`the calling client's ${kind} answer is nested deeper than ${MAX_ANSWER_DEPTH} levels`, 'RELAY_BAD_ANSWER');
  if (problem !== undefined) throw new ToolError(`the calling client's ${kind} answer exceeds ${MAX_ANSWER_BYTES} bytes`, 'RELAY_BAD_ANSWER');
  const size = Buffer.byteLength(JSON.stringify(answer));
  if (size > MAX_ANSWER_BYTES) throw new ToolError(`the calling client's ${kind} answer of ${size} bytes exceeds ${MAX_ANSWER_BYTES} bytes`, 'RELAY_BAD_ANSWER');
  if (kind === 'elicitation' && !['accept', 'decline', 'cancel'].includes(answer['action'] as string)) {
    throw new ToolError("the calling client's elicitation answer has no action of accept, decline or cancel", 'RELAY_BAD_ANSWER');
  }
  return answer as JsonObject;
}

/** Flattened, capped text from a client's error (it goes back upstream). */
function clientErrorText(error: unknown): string {
  const message = isObject(error) && typeof error['message'] === 'string' ? error['message'] : 'no message';
  // eslint-disable-next-line no-control-regex
  const flat = message.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}

/** A relay that waits on a signal; settles once. */
function abortable<T>(signal: AbortSignal, start: (resolve: (v: T) => void, reject: (e: Error) => void) => () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(new ToolAbortedError('the call is over'));
    let cleanup = (): void => undefined;
    const onAbort = (): void => {
      cleanup();
      reject(new ToolAbortedError('the call is over'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    cleanup = start(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** A relayed request of a suspended call: asked by the tool, not yet (or just) sent to the client. */
interface Asked {
  readonly key: string;
  readonly kind: CallerRequestKind;
  readonly request: InputRequest;
  resolve(answer: JsonObject): void;
  reject(error: Error): void;
}

/**
 * One 2026-07-28 call that asked its client something. The revision has no server-to-client
 * requests: the round's `tools/call` answers `input_required` with the questions, the call
 * keeps running here, suspended, and the client's retry (same tool and arguments, the answers,
 * the signed `requestState`) resumes it. Between rounds only the suspension bound can stop it.
 */
class SuspendedCall<T> {
  readonly id = randomKey();
  /** Which round the next retry must name; a replayed or concurrent retry names another. */
  round = 0;
  readonly controller = new AbortController();
  readonly #asked: Asked[] = [];
  readonly #sent = new Map<string, Asked>();
  #count = 0;
  #done: { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown } | undefined;
  #wake: (() => void) | undefined;
  #progress: ((update: ProgressUpdate) => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Whether a round is running now (a `tools/call` is waiting on this call). */
  active = false;

  constructor(
    readonly principal: Principal,
    readonly tool: string,
    /** Undefined when the arguments have no digest: then the call can never be suspended. */
    readonly argsHash: string | undefined,
    readonly caller: CallerClient,
    private readonly onGone: () => void,
  ) {}

  /** The requests the call's tool may put, per what the client declared. */
  requests(): CallerRequests {
    const requests: CallerRequests = {};
    const ask = (kind: CallerRequestKind) => (params: JsonObject, signal: AbortSignal) => this.#ask(kind, params, signal);
    if (declares(this.caller, 'elicitation')) (requests as { elicit?: CallerRequests['elicit'] }).elicit = ask('elicitation');
    if (declares(this.caller, 'sampling')) (requests as { sample?: CallerRequests['sample'] }).sample = ask('sampling');
    return requests;
  }

  /** Where progress goes from now on: the round that is about to run. */
  useProgress(sink: ((update: ProgressUpdate) => void) | undefined): void {
    this.#progress = sink;
  }

  /** Progress goes to the round running now; while suspended there is no stream to send it on. */
  progress(update: ProgressUpdate): void {
    this.#progress?.(update);
  }

  /** The call is over, with its value or the error it failed with; the round running now (or the next retry) gets it. */
  finish(outcome: { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown }): void {
    this.#done = outcome;
    this.#wake?.();
  }

  /**
   * Runs one round: delivers the retry's answers, then waits until the call ends or asks again.
   * The round's signal stops the call only while the round runs.
   */
  async runRound(round: RelayRound, answers: Record<string, unknown> | undefined): Promise<RelayAnswer<T>> {
    clearTimeout(this.#timer);
    this.active = true;
    this.#progress = round.progress;
    const onAbort = (): void => this.controller.abort(new ToolAbortedError('the caller went away'));
    if (round.signal.aborted) onAbort();
    else round.signal.addEventListener('abort', onAbort, { once: true });
    try {
      this.#deliver(answers);
      for (;;) {
        if (this.#done) {
          clearTimeout(this.#timer);
          this.onGone();
          if (!this.#done.ok) throw this.#done.error;
          return { kind: 'done', value: this.#done.value };
        }
        if (this.#asked.length > 0) return { kind: 'input', result: this.#suspend() };
        await new Promise<void>((resolve) => (this.#wake = resolve));
        this.#wake = undefined;
      }
    } finally {
      round.signal.removeEventListener('abort', onAbort);
      this.#progress = undefined;
      this.active = false;
    }
  }

  /** Ends the call for good: it is cancelled and forgotten. */
  cancel(reason: string): void {
    clearTimeout(this.#timer);
    this.controller.abort(new ToolAbortedError(reason));
    for (const asked of [...this.#asked, ...this.#sent.values()]) asked.reject(new ToolAbortedError(reason));
    this.#asked.length = 0;
    this.#sent.clear();
    this.onGone();
  }

  #ask(kind: CallerRequestKind, params: JsonObject, signal: AbortSignal): Promise<JsonObject> {
    if (this.#count >= MAX_RELAYS_PER_CALL) {
      return Promise.reject(new ToolError(`the call already relayed ${MAX_RELAYS_PER_CALL} requests to its caller; no more are relayed`, 'RELAY_LIMIT'));
    }
    let request: InputRequest;
    try {
      request = toInputRequest(kind, params);
    } catch (error) {
      return Promise.reject(new ToolError(`the ${kind} request cannot be relayed: ${error instanceof Error ? clientErrorText(error) : 'invalid'}`, 'RELAY_BAD_REQUEST'));
    }
    if (kind === 'elicitation' && !declares(this.caller, kind, params)) {
      return Promise.reject(new ToolError(`the calling client did not declare elicitation in ${String(params['mode'] ?? 'form')} mode`, 'RELAY_REFUSED'));
    }
    this.#count += 1;
    const key = `${INPUT_KEY_PREFIX}${this.#count}`;
    return abortable<JsonObject>(signal, (resolve, reject) => {
      const asked: Asked = { key, kind, request, resolve, reject };
      this.#asked.push(asked);
      this.#wake?.();
      return () => {
        const at = this.#asked.indexOf(asked);
        if (at >= 0) this.#asked.splice(at, 1);
        this.#sent.delete(key);
      };
    });
  }

  /** Hands each answer to the request it answers; one the client left out fails that request. */
  #deliver(answers: Record<string, unknown> | undefined): void {
    for (const [key, asked] of this.#sent) {
      const answer = answers?.[key];
      try {
        if (answer === undefined) throw new ToolError(`the calling client did not answer the ${asked.kind} request`, 'RELAY_NO_ANSWER');
        asked.resolve(checkAnswer(asked.kind, answer));
      } catch (error) {
        asked.reject(error as Error);
      }
    }
    this.#sent.clear();
  }

  /** Moves the asked requests into an `input_required` result and starts the suspension bound. */
  #suspend(): InputRequiredResult {
    const inputRequests: Record<string, InputRequest> = {};
    for (const asked of this.#asked.splice(0)) {
      inputRequests[asked.key] = asked.request;
      this.#sent.set(asked.key, asked);
    }
    this.round += 1;
    return { resultType: 'input_required', inputRequests } as InputRequiredResult;
  }

  /** Starts the bound of the wait for the retry (after the round's answer is built). */
  armTimer(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.cancel('the client did not retry the call in time'), ms);
    this.#timer.unref?.();
  }
}

/** The MCP request a relayed one becomes (2026-07-28 embeds it; the builders check its shape). */
function toInputRequest(kind: CallerRequestKind, params: JsonObject): InputRequest {
  if (kind === 'sampling') return inputRequired.createMessage(params as never);
  if (params['mode'] === 'url') {
    const { message, url } = params as { message?: unknown; url?: unknown };
    if (typeof message !== 'string' || typeof url !== 'string') throw new TypeError('a URL elicitation needs a message and a url');
    return inputRequired.elicitUrl({ message, url });
  }
  const { mode: _mode, ...form } = params;
  return inputRequired.elicit(form as never);
}

/**
 * A digest of the arguments a suspended call was made with; its retry must send the same. The
 * arguments are the client's, not yet through the gateway's gates: nesting past the depth gate's
 * bound (which `JSON.stringify` would overflow the stack on) has no digest, so no retry with such
 * arguments can match, while a new call with them goes on to the gateway, whose size gate refuses
 * and audits it.
 */
function argsHashOf(args: JsonObject): string | undefined {
  if (jsonBoundsProblem(args, { maxDepth: MAX_ARGS_DEPTH }) !== undefined) return undefined;
  try {
    return createHash('sha256').update(JSON.stringify(args)).digest('base64url').slice(0, 22);
  } catch {
    return undefined;
  }
}

export interface CallerRelayOptions {
  readonly tokens: SignedTokens;
  /** How long a suspended call waits for the retry (default {@link DEFAULT_SUSPEND_MS}). */
  readonly suspendMs?: number;
  /**
   * The face's approval page URL for an id: an upstream's URL elicitation on that page's host or
   * path is refused, so it cannot pass for Toolgate's own approval request. Default `/approvals/<id>`.
   */
  readonly approvalUrl?: (approvalId: string) => string;
}

/**
 * Relays an upstream MCP server's elicitation and sampling, asked during a call, to the client
 * that made the call, and the call's progress to that client (ADR 0054). A request reaches
 * only the calling client, only if it declared the capability, and only while the call runs.
 *
 * - 2025 era: the request is pushed on the call's own SSE stream with an unguessable id; the
 *   client POSTs the answer to a fresh stateless instance, and `McpFace.handle` hands it to
 *   {@link settle}, which accepts it only from the session that was asked.
 * - 2026-07-28: the round answers `input_required`; the call stays suspended under a signed
 *   `requestState` naming it and its principal, bounded in time and per principal.
 */
export class CallerRelay {
  readonly #waiters = new Map<string, Waiter>();
  readonly #suspended = new Map<string, SuspendedCall<unknown>>();
  readonly #perPrincipal = new Map<string, number>();
  readonly #suspendMs: number;

  constructor(private readonly options: CallerRelayOptions) {
    this.#suspendMs = options.suspendMs ?? DEFAULT_SUSPEND_MS;
    if (!Number.isInteger(this.#suspendMs) || this.#suspendMs <= 0) throw new RangeError(`suspendMs must be a positive integer (got ${this.#suspendMs})`);
  }

  /** A relayed URL elicitation that could pass for Toolgate's approval request, refused before its client sees it. */
  #lookalike(kind: CallerRequestKind, params: JsonObject): ToolError | undefined {
    if (kind !== 'elicitation' || params['mode'] !== 'url') return undefined;
    const problem = approvalLookalikeProblem(params['url'], this.options.approvalUrl ?? ((id) => `/approvals/${encodeURIComponent(id)}`));
    return problem === undefined ? undefined : new ToolError(`the URL elicitation is not relayed: ${problem}`, 'RELAY_REFUSED');
  }

  /** Suspended calls held now (for tests and health). */
  get suspended(): number {
    return this.#suspended.size;
  }

  /**
   * A 2025-era client's answer to a request the relay pushed; true when it was one. Only the
   * session that was asked can answer (the key is its verified session and the random id).
   */
  settle(sessionKey: string, id: string, message: { result?: unknown; error?: unknown }): boolean {
    const key = `${sessionKey}\u0000${id}`;
    const waiter = this.#waiters.get(key);
    if (!waiter) return false;
    this.#waiters.delete(key);
    if (message.error !== undefined) waiter.reject(new ToolError(`the calling client refused the ${waiter.kind} request: ${clientErrorText(message.error)}`, 'RELAY_REFUSED'));
    else {
      try {
        waiter.resolve(checkAnswer(waiter.kind, message.result));
      } catch (error) {
        waiter.reject(error as Error);
      }
    }
    return true;
  }

  /**
   * Runs one `tools/call` round: a new call (through `run`), or, when the round carries the
   * relay's `requestState`, the suspended call it names, resumed with the round's answers.
   */
  async round<T>(round: RelayRound, run: (relayed: RelayedRun) => Promise<T>): Promise<RelayAnswer<T>> {
    if (typeof round.requestState === 'string' && round.requestState.startsWith(RELAY_STATE_PREFIX)) return this.#resume<T>(round);
    const passState = round.requestState === undefined ? {} : { requestState: round.requestState };
    const asks = declares(round.caller, 'elicitation') || declares(round.caller, 'sampling');
    if (round.caller.era === 'legacy' || !asks) {
      const caller = round.caller.era === 'legacy' && asks && round.push ? this.#legacyCaller(round.caller, round.push) : undefined;
      const invoke = { ...(round.progress ? { progress: round.progress } : {}), ...(caller ? { caller } : {}) };
      return { kind: 'done', value: await run({ signal: round.signal, ...passState, invoke }) };
    }
    const call = new SuspendedCall<T>(round.principal, round.tool, argsHashOf(round.args), round.caller, () => this.#forget(call));
    // The tool may report progress before its first round is waiting on it.
    call.useProgress(round.progress);
    const relayed = run({
      signal: call.controller.signal,
      ...passState,
      invoke: { progress: (u) => call.progress(u), caller: this.#capped(call) },
    });
    // The call may finish in any round, or while suspended (its answer then waits for the retry).
    relayed.then(
      (value) => call.finish({ ok: true, value }),
      (error: unknown) => call.finish({ ok: false, error }),
    );
    return this.#answer(call, await call.runRound(round, undefined));
  }

  /** The suspended call's requests, refused once its principal holds as many suspended calls as allowed. */
  #capped<T>(call: SuspendedCall<T>): CallerRequests {
    const requests = call.requests();
    const wrap = (kind: CallerRequestKind, ask: ((p: JsonObject, s: AbortSignal) => Promise<JsonObject>) | undefined) =>
      ask &&
      ((params: JsonObject, signal: AbortSignal) => {
        // Fail closed: without a digest no retry could be bound to these arguments.
        if (call.argsHash === undefined) return Promise.reject(new ToolError('the call\'s arguments cannot be bound to a retry; this request is not relayed', 'RELAY_REFUSED'));
        const lookalike = this.#lookalike(kind, params);
        if (lookalike) return Promise.reject(lookalike);
        const who = principalKey(call.principal);
        if (!this.#suspended.has(call.id) && (this.#perPrincipal.get(who) ?? 0) >= MAX_SUSPENDED_PER_PRINCIPAL) {
          return Promise.reject(new ToolError(`the caller already has ${MAX_SUSPENDED_PER_PRINCIPAL} calls waiting for its answers; this request is not relayed`, 'RELAY_LIMIT'));
        }
        return ask(params, signal);
      });
    return {
      ...(requests.elicit ? { elicit: wrap('elicitation', requests.elicit.bind(requests)) } : {}),
      ...(requests.sample ? { sample: wrap('sampling', requests.sample.bind(requests)) } : {}),
    } as CallerRequests;
  }

  /** Turns a round's answer into the call's result, or the `input_required` one with its signed state. */
  #answer<T>(call: SuspendedCall<T>, answer: RelayAnswer<T>): RelayAnswer<T> {
    if (answer.kind === 'done') return answer;
    // #capped refuses every request of a call without a digest, so such a call never gets here.
    if (call.argsHash === undefined) throw new ToolError('the call\'s arguments cannot be bound to a retry', 'RELAY_REFUSED');
    if (!this.#suspended.has(call.id)) {
      const who = principalKey(call.principal);
      this.#suspended.set(call.id, call as SuspendedCall<unknown>);
      this.#perPrincipal.set(who, (this.#perPrincipal.get(who) ?? 0) + 1);
    }
    const state = this.options.tokens.sign(
      RELAY_PURPOSE,
      { t: call.principal.tenant, p: call.principal.id, c: call.id, r: call.round, n: call.tool, a: call.argsHash },
      this.#suspendMs,
    );
    call.armTimer(this.#suspendMs);
    return { kind: 'input', result: { ...answer.result, requestState: `${RELAY_STATE_PREFIX}${state}` } };
  }

  async #resume<T>(round: RelayRound): Promise<RelayAnswer<T>> {
    const refuse = (why: string): never => {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `requestState refused: ${why}; call the tool again without it`);
    };
    const check = this.options.tokens.verify(RELAY_PURPOSE, (round.requestState as string).slice(RELAY_STATE_PREFIX.length));
    if (!check.ok) return refuse(tokenProblemText(check.problem));
    const { t, p, c, r, n, a } = check.payload as Record<string, unknown>;
    if (t !== round.principal.tenant || p !== round.principal.id) return refuse('it was issued to another principal');
    if (n !== round.tool) return refuse(`it was issued for another tool, not '${round.tool.slice(0, 64)}'`);
    const hash = argsHashOf(round.args);
    if (hash === undefined || a !== hash) return refuse('the arguments differ from those of the call it resumes');
    const call = typeof c === 'string' ? (this.#suspended.get(c) as SuspendedCall<T> | undefined) : undefined;
    if (!call || principalKey(call.principal) !== principalKey(round.principal)) {
      return refuse('the call it names is no longer waiting (it ended, ran out of time, or is held by another server process)');
    }
    if (call.active || r !== call.round) return refuse('it names a round of the call that was already answered');
    return this.#answer(call, await call.runRound(round, round.inputResponses));
  }

  #forget(call: SuspendedCall<unknown>): void {
    if (!this.#suspended.delete(call.id)) return;
    const who = principalKey(call.principal);
    const left = (this.#perPrincipal.get(who) ?? 1) - 1;
    if (left <= 0) this.#perPrincipal.delete(who);
    else this.#perPrincipal.set(who, left);
  }

  /** A 2025-era caller: each request pushed on the call's stream under a fresh random id. */
  #legacyCaller(caller: CallerClient, push: (message: JSONRPCMessage) => Promise<void>): CallerRequests {
    let count = 0;
    const ask = (kind: CallerRequestKind, method: string) => (params: JsonObject, signal: AbortSignal) => {
      if (kind === 'elicitation' && !declares(caller, kind, params)) {
        return Promise.reject(new ToolError(`the calling client did not declare elicitation in ${String(params['mode'] ?? 'form')} mode`, 'RELAY_REFUSED'));
      }
      const lookalike = this.#lookalike(kind, params);
      if (lookalike) return Promise.reject(lookalike);
      if ((count += 1) > MAX_RELAYS_PER_CALL) {
        return Promise.reject(new ToolError(`the call already relayed ${MAX_RELAYS_PER_CALL} requests to its caller; no more are relayed`, 'RELAY_LIMIT'));
      }
      const id = `${SERVER_REQUEST_ID_PREFIX}${randomKey()}`;
      const key = `${caller.sessionKey}\u0000${id}`;
      return abortable<JsonObject>(signal, (resolve, reject) => {
        this.#waiters.set(key, { kind, resolve, reject });
        push({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage).catch(() => {
          this.#waiters.delete(key);
          reject(new ToolError(`the ${kind} request could not be sent to the calling client`, 'RELAY_UNDELIVERED'));
        });
        return () => void this.#waiters.delete(key);
      });
    };
    const requests: CallerRequests = {};
    if (declares(caller, 'elicitation')) (requests as { elicit?: CallerRequests['elicit'] }).elicit = ask('elicitation', 'elicitation/create');
    if (declares(caller, 'sampling')) (requests as { sample?: CallerRequests['sample'] }).sample = ask('sampling', 'sampling/createMessage');
    return requests;
  }

  /** Ends every suspended call (the face is closing). */
  close(): void {
    for (const call of [...this.#suspended.values()]) call.cancel('the server is shutting down');
  }
}

function principalKey(principal: Principal): string {
  return JSON.stringify([principal.tenant, principal.id]);
}
