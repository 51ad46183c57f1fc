import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { JsonObject } from '@toolgate/contracts';

/** The token format's version: the first segment of every token, and part of what is signed. */
const VERSION = 'v1';

/** Characters of an HMAC-SHA256 tag (32 bytes) in unpadded base64url. */
const TAG_CHARS = 43;

/** The shortest key accepted: as long as the HMAC-SHA256 output, so the key is never the weak part. */
export const MIN_KEY_BYTES = 32;

/** The longest token read unless configured otherwise; a real one holds a few short fields. */
export const DEFAULT_MAX_TOKEN_CHARS = 2048;

/** Why a token was refused. The reason is for logs and the caller's message; it never echoes the token. */
export type TokenProblem = 'malformed' | 'too_large' | 'unsupported_version' | 'bad_signature' | 'expired';

export type TokenCheck = { readonly ok: true; readonly payload: JsonObject } | { readonly ok: false; readonly problem: TokenProblem };

export interface SignedTokensOptions {
  /** The HMAC key, at least {@link MIN_KEY_BYTES} bytes. */
  readonly key: Uint8Array;
  /** Tokens longer than this are refused before anything is decoded (default {@link DEFAULT_MAX_TOKEN_CHARS}). */
  readonly maxChars?: number;
  /** Epoch milliseconds now; tests pass their own. */
  readonly now?: () => number;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A fresh random key of {@link MIN_KEY_BYTES} bytes, for a process that was given none. */
export function randomTokenKey(): Uint8Array {
  return randomBytes(MIN_KEY_BYTES);
}

/**
 * Small signed JSON payloads that travel through an MCP client and come back as untrusted input:
 * the 2026-07-28 `requestState` and the 2025-era `Mcp-Session-Id`. A token is
 * `v1.<base64url JSON>.<base64url HMAC-SHA256>`; the MAC covers the version, a purpose label and
 * the payload, so a token minted for one purpose is refused for another. Every payload carries
 * `exp` (epoch ms) and is refused after it. Not encrypted: nothing secret goes in a payload.
 */
export class SignedTokens {
  readonly #key: Buffer;
  readonly #maxChars: number;
  readonly #now: () => number;

  constructor(options: SignedTokensOptions) {
    if (!(options.key instanceof Uint8Array) || options.key.byteLength < MIN_KEY_BYTES) {
      throw new RangeError(`the token key must be at least ${MIN_KEY_BYTES} bytes`);
    }
    const maxChars = options.maxChars ?? DEFAULT_MAX_TOKEN_CHARS;
    if (!Number.isInteger(maxChars) || maxChars < 64) throw new RangeError(`maxChars must be an integer of at least 64 (got ${maxChars})`);
    // A copy: a caller that later zeroes or reuses its buffer cannot change what verifies.
    this.#key = Buffer.from(options.key);
    this.#maxChars = maxChars;
    this.#now = options.now ?? Date.now;
  }

  /** Signs `payload` for `purpose`, valid for `ttlMs` from now (written into the payload as `exp`). */
  sign(purpose: string, payload: JsonObject, ttlMs: number): string {
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError('ttlMs must be a positive number');
    const body = Buffer.from(JSON.stringify({ ...payload, exp: this.#now() + ttlMs }), 'utf8').toString('base64url');
    const token = `${VERSION}.${body}.${this.#tag(purpose, body).toString('base64url')}`;
    // A payload too large to verify later would be a token that can never come back.
    if (token.length > this.#maxChars) throw new RangeError(`the signed payload is ${token.length} characters, over the cap of ${this.#maxChars}`);
    return token;
  }

  /**
   * Checks a token that came back from a client: size first, then shape, then the MAC in
   * constant time, and only then the decoded payload and its expiry.
   */
  verify(purpose: string, token: unknown): TokenCheck {
    if (typeof token !== 'string') return { ok: false, problem: 'malformed' };
    if (token.length > this.#maxChars) return { ok: false, problem: 'too_large' };
    const parts = token.split('.');
    if (parts.length !== 3) return { ok: false, problem: 'malformed' };
    const [version, body, tag] = parts as [string, string, string];
    if (version !== VERSION) return { ok: false, problem: BASE64URL.test(version) ? 'unsupported_version' : 'malformed' };
    if (!BASE64URL.test(body) || !BASE64URL.test(tag)) return { ok: false, problem: 'malformed' };
    // The tag's text is compared, not its decoded bytes: base64url's last character carries bits
    // no decoder reads, so several spellings decode to one tag, and a token must have exactly one
    // spelling (a session id is also a key; an altered token must never verify).
    const given = Buffer.from(tag, 'utf8');
    const expected = Buffer.from(this.#tag(purpose, body).toString('base64url'), 'utf8');
    // Equal lengths first (timingSafeEqual requires it); the tag length is public anyway.
    if (given.length !== TAG_CHARS || !timingSafeEqual(given, expected)) return { ok: false, problem: 'bad_signature' };
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      // Signed by us yet not JSON cannot happen short of a key leak; refuse it all the same.
      return { ok: false, problem: 'malformed' };
    }
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return { ok: false, problem: 'malformed' };
    const exp = (payload as { exp?: unknown }).exp;
    if (typeof exp !== 'number' || !Number.isFinite(exp)) return { ok: false, problem: 'malformed' };
    if (this.#now() >= exp) return { ok: false, problem: 'expired' };
    return { ok: true, payload: payload as JsonObject };
  }

  #tag(purpose: string, body: string): Buffer {
    // NUL-separated: no purpose or version can be spelled so that its input equals another's.
    return createHmac('sha256', this.#key).update(`${VERSION}\u0000${purpose}\u0000${body}`, 'utf8').digest();
  }
}

/** A sentence for a refused token, naming what was wrong and never quoting it. */
export function tokenProblemText(problem: TokenProblem): string {
  switch (problem) {
    case 'malformed':
      return 'it is not a token this server issued';
    case 'too_large':
      return 'it is longer than any token this server issues';
    case 'unsupported_version':
      return 'it has a format version this server does not issue';
    case 'bad_signature':
      return 'its signature does not match (it was altered, or issued by a server with another key)';
    case 'expired':
      return 'it has expired';
  }
}
