import { testPrincipalDirectory } from '@toolgate/testing';
import { sha256, StaticPrincipalDirectory } from '../src/static-principal-directory.js';

// The principals file's directory under the port's shared contract; each principal's token is
// made from its id, as an operator would write one per principal.
const tokenOf = (id: string) => `${id}-token-0123456789abcdef`;

testPrincipalDirectory('principals file', async (policy, principals) => ({
  directory: new StaticPrincipalDirectory({
    principals: principals.map((p) => ({ ...p, tokenSha256: sha256(tokenOf(p.id)) })),
    roles: policy.roles,
    tenants: policy.tenants,
  }),
  credential: async (p) => tokenOf(p.id),
}));
