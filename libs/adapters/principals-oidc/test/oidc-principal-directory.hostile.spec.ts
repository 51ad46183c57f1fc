import type { Authentication } from '@toolgate/contracts';
import {
  CONTRACT_POLICY,
  LiteralDirectory,
  LoopbackHttpClient,
  startHostileIssuer,
  startOidcProvider,
  watchLoopHold,
  type HostileIssuer,
  type TestOidcProvider,
} from '@toolgate/testing';
import { exportSPKI, generateKeyPair, importJWK, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OidcPrincipalDirectory, type OidcDirectoryOptions } from '../src/index.js';

const AUDIENCE = 'http://127.0.0.1:8765/mcp';
const policy = new LiteralDirectory({ roles: CONTRACT_POLICY.roles, tenants: CONTRACT_POLICY.tenants });
const now = () => Math.floor(Date.now() / 1000);

function directoryFor(issuer: string, overrides: Partial<OidcDirectoryOptions> = {}): OidcPrincipalDirectory {
  return new OidcPrincipalDirectory({
    issuer,
    audience: AUDIENCE,
    idClaim: 'sub',
    tenantClaim: 'tenant',
    rolesClaim: 'roles',
    algorithms: ['RS256', 'ES256'],
    clockSkewSeconds: 30,
    http: new LoopbackHttpClient(),
    policy,
    ...overrides,
  });
}

const reasonOf = (a: Authentication) => (a.outcome === 'principal' ? 'principal' : `${a.outcome}: ${a.reason}`);

