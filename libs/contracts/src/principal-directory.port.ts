import type { Grant, Principal, PrincipalRecord, TenantPolicy } from './principal.js';
import { token, type Token } from './token.js';

/**
 * What a presented bearer token came to (ADR 0074). A refusal's `reason` is a short sentence for
 * the caller (the 401's `error_description`): it never quotes the token or any part of it.
 */
export type Authentication =
  /** The token is a principal's. */
  | { readonly outcome: 'principal'; readonly principal: Principal }
  /** The token is no principal's: unknown, malformed, expired, for another audience (401 `invalid_token`). */
  | { readonly outcome: 'refused'; readonly reason: string }
  /**
   * Whether the token is valid cannot be told now (the identity provider's keys cannot be
   * fetched): the call fails closed with 503, and the client may try again.
   */
  | { readonly outcome: 'unavailable'; readonly reason: string };

/**
 * Resolves bearer tokens to principals and answers who may call what. The directory never returns
 * or logs a token. Authentication is asynchronous (a JWT directory may fetch its issuer's keys);
 * everything else is a synchronous answer from the policy it holds.
 */
export interface PrincipalDirectory {
  /**
   * What this bearer token comes to. Never throws and never waits without bound: a directory that
   * cannot decide answers `unavailable` within its own time limit.
   */
  authenticate(bearerToken: string): Promise<Authentication>;
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
