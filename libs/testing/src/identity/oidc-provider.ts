import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type Provider from 'oidc-provider';

/** A client of the test provider and the claims its tokens carry (beside `sub`, which is its id). */
export interface TestOidcClient {
  readonly id: string;
  readonly secret: string;
  /** Extra access-token claims, e.g. `{ tenant: 'acme', roles: ['worker'] }`. */
  readonly claims: Record<string, unknown>;
}

/** A real OpenID provider (`oidc-provider`, certified) on loopback, for identity tests. */
export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>`: what tokens carry as `iss`. */
  readonly issuer: string;
  /** The kid tokens are signed with now. */
  readonly kid: string;
  /**
   * An access token through a real grant: client credentials at the token endpoint, for
   * `resource` (the token's `aud`, RFC 8707) and `scope`.
   */
  token(client: string, options: { readonly resource: string; readonly scope?: string }): Promise<string>;
  /**
   * A JWT signed with the provider's current key, with exactly these claims and header fields:
   * for hostile cases a grant cannot produce (expired, not yet valid, another issuer).
   */
  sign(claims: JWTPayload, header?: Record<string, unknown>): Promise<string>;
  /** The public key of the current signing key, as published in the JWKS. */
  publicJwk(): JWK;
  /**
   * Replaces the signing key with a new one and serves only it, on the same port: under a new kid,
   * or (`sameKid`) under the kid of the key it replaces, as a provider restarted with fresh keys does.
   */
  rotateKeys(options?: { readonly sameKid?: boolean }): Promise<void>;
  /** How many times the JWKS was fetched. */
  jwksFetches(): number;
  close(): Promise<void>;
}

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly privateJwk: JWK;
  readonly publicJwk: JWK;
}

async function newKey(n: number): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `test-key-${n}`;
  return keyOf(kid, privateKey, publicKey);
}

async function keyOf(kid: string, privateKey: CryptoKey, publicKey: CryptoKey): Promise<SigningKey> {
  return {
    kid,
    privateKey,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' },
  };
}

/**
 * Starts the provider on a loopback port with `clients`. Access tokens are JWTs (RS256) whose
 * `aud` is the requested resource; the clients' claims are added to them. The provider's own
 * notices about its development defaults are left on stderr.
 */
export async function startOidcProvider(clients: readonly TestOidcClient[], options: { readonly port?: number } = {}): Promise<TestOidcProvider> {
  // Loaded here, not at the top: every suite that imports @toolgate/testing would otherwise load
  // the provider (and print its Node-version notice) whether it starts one or not.
  const { default: OidcProvider } = await import('oidc-provider');
  let keyCount = 1;
  let key = await newKey(keyCount);
  let fetches = 0;
  // One HTTP server for the provider's whole life, so the issuer (its port) survives a rotation.
  let callback: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/jwks')) fetches++;
    callback!(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const byId = new Map(clients.map((c) => [c.id, c]));

  const build = (signing: SigningKey) => {
    const provider = new OidcProvider(issuer, {
      clients: clients.map((c) => ({ client_id: c.id, client_secret: c.secret, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] })),
      jwks: { keys: [signing.privateJwk] },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          // Any resource the client names: a test asks for another audience to be refused by Toolgate.
          defaultResource: () => undefined as unknown as string,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => ({
            scope: 'tools:read tools:call approvals:decide toolgate:admin',
            audience: resource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 600,
            jwt: { sign: { alg: 'RS256' } },
          }),
        },
      },
      extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => ({ ...(byId.get(token.clientId ?? '')?.claims ?? {}) }),
    } as ConstructorParameters<typeof Provider>[1]);
    callback = provider.callback() as (req: IncomingMessage, res: ServerResponse) => void;
  };
  build(key);

  return {
    issuer,
    get kid() {
      return key.kid;
    },
    async token(clientId, options) {
      const client = byId.get(clientId);
      if (!client) throw new Error(`no test client ${clientId}`);
      const body = new URLSearchParams({ grant_type: 'client_credentials', resource: options.resource, ...(options.scope ? { scope: options.scope } : {}) });
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` },
        body,
      });
      const answer = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!answer.access_token) throw new Error(`token endpoint answered ${res.status}: ${answer.error ?? ''} ${answer.error_description ?? ''}`);
      return answer.access_token;
    },
    sign(claims, header = {}) {
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, ...header } as { alg: string }).sign(key.privateKey);
    },
    publicJwk: () => key.publicJwk,
    async rotateKeys(options = {}) {
      if (options.sameKid) {
        const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
        key = await keyOf(key.kid, privateKey, publicKey);
      } else {
        key = await newKey(++keyCount);
      }
      build(key);
    },
    jwksFetches: () => fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
