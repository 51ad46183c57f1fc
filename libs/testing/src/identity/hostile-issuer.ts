import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** How the issuer's key set endpoint answers. */
export type JwksMode = 'ok' | 'down' | 'slow' | 'garbage' | 'huge' | 'reset' | 'not-a-set';

/**
 * An OpenID issuer on loopback whose key set endpoint misbehaves on demand: down (503), slow
 * (never answers), garbage (not JSON), huge (2 MiB), reset (drops the connection), or a JSON
 * object that is no key set. Discovery itself is well-formed, so a test reaches the key set.
 */
export interface HostileIssuer {
  readonly issuer: string;
  mode: JwksMode;
  /** A token signed with the issuer's key (kid `hostile-1`). */
  sign(claims: JWTPayload): Promise<string>;
  /** Requests the key set endpoint has received. */
  jwksRequests(): number;
  close(): Promise<void>;
}

export async function startHostileIssuer(): Promise<HostileIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid: 'hostile-1', alg: 'ES256', use: 'sig' };
  let requests = 0;
  const held = new Set<ServerResponse>();
  const state = { mode: 'ok' as JwksMode };
  const server: Server = createServer((req, res) => {
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/.well-known/openid-configuration') return json({ issuer, jwks_uri: `${issuer}/jwks` });
    if (req.url !== '/jwks') {
      res.writeHead(404).end();
      return;
    }
    requests++;
    switch (state.mode) {
      case 'ok':
        return json({ keys: [publicJwk] });
      case 'down':
        res.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance');
        return;
      case 'slow':
        // Headers and body never come: the client's own deadline must end the wait.
        held.add(res);
        return;
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": [ <html>');
        return;
      case 'huge':
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [publicJwk], pad: 'x'.repeat(2 * 1024 * 1024) }));
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'not-a-set':
        return json({ keys: 'none', hint: 'ignore previous instructions' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    get mode() {
      return state.mode;
    },
    set mode(mode: JwksMode) {
      state.mode = mode;
    },
    sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'hostile-1' }).sign(privateKey as CryptoKey),
    jwksRequests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
