import { createHash, timingSafeEqual } from 'node:crypto';
import type { Authentication, Grant, Principal, PrincipalDirectory, PrincipalRecord, TenantPolicy } from '@toolgate/contracts';

/** A configured principal with the SHA-256 of its token (the token itself is never kept). */
export interface PrincipalEntry extends PrincipalRecord {
  readonly tokenSha256: Buffer;
}

/** A role as configured: the tools it may call and the standing grants it holds (ADR 0022). */
export interface RoleEntry {
  readonly tools: readonly string[];
  readonly grants: readonly Grant[];
}

export interface DirectoryData {
  readonly principals: readonly PrincipalEntry[];
  readonly roles: Readonly<Record<string, RoleEntry>>;
  readonly tenants: Readonly<Record<string, TenantPolicy>>;
}

export const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * The principals file as a `PrincipalDirectory`. Authentication hashes the presented token and
 * compares it with every principal's digest in constant time, without stopping at a match, so
 * response time says nothing about which or how many tokens exist.
 */
export class StaticPrincipalDirectory implements PrincipalDirectory {
  constructor(private data: DirectoryData) {}

  /**
   * Serves `data` from the next call on, in one assignment. Every method is synchronous, so each
   * answer comes from the old data or the new, never a mix (the reloader's step, ADR 0073).
   */
  replace(data: DirectoryData): void {
    this.data = data;
  }

  authenticate(bearerToken: string): Promise<Authentication> {
    const principal = this.principalOf(bearerToken);
    return Promise.resolve(principal ? { outcome: 'principal', principal } : { outcome: 'refused', reason: 'the token is not a principal\'s' });
  }

  /** The principal whose token this is, synchronously (the answer {@link authenticate} wraps). */
  principalOf(bearerToken: string): Principal | undefined {
    if (bearerToken.length === 0 || bearerToken.length > 4096) return undefined;
    const presented = sha256(bearerToken);
    let found: PrincipalEntry | undefined;
    for (const entry of this.data.principals) {
      if (timingSafeEqual(presented, entry.tokenSha256) && !found) found = entry;
    }
    return found ? { id: found.id, tenant: found.tenant, roles: found.roles } : undefined;
  }

  get(tenant: string, id: string): PrincipalRecord | undefined {
    const entry = this.data.principals.find((p) => p.tenant === tenant && p.id === id);
    return entry ? strip(entry) : undefined;
  }

  principals(tenant: string): readonly PrincipalRecord[] {
    return this.data.principals.filter((p) => p.tenant === tenant).map(strip);
  }

  roleTools(role: string): readonly string[] | undefined {
    return Object.hasOwn(this.data.roles, role) ? this.data.roles[role]?.tools : undefined;
  }

  roleGrants(role: string): readonly Grant[] | undefined {
    return Object.hasOwn(this.data.roles, role) ? this.data.roles[role]?.grants : undefined;
  }

  tenant(tenant: string): TenantPolicy | undefined {
    return Object.hasOwn(this.data.tenants, tenant) ? this.data.tenants[tenant] : undefined;
  }

  tenants(): readonly string[] {
    return Object.keys(this.data.tenants);
  }
}

function strip(entry: PrincipalEntry): PrincipalRecord {
  return { id: entry.id, tenant: entry.tenant, roles: entry.roles, ...(entry.budget ? { budget: entry.budget } : {}) };
}
