import {
  EgressDeniedError,
  TOOLGATE_SCOPES,
  type Authentication,
  type BudgetPolicy,
  type Grant,
  type HttpClient,
  type Principal,
  type PrincipalDirectory,
  type PrincipalRecord,
  type TenantPolicy,
} from '@toolgate/contracts';
import { errors, jwtVerify, type JWTPayload } from 'jose';
import { IssuerUnavailableError, JwksCache } from './jwks-cache.js';

/** The roles and tenants the tokens are checked against: the principals file's policy, which may be re-read. */
export type PrincipalPolicy = Pick<PrincipalDirectory, 'roleTools' | 'roleGrants' | 'tenant' | 'tenants'>;

export interface OidcDirectoryOptions {
  /** Compared with each token's `iss` exactly, and where discovery starts. */
  readonly issuer: string;
  /** The `aud` a token must carry. */
  readonly audience: string;
  readonly idClaim: string;
  readonly tenantClaim: string;
  readonly rolesClaim: string;
  /** Accepted JWS algorithms: asymmetric only; the token's own `alg` never widens this. */
  readonly algorithms: readonly string[];
  readonly clockSkewSeconds: number;
  /** Hosts besides the issuer's that its `jwks_uri` may name. */
  readonly jwksHosts?: readonly string[];
  /** The guarded client: discovery and keys are fetched through it, like every other request. */
  readonly http: HttpClient;
  readonly policy: PrincipalPolicy;
  /**
   * Whether a token's `scope` (or `scp`) claim limits the calls it may ask for (ADR 0075): on,
   * the principal carries the Toolgate scopes of its token, and a token without one may ask for
   * nothing that needs it. Off (default), scopes are not read.
   */
  readonly scopes?: boolean;
  /** The budget every principal of this issuer gets; absent, none. */
  readonly budget?: BudgetPolicy;
  /** Each fetch's time limit. Default 5 s. */
  readonly fetchTimeoutMs?: number;
  /** The key cache's timings (tests shorten them). */
  readonly keys?: { readonly maxAgeMs?: number; readonly maxStaleMs?: number; readonly cooldownMs?: number; readonly failureCooldownMs?: number };
  readonly now?: () => number;
  readonly log?: (level: 'info' | 'warn', message: string) => void;
}

/** The longest bearer token looked at; a longer one is refused before any parsing. */
const MAX_TOKEN_CHARS = 16_384;
/** What a principal id and tenant may be, as in the principals file. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_ROLES = 64;
/** How many principals seen in tokens are remembered for `get` and the roster. */
const MAX_REMEMBERED = 10_000;
const MAX_DOCUMENT_BYTES = 256 * 1024;

/**
 * Principals from an OpenID issuer's bearer JWTs (ADR 0074): the signature is checked with the
 * issuer's published keys (discovery, then `jwks_uri`, both through the guarded client), then
 * `iss`, `aud`, `exp`, `nbf` and `iat` with a small clock skew, with only the configured
 * algorithms. Claims name the principal, its tenant and its roles; what a role and a tenant may
 * do comes from the policy, as for the principals file. Every failure is an answer: `refused`
 * with a reason that never quotes the token, or `unavailable` when the keys cannot be had.
 */
export class OidcPrincipalDirectory implements PrincipalDirectory {
  private discovery: Promise<JwksCache> | undefined;
  private discoveryFailedAt = Number.NEGATIVE_INFINITY;
  private readonly seen = new Map<string, PrincipalRecord>();
  private readonly now: () => number;
  private readonly issuerUrl: URL;

  constructor(private readonly options: OidcDirectoryOptions) {
    this.now = options.now ?? Date.now;
    this.issuerUrl = new URL(options.issuer);
  }

  /** Fetches discovery and the keys once, so the first caller does not wait; a failure is logged, not thrown. */
  async warmUp(): Promise<'ready' | string> {
    try {
      await (await this.keys()).load();
      return 'ready';
    } catch (error) {
      return error instanceof Error ? error.message : 'unknown error';
    }
  }