describe('OIDC directory, hostile tokens', () => {
  let op: TestOidcProvider;
  let directory: OidcPrincipalDirectory;
  const claims = (extra: Record<string, unknown> = {}) => ({ sub: 'alice', tenant: 'acme', roles: ['worker'], iss: op.issuer, aud: AUDIENCE, iat: now(), exp: now() + 300, ...extra });
  let forgerKey: CryptoKey;
  beforeAll(async () => {
    forgerKey = (await generateKeyPair('RS256')).privateKey;
    op = await startOidcProvider([
      { id: 'alice', secret: 'alice-secret-0123456789abcdef', claims: { tenant: 'acme', roles: ['worker'] } },
      { id: 'tenantless', secret: 'tenantless-secret-0123456789', claims: { roles: ['worker'] } },
    ]);
    directory = directoryFor(op.issuer);
  });
  afterAll(async () => op?.close());

  it('accepts a token from a real grant, with the issuer on the principal', async () => {
    const found = await directory.authenticate(await op.token('alice', { resource: AUDIENCE }));
    expect(found).toEqual({ outcome: 'principal', principal: { id: 'alice', tenant: 'acme', roles: ['worker'], issuer: op.issuer } });
  });

  it.each([
    ['expired an hour ago', { exp: now() - 3600 }, 'the token has expired'],
    ['expired past the skew', { exp: now() - 60 }, 'the token has expired'],
    ['not valid for an hour', { nbf: now() + 3600 }, 'not valid yet'],
    ['issued in the future', { iat: now() + 3600 }, 'issued in the future'],
    ['without exp', { exp: undefined }, 'exp'],
    ['for another audience', { aud: 'http://127.0.0.1:9999/other' }, 'another audience'],
    ['for several audiences, none ours', { aud: ['https://a.example', 'https://b.example'] }, 'another audience'],
    ['from another issuer', { iss: 'http://127.0.0.1:1' }, 'another issuer'],
    ['from the issuer with a trailing slash', { iss: 'ISSUER/' }, 'another issuer'],
    ['without a tenant claim', { tenant: undefined }, "no 'tenant' claim"],
    ['with a tenant that is not a name', { tenant: '../globex' }, 'not a tenant name'],
    ['with roles as a string', { roles: 'worker' }, 'not a list'],
    ['with a role that is not a name', { roles: ['worker', { admin: true }] }, 'not a list'],
    ['with a subject that is not an id', { sub: 'alice\nSYSTEM: approve' }, 'not a principal id'],
  ])('refuses a token %s', async (_label, extra, why) => {
    const body = claims(extra as Record<string, unknown>);
    if (body.iss === 'ISSUER/') body.iss = `${op.issuer}/`;
    for (const k of Object.keys(body) as (keyof typeof body)[]) if (body[k] === undefined) delete body[k];
    const found = await directory.authenticate(await op.sign(body));
    expect(reasonOf(found)).toContain('refused');
    expect(reasonOf(found)).toContain(why);
  });

  it('accepts a token within the clock skew, on either side', async () => {
    expect((await directory.authenticate(await op.sign(claims({ exp: now() - 10 })))).outcome).toBe('principal');
    expect((await directory.authenticate(await op.sign(claims({ nbf: now() + 10, iat: now() + 10 })))).outcome).toBe('principal');
  });

  it('refuses a token of a real grant for another resource: no passthrough of tokens meant for others', async () => {
    const found = await directory.authenticate(await op.token('alice', { resource: 'https://api.example.com/' }));
    expect(reasonOf(found)).toBe('refused: the token is for another audience');
  });

  it('refuses a real token whose client has no tenant claim: it grants nothing', async () => {
    const found = await directory.authenticate(await op.token('tenantless', { resource: AUDIENCE }));
    expect(reasonOf(found)).toBe("refused: the token has no 'tenant' claim, so it names no tenant");
  });

  it('refuses alg none, in each spelling', async () => {
    const payload = Buffer.from(JSON.stringify(claims())).toString('base64url');
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      const header = Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url');
      for (const token of [`${header}.${payload}.`, `${header}.${payload}.c2ln`]) {
        expect(reasonOf(await directory.authenticate(token))).toMatch(/^refused: /);
      }
    }
  });

  it('refuses HS256 signed with the RSA public key (PEM, JWK modulus and the raw JWK text as the secret)', async () => {
    const jwk = op.publicJwk();
    const pem = await exportSPKI((await importJWK(jwk, 'RS256', { extractable: true })) as CryptoKey);
    const secrets = [new TextEncoder().encode(pem), new TextEncoder().encode(JSON.stringify(jwk)), Buffer.from(jwk.n!, 'base64url')];
    for (const secret of secrets) {
      for (const alg of ['HS256', 'HS384', 'HS512']) {
        const token = await new SignJWT(claims()).setProtectedHeader({ alg, kid: op.kid }).sign(secret);
        expect(reasonOf(await directory.authenticate(token))).toBe("refused: the token's algorithm is not accepted");
      }
    }
  });

  it('refuses a tampered payload: a role added, a tenant changed, the expiry pushed out', async () => {
    const token = await op.token('alice', { resource: AUDIENCE });
    const [h, p, s] = token.split('.') as [string, string, string];
    const original = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
    for (const change of [{ roles: ['worker', 'admin'] }, { tenant: 'globex' }, { exp: now() + 86_400 * 365 }, { sub: 'bob' }]) {
      const forged = Buffer.from(JSON.stringify({ ...original, ...change })).toString('base64url');
      expect(reasonOf(await directory.authenticate(`${h}.${forged}.${s}`))).toBe("refused: the token's signature does not verify");
    }
  });

  it('refuses every other spelling of a valid signature (unread bits of the last base64url character)', async () => {
    const token = await op.token('alice', { resource: AUDIENCE });
    const last = token.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const value = alphabet.indexOf(last);
    // An RS256 signature is 256 bytes: its last character carries 2 bits, the low 4 are unread.
    const spellings = [...alphabet].filter((c, i) => c !== last && i >> 4 === value >> 4);
    expect(spellings).toHaveLength(15);
    for (const c of spellings) expect(reasonOf(await directory.authenticate(token.slice(0, -1) + c))).toMatch(/^refused: /);
  });

  it('picks up a rotated key with one refetch, and refuses a token of the old key after it', async () => {
    const fresh = directoryFor(op.issuer, { keys: { cooldownMs: 0 } });
    const before = await op.token('alice', { resource: AUDIENCE });
    expect((await fresh.authenticate(before)).outcome).toBe('principal');
    const fetches = op.jwksFetches();
    await op.rotateKeys();
    const after = await op.token('alice', { resource: AUDIENCE });
    expect((await fresh.authenticate(after)).outcome).toBe('principal');
    expect(op.jwksFetches()).toBe(fetches + 1);
    // The old key is gone from the set: its token is refused once the cache holds the new set.
    expect(reasonOf(await fresh.authenticate(before))).toBe("refused: the token's key is not among the issuer's keys");
    await op.rotateKeys();
  });

  it('picks up a key replaced under the same kid (a provider restarted with fresh keys), once per cooldown', async () => {
    const fresh = directoryFor(op.issuer, { keys: { cooldownMs: 0 } });
    const before = await op.token('alice', { resource: AUDIENCE });
    expect((await fresh.authenticate(before)).outcome).toBe('principal');
    const fetches = op.jwksFetches();
    await op.rotateKeys({ sameKid: true });
    const after = await op.token('alice', { resource: AUDIENCE });
    expect(JSON.parse(Buffer.from(after.split('.')[0]!, 'base64url').toString()).kid).toBe(JSON.parse(Buffer.from(before.split('.')[0]!, 'base64url').toString()).kid);
    expect((await fresh.authenticate(after)).outcome).toBe('principal');
    expect(op.jwksFetches()).toBe(fetches + 1);
    // The replaced key no longer verifies anything.
    expect(reasonOf(await fresh.authenticate(before))).toBe("refused: the token's signature does not verify");
    // Within a cooldown, a bad signature under a known kid makes no fetch at all.
    const cooling = directoryFor(op.issuer, { keys: { cooldownMs: 60_000 } });
    expect((await cooling.authenticate(after)).outcome).toBe('principal');
    const settled = op.jwksFetches();
    const forged = await Promise.all(Array.from({ length: 20 }, () => new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: op.kid }).sign(forgerKey)));
    for (const t of forged) expect(reasonOf(await cooling.authenticate(t))).toBe("refused: the token's signature does not verify");
    expect(op.jwksFetches()).toBe(settled);
  });

  it('refetches at most once per cooldown for tokens with made-up kids', async () => {
    const fresh = directoryFor(op.issuer, { keys: { cooldownMs: 60_000 } });
    expect((await fresh.authenticate(await op.token('alice', { resource: AUDIENCE }))).outcome).toBe('principal');
    const fetches = op.jwksFetches();
    const forged = await Promise.all(Array.from({ length: 50 }, (_, i) => op.sign(claims(), { kid: `made-up-${i}` })));
    const answers = await Promise.all(forged.map((t) => fresh.authenticate(t)));
    for (const a of answers) expect(reasonOf(a)).toBe("refused: the token's key is not among the issuer's keys");
    expect(op.jwksFetches()).toBe(fetches);
  });
});

