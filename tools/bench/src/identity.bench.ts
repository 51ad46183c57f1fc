import { sha256, StaticPrincipalDirectory } from '@toolgate/adapter-principals-file';
import { OidcPrincipalDirectory } from '@toolgate/adapter-principals-oidc';
import type { PrincipalDirectory } from '@toolgate/contracts';
import { LiteralDirectory, LoopbackHttpClient, startOidcProvider } from '@toolgate/testing';
import { target, type BenchLine } from './targets.js';

const WARMUP = 300;
const CALLS = 3_000;
const PRINCIPALS = 100;
/** A JWT check is a signature verification; the file's is a hash and 100 constant-time compares. */
const TARGET_OIDC_US = 500;
const AUDIENCE = 'http://127.0.0.1:8765/mcp';

/**
 * Per-call cost of authentication: the principals file's directory (100 principals; SHA-256 of
 * the token and a constant-time compare with each) against the OIDC directory with a warm key
 * cache (RS256 verification with jose, claim checks), both through the port's `authenticate`.
 * Calls alternate between the two so machine noise hits both alike. The OIDC directory's tokens
 * come from a real provider on loopback; the key set is fetched once, before timing.
 * Target: an OIDC check under 500 µs; the ratio to the file is printed.
 */
export async function bench(): Promise<BenchLine[]> {
  const roles = { worker: { tools: ['calculator'], grants: [] } };
  const tenants = { acme: { tools: ['*'], selfApproval: false, grants: [] } };
  const ids = Array.from({ length: PRINCIPALS }, (_, i) => `agent-${i}`);
  const file = new StaticPrincipalDirectory({
    principals: ids.map((id) => ({ id, tenant: 'acme', roles: ['worker'], tokenSha256: sha256(`${id}-token-0123456789abcdef`) })),
    roles,
    tenants,
  });
  const op = await startOidcProvider([{ id: 'agent-7', secret: 'agent-7-secret-0123456789abcdef', claims: { tenant: 'acme', roles: ['worker'] } }]);
  try {
    const oidc = new OidcPrincipalDirectory({
      issuer: op.issuer,
      audience: AUDIENCE,
      idClaim: 'sub',
      tenantClaim: 'tenant',
      rolesClaim: 'roles',
      algorithms: ['RS256'],
      clockSkewSeconds: 30,
      http: new LoopbackHttpClient(),
      policy: new LiteralDirectory({ roles, tenants }),
    });
    const jwt = await op.token('agent-7', { resource: AUDIENCE });
    const fileToken = 'agent-7-token-0123456789abcdef';
    const check = async (directory: PrincipalDirectory, token: string) => {
      const found = await directory.authenticate(token);
      if (found.outcome !== 'principal' || found.principal.id !== 'agent-7') throw new Error(`authentication failed: ${found.outcome}`);
    };
    for (let i = 0; i < WARMUP; i++) {
      await check(file, fileToken);
      await check(oidc, jwt);
    }
    let fileNs = 0n;
    let oidcNs = 0n;
    for (let i = 0; i < CALLS; i++) {
      let t = process.hrtime.bigint();
      await check(file, fileToken);
      fileNs += process.hrtime.bigint() - t;
      t = process.hrtime.bigint();
      await check(oidc, jwt);
      oidcNs += process.hrtime.bigint() - t;
    }
    const fileUs = Number(fileNs) / CALLS / 1000;
    const oidcUs = Number(oidcNs) / CALLS / 1000;
    return [
      `principals file (${PRINCIPALS} principals): ${fileUs.toFixed(1)} µs per call`,
      `OIDC JWT, RS256, warm key cache: ${oidcUs.toFixed(1)} µs per call (${(oidcUs / fileUs).toFixed(1)}× the file)`,
      target('OIDC JWT check per call', oidcUs, '<', TARGET_OIDC_US, ' µs', 1),
    ];
  } finally {
    await op.close();
  }
}