  async authenticate(bearerToken: string): Promise<Authentication> {
    if (bearerToken.length === 0 || bearerToken.length > MAX_TOKEN_CHARS) return refused(`the token is not 1 to ${MAX_TOKEN_CHARS} characters`);
    if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(bearerToken)) return refused('the token is not a signed JWT (three base64url parts)');
    // One token, one spelling: base64url's last character can carry bits no decoder reads, and jose
    // ignores them, so each signature would have other spellings that verify (ADR 0074).
    if (!bearerToken.split('.').every(isCanonicalBase64url)) return refused('the token is not canonical base64url');
    let keys: JwksCache;
    try {
      keys = await this.keys();
    } catch (error) {
      return { outcome: 'unavailable', reason: unavailableReason(error) };
    }
    const verify = () =>
      jwtVerify(bearerToken, keys.key, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: [...this.options.algorithms],
        clockTolerance: this.options.clockSkewSeconds,
        requiredClaims: ['exp'],
        currentDate: new Date(this.now()),
      });
    let payload: JWTPayload;
    try {
      try {
        ({ payload } = await verify());
      } catch (error) {
        // A key replaced under the same kid fails as a bad signature, not an unknown kid: ask
        // the issuer again (at most once per cooldown) and verify once more with what it says.
        if (!(error instanceof errors.JWSSignatureVerificationFailed) || !(await keys.refreshIfCool())) throw error;
        ({ payload } = await verify());
      }
    } catch (error) {
      if (error instanceof IssuerUnavailableError) return { outcome: 'unavailable', reason: unavailableReason(error) };
      return refused(verifyFailure(error));
    }
    // jose checks iat only against a maximum age; a token issued in the future is refused here.
    if (typeof payload.iat === 'number' && payload.iat > this.now() / 1000 + this.options.clockSkewSeconds) return refused('the token was issued in the future (iat)');
    return this.principalOf(payload);
  }

  get(tenant: string, id: string): PrincipalRecord | undefined {
    return this.seen.get(key(tenant, id));
  }

  /** The principals of `tenant` seen in valid tokens since start (an issuer lists none in advance). */
  principals(tenant: string): readonly PrincipalRecord[] {
    return [...this.seen.values()].filter((p) => p.tenant === tenant);
  }

  roleTools(role: string): readonly string[] | undefined {
    return this.options.policy.roleTools(role);
  }

  roleGrants(role: string): readonly Grant[] | undefined {
    return this.options.policy.roleGrants(role);
  }

  tenant(tenant: string): TenantPolicy | undefined {
    return this.options.policy.tenant(tenant);
  }

  tenants(): readonly string[] {
    return this.options.policy.tenants();
  }

  private principalOf(payload: JWTPayload): Authentication {
    const { idClaim, tenantClaim, rolesClaim } = this.options;
    const id = claim(payload, idClaim);
    if (typeof id !== 'string' || !NAME.test(id)) return refused(`the token's '${idClaim}' claim is missing or not a principal id (1 to 64 of A-Z a-z 0-9 _ . -)`);
    const tenant = claim(payload, tenantClaim);
    // No tenant, no principal: a token without one grants nothing.
    if (tenant === undefined) return refused(`the token has no '${tenantClaim}' claim, so it names no tenant`);
    if (typeof tenant !== 'string' || !NAME.test(tenant)) return refused(`the token's '${tenantClaim}' claim is not a tenant name`);
    const rawRoles = claim(payload, rolesClaim);
    let roles: string[] = [];
    if (rawRoles !== undefined) {
      if (!Array.isArray(rawRoles) || rawRoles.length > MAX_ROLES || !rawRoles.every((r) => typeof r === 'string' && NAME.test(r))) {
        return refused(`the token's '${rolesClaim}' claim is not a list of at most ${MAX_ROLES} role names`);
      }
      roles = [...new Set(rawRoles as string[])];
    }
    const principal: Principal = { id, tenant, roles, issuer: this.options.issuer, ...(this.options.scopes ? { scopes: scopesOf(payload) } : {}) };
    this.remember({ id, tenant, roles, ...(this.options.budget ? { budget: this.options.budget } : {}) });
    return { outcome: 'principal', principal };
  }

  private remember(record: PrincipalRecord): void {
    const k = key(record.tenant, record.id);
    this.seen.delete(k);
    this.seen.set(k, record);
    if (this.seen.size > MAX_REMEMBERED) this.seen.delete(this.seen.keys().next().value!);
  }

  /** Discovery once (again after a failure, at most every 5 s), then the key cache it names. */
  private keys(): Promise<JwksCache> {
    if (this.discovery) return this.discovery;
    if (this.now() - this.discoveryFailedAt < 5_000) return Promise.reject(new IssuerUnavailableError("the issuer's discovery document could not be fetched"));
    const attempt = this.discover().catch((error: unknown) => {
      this.discoveryFailedAt = this.now();
      if (this.discovery === attempt) this.discovery = undefined;
      this.options.log?.('warn', `OIDC issuer ${this.options.issuer}: ${unavailableReason(error)}`);
      throw error;
    });
    this.discovery = attempt;
    return attempt;
  }

  private async discover(): Promise<JwksCache> {
    const base = this.options.issuer.replace(/\/+$/, '');
    const document = await this.fetchJson(`${base}/.well-known/openid-configuration`, 'discovery document');
    if (typeof document !== 'object' || document === null) throw new IssuerUnavailableError("the issuer's discovery document is not a JSON object");
    const { issuer, jwks_uri: jwksUri } = document as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was fetched for.
    if (issuer !== this.options.issuer) throw new IssuerUnavailableError("the issuer's discovery document names another issuer");
    if (typeof jwksUri !== 'string') throw new IssuerUnavailableError("the issuer's discovery document has no jwks_uri");
    let url: URL;
    try {
      url = new URL(jwksUri);
    } catch {
      throw new IssuerUnavailableError("the issuer's jwks_uri is not a URL");
    }
    const sameHost = url.hostname === this.issuerUrl.hostname;
    if (!sameHost && !(this.options.jwksHosts ?? []).includes(url.hostname)) {
      throw new IssuerUnavailableError(`the issuer's jwks_uri is on another host (${url.hostname.slice(0, 100)}); list it in TOOLGATE_OIDC_JWKS_HOSTS to accept it`);
    }
    // Keys over plain http only where the issuer itself is (a loopback development issuer).
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.issuerUrl.protocol === 'http:' && sameHost)) {
      throw new IssuerUnavailableError("the issuer's jwks_uri must be https");
    }
    const keys = new JwksCache({ url: url.href, fetchJson: (u) => this.fetchJson(u, 'key set'), ...this.options.keys, now: this.now });
    this.options.log?.('info', `OIDC issuer ${this.options.issuer}: discovery read; keys from ${url.origin}${url.pathname.slice(0, 200)}`);
    return keys;
  }

  private async fetchJson(url: string, what: string): Promise<unknown> {
    let response;
    try {
      response = await this.options.http.request({ url, headers: { accept: 'application/json' }, maxBytes: MAX_DOCUMENT_BYTES, timeoutMs: this.options.fetchTimeoutMs ?? 5_000 });
    } catch (error) {
      // The caller learns the class of failure; the operator's log gets the network detail.
      const detail = error instanceof Error ? error.message.slice(0, 200) : 'network error';
      this.options.log?.('warn', `OIDC issuer ${this.options.issuer}: fetching its ${what} failed: ${detail}`);
      if (error instanceof EgressDeniedError) throw new IssuerUnavailableError(`the issuer's ${what} may not be fetched (egress policy; see the server log)`);
      throw new IssuerUnavailableError(`the issuer's ${what} could not be fetched`);
    }
    if (response.status !== 200) throw new IssuerUnavailableError(`the issuer's ${what} answered HTTP ${response.status}`);
    if (response.truncated) throw new IssuerUnavailableError(`the issuer's ${what} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    try {
      return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(response.body)) as unknown;
    } catch {
      throw new IssuerUnavailableError(`the issuer's ${what} is not JSON`);
    }
  }
}

