import type { Principal, PrincipalDirectory, TenantPolicy, ToolDefinition } from '@toolgate/contracts';

/**
 * Who may call what: the tenant's allowlist intersected with the union of the principal's roles.
 * A role the directory does not know grants nothing; `*` in a role grants everything the tenant
 * allows; `*` in the tenant allows every registered tool; an unknown tenant allows nothing.
 */
export class ToolAccess {
  constructor(private readonly directory: PrincipalDirectory) {}

  /** Whether `principal` may call `tool`. */
  mayUse(principal: Principal, tool: string, tenant: TenantPolicy | undefined = this.directory.tenant(principal.tenant)): boolean {
    return tenantAllows(tenant, tool) && this.#rolesAllow(principal.roles, tool);
  }

  /**
   * The names of the tools `principal` may call, in the order its roles list them (a `*` role
   * contributes the registry's order), restricted to registered tools.
   */
  toolsOf(principal: Principal, registered: readonly ToolDefinition[]): string[] {
    const tenant = this.directory.tenant(principal.tenant);
    if (!tenant) return [];
    const known = new Set(registered.map((d) => d.manifest.name));
    const names = new Set<string>();
    for (const role of principal.roles) {
      const tools = this.directory.roleTools(role);
      if (!tools) continue;
      const expanded = tools.includes('*') ? [...known] : tools;
      for (const name of expanded) if (known.has(name) && tenantAllows(tenant, name)) names.add(name);
    }
    return [...names];
  }

  /** Other principals of the same tenant who may call `tool`: whom to delegate to. */
  holdersOf(principal: Principal, tool: string): string[] {
    const tenant = this.directory.tenant(principal.tenant);
    if (!tenantAllows(tenant, tool)) return [];
    return this.directory
      .principals(principal.tenant)
      .filter((p) => p.id !== principal.id && p.tenant === principal.tenant && this.#rolesAllow(p.roles, tool))
      .map((p) => p.id);
  }

  #rolesAllow(roles: readonly string[], tool: string): boolean {
    for (const role of roles) {
      const tools = this.directory.roleTools(role);
      if (tools && (tools.includes('*') || tools.includes(tool))) return true;
    }
    return false;
  }
}

function tenantAllows(tenant: TenantPolicy | undefined, tool: string): boolean {
  return tenant !== undefined && (tenant.tools.includes('*') || tenant.tools.includes(tool));
}
