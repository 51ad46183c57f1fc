import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTHeaderParameters, type FlattenedJWSInput, type CryptoKey } from 'jose';

/** Why the issuer's keys cannot be had now: the directory answers `unavailable` (503), never a guess. */
export class IssuerUnavailableError extends Error {
  override readonly name = 'IssuerUnavailableError';
}

/** How the key set is fetched: a GET through the guarded client, answering the parsed JSON body. */
export type FetchJson = (url: string) => Promise<unknown>;

export interface JwksCacheOptions {
  readonly url: string;
  readonly fetchJson: FetchJson;
  /** Keys younger than this are used without asking again. Default 10 minutes. */
  readonly maxAgeMs?: number;
  /**
   * While a refresh fails, keys this old are still used: the issuer being briefly down does not
   * log everybody out. Past it, authentication is `unavailable`. Default 1 hour.
   */
  readonly maxStaleMs?: number;
  /** After a fetch, an unknown `kid` asks again only once this has passed (no refetch storm). Default 30 s. */
  readonly cooldownMs?: number;
  /** After a failed fetch, no new fetch for this long: callers get `unavailable` at once. Default 5 s. */
  readonly failureCooldownMs?: number;
  /** The most keys a set may hold. Default 64. */
  readonly maxKeys?: number;
  readonly now?: () => number;
}

type LocalSet = ReturnType<typeof createLocalJWKSet>;

/**
 * The issuer's signing keys, fetched, cached and rotated (ADR 0074). One fetch at a time whatever
 * the number of callers; an unknown `kid` triggers at most one refetch per cooldown (a rotation
 * is picked up, a flood of made-up kids is not a flood of fetches); a failing issuer is asked
 * again only after a pause, so no caller waits on a fetch that just failed.
 */
export class JwksCache {
  private local: LocalSet | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private failedAt = Number.NEGATIVE_INFINITY;
  private lastFailure = '';
  private pending: Promise<void> | undefined;
  private readonly maxAgeMs: number;
  private readonly maxStaleMs: number;
  private readonly cooldownMs: number;
  private readonly failureCooldownMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(private readonly options: JwksCacheOptions) {
    this.maxAgeMs = options.maxAgeMs ?? 600_000;
    this.maxStaleMs = options.maxStaleMs ?? 3_600_000;
    this.cooldownMs = options.cooldownMs ?? 30_000;
    this.failureCooldownMs = options.failureCooldownMs ?? 5_000;
    this.maxKeys = options.maxKeys ?? 64;
    this.now = options.now ?? Date.now;
  }

  /** The key `jwtVerify` asks for: jose's key-resolver shape. */
  readonly key = async (header: JWTHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    const age = this.now() - this.fetchedAt;
    if (!this.local || age >= this.maxAgeMs) {
      try {
        await this.refresh();
      } catch (error) {
        // Stale keys serve while the issuer is down, up to maxStale; then fail closed.
        if (!this.local || this.now() - this.fetchedAt >= this.maxStaleMs) throw error;
      }
    }
    try {
      return await this.local!(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || this.now() - this.fetchedAt < this.cooldownMs) throw error;
      // A kid we have not seen, and the keys are not fresh from the issuer: a rotation, once.
      await this.refresh();
      return this.local!(header, token);
    }
  };

  /**
   * Fetches the key set again if the last fetch is older than the cooldown, and says whether it
   * did: a signature that fails under a known `kid` may be a key the issuer replaced under the
   * same kid, which only a refetch shows (red team of ADR 0074). At most once per cooldown.
   */
  async refreshIfCool(): Promise<boolean> {
    if (this.now() - this.fetchedAt < this.cooldownMs) return false;
    await this.refresh();
    return true;
  }

  /** Fetches the keys now unless some are held: a warm cache for the first caller. */
  async load(): Promise<void> {
    if (!this.local) await this.refresh();
  }

  /** The kids held now, for tests and the operator log. */
  kids(): string[] {
    return (this.local?.jwks()?.keys ?? []).map((k) => k.kid ?? '(no kid)');
  }

  private refresh(): Promise<void> {
    if (this.pending) return this.pending;
    if (this.now() - this.failedAt < this.failureCooldownMs) {
      return Promise.reject(new IssuerUnavailableError(this.lastFailure));
    }
    const current = (this.pending = this.fetch()
      .then((set) => {
        this.local = set;
        this.fetchedAt = this.now();
      })
      .catch((error: unknown) => {
        this.failedAt = this.now();
        this.lastFailure = error instanceof IssuerUnavailableError ? error.message : 'the key set could not be fetched';
        throw new IssuerUnavailableError(this.lastFailure);
      })
      .finally(() => {
        if (this.pending === current) this.pending = undefined;
      }));
    return current;
  }

  private async fetch(): Promise<LocalSet> {
    const body = await this.options.fetchJson(this.options.url);
    if (typeof body !== 'object' || body === null || !Array.isArray((body as { keys?: unknown }).keys)) {
      throw new IssuerUnavailableError('the issuer\'s key set is not a JSON Web Key Set (no "keys" array)');
    }
    const keys = (body as { keys: unknown[] }).keys;
    if (keys.length > this.maxKeys) throw new IssuerUnavailableError(`the issuer's key set has ${keys.length} keys, more than the ${this.maxKeys} accepted`);
    // Private or symmetric members are never used: only public keys verify (no HMAC with a published key).
    const usable = keys.filter(
      (k): k is Record<string, unknown> =>
        typeof k === 'object' && k !== null && ['RSA', 'EC', 'OKP'].includes(String((k as { kty?: unknown }).kty)) && (k as { d?: unknown }).d === undefined,
    );
    try {
      return createLocalJWKSet({ keys: usable } as JSONWebKeySet);
    } catch {
      throw new IssuerUnavailableError("the issuer's key set is not a valid JSON Web Key Set");
    }
  }
}