function isCanonicalBase64url(part: string): boolean {
  return Buffer.from(part, 'base64url').toString('base64url') === part;
}

/** The Toolgate scopes of a token: `scope` (space-separated, RFC 8693 and 9068) or `scp` (a list, as some issuers write it). */
function scopesOf(payload: JWTPayload): string[] {
  const raw = Object.hasOwn(payload, 'scope') ? payload['scope'] : Object.hasOwn(payload, 'scp') ? payload['scp'] : undefined;
  const listed = typeof raw === 'string' ? raw.split(' ') : Array.isArray(raw) ? raw.filter((x): x is string => typeof x === 'string') : [];
  return [...new Set(listed.filter((scope) => (TOOLGATE_SCOPES as readonly string[]).includes(scope)))];
}

function refused(reason: string): Authentication {
  return { outcome: 'refused', reason };
}

function key(tenant: string, id: string): string {
  return `${tenant}\u0000${id}`;
}

/** A claim by name; a name with dots is not a path (claims such as `https://x/roles` have dots). */
function claim(payload: JWTPayload, name: string): unknown {
  return Object.hasOwn(payload, name) ? payload[name] : undefined;
}

function unavailableReason(error: unknown): string {
  return error instanceof IssuerUnavailableError ? error.message : "the issuer's keys could not be fetched";
}

/** What a failed verification says to the caller: the class of fault, never the token or its claims' values. */
function verifyFailure(error: unknown): string {
  if (error instanceof errors.JWTExpired) return error.claim === 'iat' ? 'the token is too old (iat)' : 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'aud':
        return 'the token is for another audience';
      case 'iss':
        return 'the token is from another issuer';
      case 'nbf':
        return 'the token is not valid yet (nbf)';
      case 'exp':
        return 'the token has no valid expiry (exp)';
      case 'iat':
        return 'the token has no valid issue time (iat)';
      default:
        return `the token's '${String(error.claim).slice(0, 40)}' claim is not valid`;
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return "the token's algorithm is not accepted";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (error instanceof errors.JWKSNoMatchingKey) return "the token's key is not among the issuer's keys";
  if (error instanceof errors.JWKSMultipleMatchingKeys) return "the token's key id matches more than one of the issuer's keys";
  if (error instanceof errors.JOSENotSupported) return "the token's algorithm or key type is not supported";
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) return 'the token is not a valid signed JWT';
  return 'the token could not be verified';
}