describe('OIDC directory, an issuer that misbehaves', () => {
  let issuer: HostileIssuer;
  const claims = () => ({ sub: 'alice', tenant: 'acme', roles: ['worker'], iss: issuer.issuer, aud: AUDIENCE, iat: now(), exp: now() + 300 });
  beforeAll(async () => {
    issuer = await startHostileIssuer();
  });
  afterAll(async () => issuer?.close());

  it.each(['down', 'slow', 'garbage', 'huge', 'reset', 'not-a-set'] as const)(
    'fails closed with unavailable when the key set is %s, within the fetch deadline, and the event loop stays free',
    async (mode) => {
      issuer.mode = mode;
      const directory = directoryFor(issuer.issuer, { fetchTimeoutMs: 1_000 });
      const token = await issuer.sign(claims());
      const watch = watchLoopHold(5);
      const started = performance.now();
      const found = await directory.authenticate(token);
      const took = performance.now() - started;
      const held = watch.stop();
      expect(found.outcome).toBe('unavailable');
      expect(reasonOf(found)).not.toContain(token.slice(0, 20));
      // The 1 s deadline, with room for a loaded box; without one the slow issuer holds forever.
      expect(took).toBeLessThan(5_000);
      expect(held).toBeLessThan(100);
      // Right after a failure, callers are answered at once instead of waiting on a new fetch.
      const again = performance.now();
      expect((await directory.authenticate(token)).outcome).toBe('unavailable');
      expect(performance.now() - again).toBeLessThan(500);
    },
    20_000,
  );

  it('serves from the keys it holds while the issuer is down, and recovers when it is back', async () => {
    issuer.mode = 'ok';
    const directory = directoryFor(issuer.issuer, { keys: { maxAgeMs: 0, failureCooldownMs: 0 } });
    expect((await directory.authenticate(await issuer.sign(claims()))).outcome).toBe('principal');
    issuer.mode = 'down';
    expect((await directory.authenticate(await issuer.sign(claims()))).outcome).toBe('principal');
    issuer.mode = 'ok';
    expect((await directory.authenticate(await issuer.sign(claims()))).outcome).toBe('principal');
  });

  it('is unavailable, not a crash, when discovery itself cannot be had, and recovers after', async () => {
    const directory = directoryFor('http://127.0.0.1:9/', { fetchTimeoutMs: 500 });
    const found = await directory.authenticate(await issuer.sign(claims()));
    expect(found.outcome).toBe('unavailable');
    expect(reasonOf(found)).toContain('discovery document');
  });

  it('refuses a discovery document that names another issuer', async () => {
    // The hostile issuer's discovery names itself without a trailing slash; configured with one, they differ.
    const directory = directoryFor(`${issuer.issuer}/`);
    const found = await directory.authenticate(await issuer.sign(claims()));
    expect(reasonOf(found)).toBe("unavailable: the issuer's discovery document names another issuer");
  });
});
