/** Who is calling: resolved from a bearer token before any gate runs. */
export interface Principal {
  readonly id: string;
  readonly tenant: string;
  readonly roles: readonly string[];
  /**
   * Who vouched for it: the OpenID issuer of its token (ADR 0074). Absent for a principal of the
   * principals file, whose token the gateway itself holds.
   */
  readonly issuer?: string;
  /**
   * The Toolgate scopes its token carries, when scopes are checked (`TOOLGATE_OIDC_SCOPES=on`,
   * ADR 0075); absent, the token may ask for any call its roles allow.
   */
  readonly scopes?: readonly string[];
}

/** How many calls a principal may make per window. Absent means unlimited. */
export interface BudgetPolicy {
  readonly calls: number;
  readonly windowSeconds: number;
}

/** A principal as configured, with its budget. */
export interface PrincipalRecord extends Principal {
  readonly budget?: BudgetPolicy;
}

/** What a tenant allows, whatever its principals' roles say. */
export interface TenantPolicy {
  /** Tool names the tenant allows; `*` allows every registered tool. */
  readonly tools: readonly string[];
  /** Whether an approver may approve its own requests (audited as a self-approval). */
  readonly selfApproval: boolean;
  /**
   * Standing grants every principal of this tenant holds, beside its roles' grants (ADR 0022).
   * Operator-configured; a call's own `grants` can only narrow them.
   */
  readonly grants: readonly Grant[];
}

/**
 * A permission: `type` and an exact `scope` or `*`. Standing grants (a role's or a tenant's) are
 * configured by an operator; a call's `grants` only narrow them, never widen (ADR 0022).
 */
export interface Grant {
  readonly type: string;
  readonly scope: string;
}

/** Built-in role names that carry capabilities whatever the roles map says. */
export const BuiltInRoles = {
  /** Decides approval requests of its own tenant. */
  approver: 'approver',
  /** Changes its tenant's settings and reads its tenant's whole audit. */
  operator: 'operator',
  /**
   * Reviews and accepts changed tool definitions, for every tenant: pins are global, since every
   * tenant is served the same source (ADR 0060). Not implied by `operator`, whose reach is one tenant.
   */
  admin: 'admin',
} as const;
