import { BuiltInRoles, type Denial, type Grant, type Permission, type Principal, type PrincipalDirectory, type TenantPolicy } from '@toolgate/contracts';
import { toolOf, type Call, type CallGate } from '../call.js';
import { deny } from '../denials/deny.js';

/** What the permissions gate reads: the standing grants of roles, and the role's tools (for the hint). */
export interface PermissionsNeeds {
  readonly directory: Pick<PrincipalDirectory, 'roleGrants' | 'roleTools'>;
}

/** Most grants one call may send (the API schema's bound too); more is refused, never scanned. */
const MAX_CALL_GRANTS = 32;
/** Longest `type` or `scope` of a call's grant (the API schema's bound for scope). */
const MAX_GRANT_FIELD = 256;
/** Most role names a hint lists, so a principal with many roles gets a readable answer. */
const MAX_HINT_ROLES = 8;

const BUILT_IN_ROLES: readonly string[] = Object.values(BuiltInRoles);

/**
 * Gate 5 (ADR 0022): every permission the manifest asks for is covered by a STANDING grant: one
 * an operator configured for one of the principal's roles, or for its tenant. A call's own
 * `grants` can only narrow that set: each must be covered by a standing grant, and then only
 * they count. A grant covers a permission of the same type with the exact scope, or with `*`.
 * The standing grants that covered the permissions are kept for the audit.
 */
export function permissionsGate({ directory }: PermissionsNeeds): CallGate {
  return {
    name: 'permissions',
    check(call) {
      const manifest = toolOf(call).manifest;
      const needed = manifest.permissions;
      const requested = call.request.grants;
      // The hot path: a tool that needs nothing, called without grants, has nothing to check.
      if (needed.length === 0 && requested === undefined) return undefined;

      const standing = standingGrants(call, directory);
      let effective = standing;
      if (requested !== undefined) {
        const parsed = parseCallGrants(requested);
        if (typeof parsed === 'string') return deny('permissions', 'PERMISSION_NOT_GRANTED', `This call's grants are malformed: ${parsed}.`, CALL_GRANTS_HINT);
        const notHeld = parsed.filter((g) => !standing.some((s) => covers(s, g)));
        if (notHeld.length > 0) return widening(call, directory, notHeld);
        effective = parsed;
      }

      const missing = needed.filter((p) => !effective.some((g) => covers(g, p)));
      if (missing.length > 0) return notGranted(call, directory, missing, standing, requested !== undefined);

      call.standingGrantsUsed = usedStanding(needed, effective, standing);
      return undefined;
    },
  };
}

const CALL_GRANTS_HINT = `Send grants as an array of at most ${MAX_CALL_GRANTS} objects {"type": string, "scope": string} with nothing else, or send no grants to use every standing grant.`;

/** Whether `grant` covers `wanted` (a permission, or a narrower grant). */
function covers(grant: Grant, wanted: Grant | Permission): boolean {
  return grant.type === wanted.type && (grant.scope === '*' || grant.scope === wanted.scope);
}

/**
 * The union of the grants of the principal's roles and of its tenant, as the operator configured
 * them. A role the directory does not know holds nothing, and neither do the built-in roles: they
 * are capabilities (deciding approvals, changing settings), not permissions.
 */
function standingGrants(call: Call, directory: PermissionsNeeds['directory']): Grant[] {
  return standingGrantsOf(call.principal, call.tenant, directory);
}

/** {@link standingGrants} of a principal outside a call (what `whoami` reports). */
export function standingGrantsOf(principal: Principal, tenant: TenantPolicy | undefined, directory: PermissionsNeeds['directory']): Grant[] {
  const standing: Grant[] = [];
  for (const role of principal.roles) {
    if (BUILT_IN_ROLES.includes(role)) continue;
    const grants = directory.roleGrants(role);
    if (grants) standing.push(...grants);
  }
  standing.push(...(tenant?.grants ?? []));
  return standing;
}

/**
 * Reads a call's grants as data, not as objects: an array of at most `MAX_CALL_GRANTS` plain
 * objects whose only own properties are the data properties `type` and `scope`, both non-empty
 * bounded strings. Anything else (inherited or accessor properties, `__proto__` keys, extra
 * members) is refused rather than ignored, since ignoring part of a narrowing would widen it.
 * Returns the grants, or what is wrong with them.
 */
