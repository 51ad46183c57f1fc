import type { Grant, Principal, PrincipalRecord, TenantPolicy } from './principal.js';
import { token, type Token } from './token.js';

/**
 * Resolves bearer tokens to principals and answers who may call what. Tokens are compared in
 * constant time; the directory never returns or logs a token.
 */
export interface PrincipalDirectory {
  /** The principal holding this bearer token, or undefined. */
  authenticate(bearerToken: string): Principal | undefined;
  /** A configured principal by tenant and id. */
  get(tenant: string, id: string): PrincipalRecord | undefined;
  /** Every principal of a tenant, for delegation hints and the team roster. */
  principals(tenant: string): readonly PrincipalRecord[];
  /** Tool names a role grants (`*` = all the tenant allows); undefined for an unknown role. */
  roleTools(role: string): readonly string[] | undefined;
  /**
   * The standing grants a role holds (operator-configured; ADR 0022); undefined for an unknown
   * role. The gateway gives the built-in `approver` and `operator` roles none, whatever this says.
   */
  roleGrants(role: string): readonly Grant[] | undefined;
  /** The tenant's policy, or undefined for an unknown tenant (which allows nothing). */
  tenant(tenant: string): TenantPolicy | undefined;
  /** Every configured tenant name. */
  tenants(): readonly string[];
}
/** The directory `apps/server` builds from the principals file (or the demo principals). */
export const PrincipalDirectoryToken: Token<PrincipalDirectory> = token('PrincipalDirectory');
