import { startOidcProvider } from '@toolgate/testing';

/**
 * `npm run oidc:dev`: a local OpenID provider (oidc-provider, the suite's own fixture) for trying
 * `TOOLGATE_PRINCIPALS=oidc` on a laptop, as docs/identity.md shows. Development only: keys live
 * in memory, and the clients and their secrets are the ones printed below.
 */
const port = Number(process.env['OIDC_DEV_PORT'] ?? 4444);
const clients = [
  { id: 'agent-1', secret: 'agent-1-secret-change-me', claims: { tenant: 'default', roles: ['worker'] } },
  { id: 'approver-1', secret: 'approver-1-secret-change-me', claims: { tenant: 'default', roles: ['worker', 'approver'] } },
];
const provider = await startOidcProvider(clients, { port });
console.log(`OIDC dev provider: issuer ${provider.issuer}`);
console.log(`token endpoint: ${provider.issuer}/token (client credentials; pass resource=<the server's TOOLGATE_OIDC_AUDIENCE>)`);
for (const c of clients) console.log(`client ${c.id} / ${c.secret}: ${JSON.stringify(c.claims)}`);
const stop = () => void provider.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