function parseCallGrants(value: unknown): Grant[] | string {
  if (!Array.isArray(value)) return 'grants must be an array';
  if (value.length > MAX_CALL_GRANTS) return `a call may send at most ${MAX_CALL_GRANTS} grants, not ${value.length}`;
  const grants: Grant[] = [];
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    const shape = `grants[${i}] must be {"type": string, "scope": string} with nothing else`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return shape;
    const proto: unknown = Object.getPrototypeOf(item);
    if (proto !== Object.prototype && proto !== null) return shape;
    const keys = Reflect.ownKeys(item);
    if (keys.length !== 2 || !keys.includes('type') || !keys.includes('scope')) return shape;
    const type = Object.getOwnPropertyDescriptor(item, 'type');
    const scope = Object.getOwnPropertyDescriptor(item, 'scope');
    if (!type || !scope || !('value' in type) || !('value' in scope)) return shape;
    if (!boundedString(type.value) || !boundedString(scope.value)) {
      return `grants[${i}]: type and scope must be strings of 1 to ${MAX_GRANT_FIELD} characters`;
    }
    grants.push({ type: type.value, scope: scope.value });
  }
  return grants;
}

function boundedString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_GRANT_FIELD;
}

/** A call that asked for grants no standing grant covers: refused whatever the tool needs. */
function widening(call: Call, directory: PermissionsNeeds['directory'], notHeld: readonly Grant[]): Denial {
  const names = notHeld.map(label);
  return deny(
    'permissions',
    'PERMISSION_NOT_GRANTED',
    `A call's grants can only narrow the standing grants of its principal's roles and tenant, never widen them; ${call.principal.id} holds no standing grant covering ${names.join(', ')}.`,
    `Send only grants within your standing ones, or none to use all of them. ${operatorHint(call, directory, notHeld)}`,
    { notHeld: notHeld.map(({ type, scope }) => ({ type, scope })) },
  );
}

/** Permissions the effective grants do not cover: say whether the call narrowed them away. */
function notGranted(call: Call, directory: PermissionsNeeds['directory'], missing: readonly Permission[], standing: readonly Grant[], narrowed: boolean): Denial {
  const name = toolOf(call).manifest.name;
  const wanted = missing.map(({ type, scope }) => ({ type, scope }));
  const unheld = wanted.filter((p) => !standing.some((g) => covers(g, p)));
  const hint =
    unheld.length === 0
      ? `Your standing grants cover them, but this call's grants narrowed them away: include ${JSON.stringify(wanted)} in grants, or send no grants.`
      : operatorHint(call, directory, unheld);
  return deny(
    'permissions',
    'PERMISSION_NOT_GRANTED',
    `'${name}' needs permissions ${narrowed ? "this call's grants do not cover" : `${call.principal.id} holds no standing grant for`}: ${missing.map(label).join(', ')}.`,
    hint,
    { missing: wanted },
  );
}

/**
 * Where an operator would grant `grants`: the principals-file setting of the caller's roles that
 * hold the tool (else all its roles), or the tenant's. Names roles and the tenant only: no paths.
 */
function operatorHint(call: Call, directory: PermissionsNeeds['directory'], grants: readonly Grant[]): string {
  const tool = toolOf(call).manifest.name;
  const own = call.principal.roles.filter((r) => !BUILT_IN_ROLES.includes(r) && directory.roleTools(r) !== undefined);
  const holding = own.filter((r) => {
    const tools = directory.roleTools(r) ?? [];
    return tools.includes('*') || tools.includes(tool);
  });
  const where = (holding.length > 0 ? holding : own).slice(0, MAX_HINT_ROLES).map((r) => `roles.${r.slice(0, 64)}.grants`);
  const target = where.length > 0 ? `${where.join(' or ')} (or tenants.${call.principal.tenant.slice(0, 64)}.grants)` : `tenants.${call.principal.tenant.slice(0, 64)}.grants`;
  const roles = call.principal.roles.slice(0, MAX_HINT_ROLES).map((r) => r.slice(0, 64));
  const more = call.principal.roles.length > MAX_HINT_ROLES ? ', …' : '';
  const json = grants.map(({ type, scope }) => JSON.stringify({ type, scope })).join(', ');
  return `An operator can add ${json} to ${target} in the principals file; this principal's roles: ${roles.length > 0 ? roles.join(', ') + more : 'none'}.`;
}

/**
 * The standing grants the call relies on, as `type:scope`: for each permission, the effective
 * grant that covers it and then the standing grant that covers that one (itself, without call
 * grants). Coverage is transitive, so one always exists once the permissions are covered.
 */
function usedStanding(needed: readonly Permission[], effective: readonly Grant[], standing: readonly Grant[]): string[] {
  const used = new Set<string>();
  for (const permission of needed) {
    const via = effective.find((g) => covers(g, permission));
    const held = via && standing.find((s) => covers(s, via));
    if (held) used.add(label(held));
  }
  return [...used];
}

function label(grant: Grant | Permission): string {
  return `${grant.type.slice(0, 64)}:${grant.scope.slice(0, 256)}`;
}
