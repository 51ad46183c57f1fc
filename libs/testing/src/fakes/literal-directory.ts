import type { Authentication, Grant, PrincipalDirectory, PrincipalRecord, TenantPolicy } from '@toolgate/contracts';

/** A role as the principals file writes it: a list of tools (no grants), or tools with standing grants. */
export type RoleConfig = readonly string[] | { readonly tools: readonly string[]; readonly grants: readonly Grant[] };

/** What a {@link LiteralDirectory} answers from; a part left out knows nothing. */
export interface DirectoryConfig {
  readonly tenants?: Readonly<Record<string, TenantPolicy>>;
  readonly roles?: Readonly<Record<string, RoleConfig>>;
  readonly principals?: readonly PrincipalRecord[];
}

/**
 * A principal directory from literal configuration, the shape of the principals file: what a
 * test states is all it knows (an unknown role, tenant or principal is `undefined`). No bearer
 * token authenticates; tests of authentication use the server's own directory.
 */
export class LiteralDirectory implements PrincipalDirectory {
  /** The configuration answered from, as given. */
  readonly config: Required<DirectoryConfig>;

  constructor(config: DirectoryConfig = {}) {
    this.config = { tenants: config.tenants ?? {}, roles: config.roles ?? {}, principals: config.principals ?? [] };
  }

  /** Always refused: a literal directory holds no tokens. */
  authenticate(): Promise<Authentication> {
    return Promise.resolve({ outcome: 'refused', reason: 'a literal directory holds no tokens' });
  }

  /** The configured principal of `tenant` with this id. */
  get(tenant: string, id: string): PrincipalRecord | undefined {
    return this.config.principals.find((p) => p.tenant === tenant && p.id === id);
  }

  /** Every configured principal of `tenant`, in the order given. */
  principals(tenant: string): readonly PrincipalRecord[] {
    return this.config.principals.filter((p) => p.tenant === tenant);
  }

  /** The role's tools; `hasOwn`, so `constructor` or `__proto__` is an unknown role. */
  roleTools(role: string): readonly string[] | undefined {
    const entry = this.role(role);
    return entry === undefined ? undefined : 'tools' in entry ? entry.tools : entry;
  }

  /** The role's standing grants: none for a role given as a plain tool list. */
  roleGrants(role: string): readonly Grant[] | undefined {
    const entry = this.role(role);
    return entry === undefined ? undefined : 'grants' in entry ? entry.grants : [];
  }

  /** The tenant's policy. */
  tenant(tenant: string): TenantPolicy | undefined {
    return Object.hasOwn(this.config.tenants, tenant) ? this.config.tenants[tenant] : undefined;
  }

  /** Every configured tenant name. */
  tenants(): readonly string[] {
    return Object.keys(this.config.tenants);
  }

  private role(role: string): RoleConfig | undefined {
    return Object.hasOwn(this.config.roles, role) ? this.config.roles[role] : undefined;
  }
}
