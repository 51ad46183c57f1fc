import { randomFillSync } from 'node:crypto';
import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY, type AuthInfo, type ClientCapabilities } from '@modelcontextprotocol/server';
import type { JsonObject, Principal } from '@toolgate/contracts';
import { tokenProblemText, type SignedTokens } from './signed-token.js';

/**
 * The MCP client behind one request, as far as the face knows it: which protocol era it speaks,
 * what it declared it can do, and a key that is the same for every request of one client.
 */
export interface CallerClient {
  readonly era: 'modern' | 'legacy';
  /** The revision the client speaks (`2026-07-28`, `2025-11-25`, …), or `unknown` for a 2025-era request without a session. */
  readonly protocolVersion: string;
  /**
   * What the client declared: per request in the 2026-07-28 envelope; in the 2025 era from the
   * `initialize` it sent, carried in the signed session (ADR 0051). Empty when not known, so a
   * feature that needs a capability is never offered to a client that did not declare it.
   */
  readonly capabilities: ClientCapabilities;
  /**
   * Stable per client: the verified session (2025 era) or a random key per request (2026-07-28,
   * which has no session). A 2025-era request without a session shares one key per principal.
   */
  readonly sessionKey: string;
}

/** The key under `AuthInfo.extra` where `McpFace.handle` leaves what it learnt of the caller. */
export const CALLER_KEY = 'toolgate/caller';

/** What `handle` knows of a request before the SDK sees it. */
export interface CallerSeed {
  /** The verified 2025-era session, if the request carried one. */
  readonly legacy?: CallerClient;
  /** A random key for this one request (the 2026-07-28 session key). */
  readonly requestKey: string;
}

/** Random bytes for keys, drawn a pool at a time: one system call per 256 keys, not one per request (every POST needs a key). */
const KEY_POOL = Buffer.alloc(4096);
let keyPoolAt = KEY_POOL.length;

/** Random key text: 128 bits, URL-safe; no two keys share a byte of the pool. */
export function randomKey(): string {
  if (keyPoolAt + 16 > KEY_POOL.length) {
    randomFillSync(KEY_POOL);
    keyPoolAt = 0;
  }
  const key = KEY_POOL.toString('base64url', keyPoolAt, keyPoolAt + 16);
  keyPoolAt += 16;
  return key;
}

/** The context every SDK request handler receives (only the parts `callerOf` reads). */
export interface CallerContext {
  readonly mcpReq: { readonly envelope?: object };
  readonly http?: { readonly authInfo?: AuthInfo };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The client behind the request a handler serves. On a 2026-07-28 request the envelope the SDK
 * validated says it; on a 2025-era request the signed session `handle` verified does, and without
 * a session nothing is known (no capabilities), so nothing that needs one is offered.
 */
export function callerOf(ctx: CallerContext): CallerClient {
  const seed = ctx.http?.authInfo?.extra?.[CALLER_KEY] as CallerSeed | undefined;
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const version = envelope?.[PROTOCOL_VERSION_META_KEY];
  if (typeof version === 'string') {
    const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY];
    return {
      era: 'modern',
      protocolVersion: version,
      capabilities: isObject(declared) ? (declared as ClientCapabilities) : {},
      // Without a seed (a wiring fault) the key is still unique, so nothing is shared by mistake.
      sessionKey: `r:${seed?.requestKey ?? randomKey()}`,
    };
  }
  if (seed?.legacy) return seed.legacy;
  return { era: 'legacy', protocolVersion: 'unknown', capabilities: {}, sessionKey: 'legacy:no-session' };
}

/**
 * The capabilities a session records: only the members the face and its relays act on, each as
 * a flag, so a client cannot make its session id large by declaring a large object.
 */
export function capabilitySubset(declared: unknown): ClientCapabilities {
  if (!isObject(declared)) return {};
  const subset: Record<string, unknown> = {};
  const elicitation = declared['elicitation'];
  if (isObject(elicitation)) {
    // A bare `elicitation: {}` is form mode, as the 2025-11-25 revision defines it.
    const form = isObject(elicitation['form']) || Object.keys(elicitation).length === 0;
    const url = isObject(elicitation['url']);
    subset['elicitation'] = { ...(form ? { form: {} } : {}), ...(url ? { url: {} } : {}) };
  }
  const sampling = declared['sampling'];
  if (isObject(sampling)) {
    subset['sampling'] = { ...(isObject(sampling['context']) ? { context: {} } : {}), ...(isObject(sampling['tools']) ? { tools: {} } : {}) };
  }
  if (isObject(declared['roots'])) subset['roots'] = {};
  return subset as ClientCapabilities;
}

/** The purpose a session id is signed for; no other token verifies as one. */
const SESSION_PURPOSE = 'toolgate/mcp-session';

/** How long a 2025-era session id is honoured; after it the client initializes again. */
export const SESSION_TTL_MS = 12 * 60 * 60_000;

