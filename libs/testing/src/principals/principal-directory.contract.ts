import type { Grant, Principal, PrincipalDirectory, TenantPolicy } from '@toolgate/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The policy every adapter under the suite is built with: the principals file's roles and tenants. */
export interface DirectoryPolicy {
  readonly roles: Readonly<Record<string, { readonly tools: readonly string[]; readonly grants: readonly Grant[] }>>;
  readonly tenants: Readonly<Record<string, TenantPolicy>>;
}

/** One adapter built for the suite, and how to get a valid credential for each of its principals. */
export interface DirectoryUnderTest {
  readonly directory: PrincipalDirectory;
  /** A bearer credential that is `principal`'s (one of those the factory was given). */
  credential(principal: Principal): Promise<string>;
  close?(): Promise<void>;
}

export const CONTRACT_POLICY: DirectoryPolicy = {
  roles: {
    worker: { tools: ['calculator', 'http_fetch'], grants: [] },
    reviewer: { tools: ['calculator'], grants: [{ type: 'net', scope: 'example.com' }] },
  },
  tenants: {
    acme: { tools: ['*'], selfApproval: false, grants: [] },
    globex: { tools: ['calculator'], selfApproval: true, grants: [{ type: 'exec', scope: 'git' }] },
  },
};

export const CONTRACT_PRINCIPALS: readonly Principal[] = [
  { id: 'alice', tenant: 'acme', roles: ['worker'] },
  { id: 'bob', tenant: 'acme', roles: ['worker', 'reviewer'] },
  { id: 'gina', tenant: 'globex', roles: [] },
];

/**
 * The contract of the `PrincipalDirectory` port, for every adapter (the principals file, an
 * OpenID issuer's JWTs): authentication answers and never throws, whatever is presented; a
 * refusal's reason never quotes the token; the policy lookups are exact and prototype-safe.
 */
export function testPrincipalDirectory(name: string, factory: (policy: DirectoryPolicy, principals: readonly Principal[]) => Promise<DirectoryUnderTest>): void {
  describe(`PrincipalDirectory contract: ${name}`, () => {
    let t: DirectoryUnderTest;
    beforeAll(async () => {
      t = await factory(CONTRACT_POLICY, CONTRACT_PRINCIPALS);
    });
    afterAll(async () => t?.close?.());

    it("authenticates each principal's credential as that principal, roles and tenant included", async () => {
      for (const p of CONTRACT_PRINCIPALS) {
        const found = await t.directory.authenticate(await t.credential(p));
        expect(found.outcome).toBe('principal');
        if (found.outcome !== 'principal') continue;
        expect({ id: found.principal.id, tenant: found.principal.tenant, roles: [...found.principal.roles].sort() }).toEqual({ id: p.id, tenant: p.tenant, roles: [...p.roles].sort() });
      }
    });

    it('refuses, without throwing, what is no credential: empty, spaces, 100 KB, control characters, random text', async () => {
      const presented = ['', ' ', 'x'.repeat(100_000), 'a\u0000b', '\u202etoken', 'demo', 'Bearer abc', 'a.b.c', '..', 'eyJhbGciOiJub25lIn0.e30.'];
      for (const bad of presented) {
        const found = await t.directory.authenticate(bad);
        expect(found.outcome, JSON.stringify(bad.slice(0, 30))).toBe('refused');
      }
    });

    it('refuses a credential changed in one character, anywhere, and never quotes it in the reason', async () => {
      const good = await t.credential(CONTRACT_PRINCIPALS[0]!);
      for (const at of [0, Math.floor(good.length / 2), good.length - 1]) {
        const flipped = good.slice(0, at) + (good[at] === 'A' ? 'B' : 'A') + good.slice(at + 1);
        const found = await t.directory.authenticate(flipped);
        expect(found.outcome).toBe('refused');
        if (found.outcome === 'refused') {
          for (let i = 0; i + 12 <= good.length; i += 6) expect(found.reason).not.toContain(good.slice(i, i + 12));
        }
      }
    });

    it('answers many authentications at once, each correctly', async () => {
      const credentials = await Promise.all(CONTRACT_PRINCIPALS.map((p) => t.credential(p)));
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => t.directory.authenticate(i % 4 === 3 ? 'nobody-at-all' : credentials[i % 3]!)));
      answers.forEach((a, i) => {
        if (i % 4 === 3) expect(a.outcome).toBe('refused');
        else expect(a.outcome === 'principal' && a.principal.id).toBe(CONTRACT_PRINCIPALS[i % 3]!.id);
      });
    });

    it('knows an authenticated principal by tenant and id, and only in its own tenant', async () => {
      const alice = CONTRACT_PRINCIPALS[0]!;
      await t.directory.authenticate(await t.credential(alice));
      expect(t.directory.get('acme', 'alice')).toMatchObject({ id: 'alice', tenant: 'acme' });
      expect(t.directory.get('globex', 'alice')).toBeUndefined();
      expect(t.directory.get('acme', 'nobody')).toBeUndefined();
      expect(t.directory.principals('acme').map((p) => p.id)).toContain('alice');
      expect(t.directory.principals('globex').map((p) => p.id)).not.toContain('alice');
    });

    it("answers the policy's roles and tenants exactly, and nothing for prototype names", () => {
      expect(t.directory.roleTools('worker')).toEqual(['calculator', 'http_fetch']);
      expect(t.directory.roleGrants('reviewer')).toEqual([{ type: 'net', scope: 'example.com' }]);
      expect(t.directory.tenant('globex')).toEqual(CONTRACT_POLICY.tenants['globex']);
      expect([...t.directory.tenants()].sort()).toEqual(['acme', 'globex']);
      for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'nobody']) {
        expect(t.directory.roleTools(name)).toBeUndefined();
        expect(t.directory.roleGrants(name)).toBeUndefined();
        expect(t.directory.tenant(name)).toBeUndefined();
      }
    });
  });
}
