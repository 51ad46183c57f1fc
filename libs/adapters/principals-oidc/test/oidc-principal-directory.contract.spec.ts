import type { Principal } from '@toolgate/contracts';
import { LiteralDirectory, LoopbackHttpClient, startOidcProvider, testPrincipalDirectory } from '@toolgate/testing';
import { OidcPrincipalDirectory } from '../src/index.js';

const AUDIENCE = 'http://127.0.0.1:8765/mcp';

// The port's shared contract, with credentials from a real grant: client credentials at a real
// OpenID provider on loopback, one client per principal.
testPrincipalDirectory('OIDC JWTs (oidc-provider, client credentials)', async (policy, principals) => {
  const op = await startOidcProvider(principals.map((p) => ({ id: p.id, secret: `${p.id}-secret-0123456789abcdef`, claims: { tenant: p.tenant, roles: p.roles } })));
  const directory = new OidcPrincipalDirectory({
    issuer: op.issuer,
    audience: AUDIENCE,
    idClaim: 'sub',
    tenantClaim: 'tenant',
    rolesClaim: 'roles',
    algorithms: ['RS256'],
    clockSkewSeconds: 30,
    http: new LoopbackHttpClient(),
    policy: new LiteralDirectory({ roles: policy.roles, tenants: policy.tenants }),
  });
  return { directory, credential: (p: Principal) => op.token(p.id, { resource: AUDIENCE }), close: () => op.close() };
});