/** Why a session id was refused, said to the client. */
export class SessionRefused extends Error {}

/**
 * 2025-era sessions on a stateless server (ADR 0051): the `Mcp-Session-Id` of an `initialize`
 * answer is a signed record of who initialized and what the client declared, so any later
 * request of that client, on any instance that shares the key, knows its capabilities.
 */
export class LegacySessions {
  constructor(private readonly tokens: SignedTokens) {}

  /** A session id for `principal` after an `initialize` that asked for `protocolVersion` and declared `capabilities`. */
  mint(principal: Principal, protocolVersion: string, capabilities: unknown): string {
    const payload: JsonObject = {
      t: principal.tenant,
      p: principal.id,
      v: protocolVersion.slice(0, 32),
      c: capabilitySubset(capabilities) as JsonObject,
      n: randomKey(),
      iat: Date.now(),
    };
    return this.tokens.sign(SESSION_PURPOSE, payload, SESSION_TTL_MS);
  }

  /** The client a session id describes, or `SessionRefused` saying why it is not one to honour. */
  verify(principal: Principal, sessionId: string): CallerClient {
    const check = this.tokens.verify(SESSION_PURPOSE, sessionId);
    if (!check.ok) throw new SessionRefused(`Mcp-Session-Id refused: ${tokenProblemText(check.problem)}; initialize a new session`);
    const { t, p, v, c, n } = check.payload as Record<string, unknown>;
    if (typeof t !== 'string' || typeof p !== 'string' || typeof v !== 'string' || typeof n !== 'string' || !isObject(c)) {
      throw new SessionRefused('Mcp-Session-Id refused: it is not a session this server issued; initialize a new session');
    }
    // A session travels with its principal: another token's holder cannot borrow its capabilities or its cancellations.
    if (t !== principal.tenant || p !== principal.id) {
      throw new SessionRefused('Mcp-Session-Id refused: it was issued to another principal; initialize a new session');
    }
    return { era: 'legacy', protocolVersion: v, capabilities: capabilitySubset(c), sessionKey: `s:${n}` };
  }
}

/**
 * The prefix of the JSON-RPC ids of requests the face itself sends to a 2025-era client on a
 * call's stream (`elicitation/create`). The SDK's own ids are numbers, so none can collide.
 */
export const SERVER_REQUEST_ID_PREFIX = 'toolgate-elicit-';

/** Revisions of the 2025 era, whose `initialize` the face answers with a signed session. */
const LEGACY_VERSIONS = new Set(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);

/** What `handle` must know of a 2025-era POST before the SDK answers it. */
export interface LegacyPost {
  /** An `initialize`: the revision it asked for and what it declared. */
  readonly initialize?: { readonly protocolVersion: string; readonly capabilities: unknown };
  /** A client's answer to a request the face sent (by `SERVER_REQUEST_ID_PREFIX`), from a verified session. */
  readonly answered?: { readonly id: string; readonly result?: unknown; readonly error?: unknown };
}

/**
 * Reads a POST only where it can matter: a request without a session that may be an
 * `initialize`, and a session's POST that may answer a request of the face. Anything else
 * (every 2026-07-28 request, most 2025 ones) goes to the SDK unread. `parsedBody`, the body the
 * transport already parsed, is judged instead of a clone of the request read and parsed again.
 */
export async function inspectLegacyPost(request: Request, seed: CallerSeed, parsedBody?: unknown): Promise<LegacyPost> {
  if (request.method !== 'POST') return {};
  const version = request.headers.get('mcp-protocol-version');
  if (version !== null && !LEGACY_VERSIONS.has(version)) return {};
  let message: unknown = parsedBody;
  if (message === undefined) {
    let text: string;
    try {
      text = await request.clone().text();
    } catch {
      return {};
    }
    if (seed.legacy ? !text.includes(SERVER_REQUEST_ID_PREFIX) : !text.includes('"initialize"')) return {};
    try {
      message = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch {
      return {};
    }
  }
  if (!isObject(message)) return {};
  if (!seed.legacy && message['method'] === 'initialize' && isObject(message['params'])) {
    const params = message['params'];
    const asked = params['protocolVersion'];
    if (typeof asked !== 'string') return {};
    return { initialize: { protocolVersion: LEGACY_VERSIONS.has(asked) ? asked : 'unknown', capabilities: params['capabilities'] } };
  }
  const id = message['id'];
  if (seed.legacy && message['method'] === undefined && typeof id === 'string' && id.startsWith(SERVER_REQUEST_ID_PREFIX) && ('result' in message || 'error' in message)) {
    return { answered: { id, result: message['result'], error: message['error'] } };
  }
  return {};
}

/** The answer to a session id the face will not honour: 404, as for a session a server no longer holds. */
export function sessionRefusedResponse(message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message } }), {
    status: 404,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}
